//! JSON-RPC over stdin and stdout, one message a line, with an answer for
//! every line that asked something.
//!
//! The SDK's own stdio transport drops a line that is not JSON, and any
//! line over 16 MiB, without a word: the client then waits for an answer
//! that never comes. This one answers as JSON-RPC says: a line that is not
//! JSON gets a parse error (-32700), JSON that is not a message an invalid
//! request (-32600) with the request's id where it has one, and a line over
//! [`MAX_MESSAGE`] (room for a 1 GiB `write`, the most fsview writes) an
//! invalid request naming the limit, with the id found at the line's start
//! or end (where SDKs put it). A notification (no id) that is not
//! understood gets no answer, as JSON-RPC wants.

use std::future::Future;
use std::sync::Arc;

use rmcp::model::{ErrorData, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The longest message taken: a 1 GiB `write` (fsview's largest file) and
/// room for its escapes and envelope.
pub const MAX_MESSAGE: usize = (1 << 30) + (64 << 20);

/// How much of an oversized line's start and end is kept to find its id.
const KEEP: usize = 64 * 1024;

pub struct Stdio<R, W> {
    read: BufReader<R>,
    /// The line being read (kept across a cancelled `receive`).
    line: Vec<u8>,
    /// The end of a line past the limit, while the rest is skipped.
    over: Option<Vec<u8>>,
    max: usize,
    write: Arc<Mutex<W>>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> Stdio<R, W> {
    pub fn new(read: R, write: W) -> Self {
        Stdio {
            read: BufReader::new(read),
            line: Vec::new(),
            over: None,
            max: MAX_MESSAGE,
            write: Arc::new(Mutex::new(write)),
        }
    }

    /// A smaller limit, for tests.
    pub fn with_max(mut self, max: usize) -> Self {
        self.max = max;
        self
    }
}

enum Line {
    Whole,
    /// Past the limit: the line's id, if its start or end shows one.
    Over(Option<RequestId>),
    End,
}

impl<R: AsyncRead + Unpin + Send, W: AsyncWrite + Unpin + Send + 'static> Stdio<R, W> {
    /// Read one line into `self.line`, never more than the limit. Safe to
    /// cancel: what was read stays in `self.line` (or `self.over`).
    async fn read_line(&mut self) -> Line {
        loop {
            let (used, done) = {
                let got = match self.read.fill_buf().await {
                    Ok(b) => b,
                    Err(_) => return Line::End,
                };
                if got.is_empty() {
                    return Line::End;
                }
                let nl = got.iter().position(|&b| b == b'\n');
                let take = nl.map_or(got.len(), |i| i + 1);
                match &mut self.over {
                    Some(tail) => {
                        tail.extend_from_slice(&got[..take]);
                        if tail.len() > 2 * KEEP {
                            tail.drain(..tail.len() - KEEP);
                        }
                    }
                    None if self.line.len() + take > self.max => {
                        // Keep the line's start (its id may be there) and
                        // its end from here on.
                        let room = KEEP.saturating_sub(self.line.len());
                        self.line.extend_from_slice(&got[..take.min(room)]);
                        self.line.truncate(KEEP);
                        self.over = Some(got[..take].to_vec());
                    }
                    None => self.line.extend_from_slice(&got[..take]),
                }
                (take, nl.is_some())
            };
            self.read.consume(used);
            if done {
                return match self.over.take() {
                    Some(tail) => {
                        let id = id_at_start(&self.line).or_else(|| id_at_end(&tail));
                        self.line.clear();
                        Line::Over(id)
                    }
                    None => Line::Whole,
                };
            }
        }
    }

    /// Send an error answer, from a task of its own (`receive` may be
    /// cancelled at any await).
    fn answer(&self, error: ErrorData, id: Option<RequestId>) {
        let msg = TxJsonRpcMessage::<RoleServer>::error(error, id);
        let write = self.write.clone();
        tokio::spawn(async move {
            let _ = write_message(&write, &msg).await;
        });
    }
}

async fn write_message<W: AsyncWrite + Unpin>(
    write: &Mutex<W>,
    msg: &TxJsonRpcMessage<RoleServer>,
) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec(msg).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    let mut w = write.lock().await;
    w.write_all(&bytes).await?;
    w.flush().await
}

impl<R, W> Transport<RoleServer> for Stdio<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        async move { write_message(&write, &item).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.read_line().await {
                Line::End => return None,
                Line::Over(id) => {
                    self.answer(
                        ErrorData::invalid_request(
                            format!(
                                "the message is over {}, the most fsview-mcp takes (a write of up to 1 GiB); send less",
                                size(self.max)
                            ),
                            None,
                        ),
                        id,
                    );
                    continue;
                }
                Line::Whole => {}
            }
            let line = std::mem::take(&mut self.line);
            let mut text = line.strip_suffix(b"\n").unwrap_or(&line);
            text = text.strip_suffix(b"\r").unwrap_or(text);
            text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
            if text.trim_ascii().is_empty() {
                continue;
            }
            let parsed = serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(text);
            let err = match parsed {
                Ok(m) => {
                    self.line = line;
                    self.line.clear();
                    // A tools/call the SDK could not read as one comes as a
                    // request of an unknown method: said as what it is.
                    if let Some((why, id)) = bad_tool_call(&m) {
                        self.answer(ErrorData::invalid_params(why, None), Some(id));
                        continue;
                    }
                    return Some(m);
                }
                Err(e) => e,
            };
            match serde_json::from_slice::<Value>(text) {
                Err(e) => self.answer(ErrorData::parse_error(format!("not JSON: {e}"), None), None),
                // A notification asks for no answer, even a wrong one.
                Ok(v) if v.get("id").is_none() && v.get("method").is_some() => {}
                Ok(v) => {
                    let id = v.get("id").and_then(request_id);
                    self.answer(
                        ErrorData::invalid_request(format!("not a JSON-RPC message: {err}"), None),
                        id,
                    );
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.lock().await.flush().await
    }
}

/// What is wrong with a `tools/call` the SDK took for a request of an
/// unknown method (its params not a tool's name and arguments), and its id.
fn bad_tool_call(m: &RxJsonRpcMessage<RoleServer>) -> Option<(String, RequestId)> {
    use rmcp::model::{ClientRequest, JsonRpcMessage};
    let JsonRpcMessage::Request(r) = m else {
        return None;
    };
    let ClientRequest::CustomRequest(c) = &r.request else {
        return None;
    };
    if c.method != "tools/call" {
        return None;
    }
    let why = match &c.params {
        Some(Value::Object(p)) => match (p.get("name"), p.get("arguments")) {
            (Some(Value::String(_)), Some(a)) if !a.is_object() && !a.is_null() => {
                "tools/call: params.arguments must be an object of the tool's arguments"
            }
            (Some(Value::String(_)), _) => "tools/call: its params are not a tool call",
            (None, _) => "tools/call: params.name is missing; name the tool to call",
            (Some(_), _) => "tools/call: params.name must be the tool's name, a string",
        },
        _ => "tools/call: params must be an object with the tool's name and arguments",
    };
    Some((why.to_string(), r.id.clone()))
}

fn size(n: usize) -> String {
    if n >= 1 << 20 {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
}

fn request_id(v: &Value) -> Option<RequestId> {
    match v {
        Value::Number(n) => n.as_i64().map(RequestId::Number),
        Value::String(s) => Some(RequestId::String(s.as_str().into())),
        _ => None,
    }
}

/// The `"id"` of a JSON object from the first bytes of its text: the keys
/// at the top level, in order, until `id` or the bytes run out.
fn id_at_start(b: &[u8]) -> Option<RequestId> {
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(b, i);
        let (key, after) = string_at(b, i)?;
        i = skip_ws(b, after);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        let end = value_end(b, i)?;
        if key == b"id" {
            return serde_json::from_slice::<Value>(&b[i..end])
                .ok()
                .as_ref()
                .and_then(request_id);
        }
        i = skip_ws(b, end);
        match b.get(i) {
            Some(b',') => i += 1,
            _ => return None,
        }
    }
}

/// The `"id"` of a JSON object whose text ends with it (`..., "id": 7}`), as
/// the TypeScript SDK writes its requests.
fn id_at_end(b: &[u8]) -> Option<RequestId> {
    let s = std::str::from_utf8(b.trim_ascii_end()).ok()?;
    let s = s.strip_suffix('}')?.trim_end();
    // The value: a number, or a string without escapes.
    let start = if let Some(body) = s.strip_suffix('"') {
        body.rfind('"')?
    } else {
        s.rfind(|c: char| !(c.is_ascii_digit() || c == '-'))? + 1
    };
    let value = &s[start..];
    let before = s[..start].trim_end().strip_suffix(':')?.trim_end();
    let before = before.strip_suffix("\"id\"")?.trim_end();
    if !(before.ends_with(',') || before.ends_with('{')) {
        return None;
    }
    serde_json::from_str::<Value>(value)
        .ok()
        .as_ref()
        .and_then(request_id)
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

/// The raw bytes of the JSON string at `i` (escapes left as they are) and
/// the index after it.
fn string_at(b: &[u8], i: usize) -> Option<(&[u8], usize)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'"' => return Some((&b[i + 1..j], j + 1)),
            _ => j += 1,
        }
    }
    None
}

/// Where the JSON value at `i` ends, if it ends within `b`.
fn value_end(b: &[u8], i: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut j = i;
    while j < b.len() {
        match b[j] {
            b'"' => {
                let (_, after) = string_at(b, j)?;
                j = after;
                if depth == 0 {
                    return Some(j);
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth == 0 => return Some(j),
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j + 1);
                }
            }
            b',' if depth == 0 => return Some(j),
            _ => {}
        }
        j += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_found_at_either_end() {
        let n = |i| Some(RequestId::Number(i));
        assert_eq!(
            id_at_start(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"#),
            n(7)
        );
        assert_eq!(
            id_at_start(br#"{"method":"a","params":{"id":1,"s":"}"},"id":"r-2","#),
            Some(RequestId::String("r-2".into()))
        );
        assert_eq!(
            id_at_start(br#"{"method":"a","params":{"content":"xxxx"#),
            None
        );
        assert_eq!(id_at_end(br#"xxx"}},"jsonrpc":"2.0","id":12}"#), n(12));
        assert_eq!(
            id_at_end(br#"xx","id":"abc"} "#),
            Some(RequestId::String("abc".into()))
        );
        assert_eq!(id_at_end(br#"xx"}}}"#), None);
    }
}
