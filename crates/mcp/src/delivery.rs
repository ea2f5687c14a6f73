//! Recording a view only once the answer that showed it has reached the
//! client.
//!
//! A view is what was shown: fsview-read records once its output is written
//! out in full, and the server does the same for a tool result. The SDK
//! writes a result after the handler returns, so the handler cannot know
//! when (or whether) it went out. It leaves what is to be recorded with the
//! [`Ledger`] under a token in the result's `_meta`; [`Delivering`], a
//! transport around stdio, takes the token out as the result passes, writes
//! the result, and once the write (with its flush) has succeeded, records.
//! A result that is never written (the client is gone: the write fails; a
//! call the client cancelled: the SDK drops its result) records nothing.
//!
//! Ordering: a record lands a moment after its result is out, so a call the
//! client makes on receiving it could overtake the record. Every call
//! therefore first waits for the records of results already being written
//! ([`Ledger::settled`]).

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use rmcp::model::{JsonRpcMessage, RequestId, ServerResult};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use tokio::sync::watch;

use crate::calls::Delivery;

/// The `_meta` key that carries a result's token from the handler to the
/// transport; never sent.
pub const TOKEN_KEY: &str = "fsview/delivery";

/// What is to be recorded when which result is delivered.
pub struct Ledger {
    waiting: Mutex<Waiting>,
    /// Results with a delivery being written or recorded.
    sending: watch::Sender<usize>,
}

#[derive(Default)]
struct Waiting {
    next: u64,
    /// By token: the request the result answers, and what it records.
    by_token: HashMap<u64, (RequestId, Delivery)>,
}

impl Default for Ledger {
    fn default() -> Self {
        Ledger {
            waiting: Mutex::new(Waiting::default()),
            sending: watch::Sender::new(0),
        }
    }
}

impl Ledger {
    /// Leave `d` to be recorded when the result of request `id` is
    /// delivered; the token to put in that result's `_meta`. `None` when the
    /// request was cancelled already: its result will never be sent.
    pub fn leave(&self, id: RequestId, cancelled: impl Fn() -> bool, d: Delivery) -> Option<u64> {
        let mut w = self.waiting.lock().expect("ledger lock");
        // Checked under the lock that `forget` takes: a cancellation
        // either comes first (nothing is left) or finds the entry.
        if cancelled() {
            return None;
        }
        let token = w.next;
        w.next += 1;
        w.by_token.insert(token, (id, d));
        Some(token)
    }

    /// The client cancelled request `id`: its result is dropped unsent, so
    /// what it would record is dropped too.
    pub fn forget(&self, id: &RequestId) {
        let mut w = self.waiting.lock().expect("ledger lock");
        w.by_token.retain(|_, (rid, _)| rid != id);
    }

    /// Take the delivery of the result in `item`, if it carries a token,
    /// removing the token from it. It counts as being sent from here on.
    fn claim(self: &Arc<Self>, item: &mut TxJsonRpcMessage<RoleServer>) -> Option<Sending> {
        let JsonRpcMessage::Response(r) = item else {
            return None;
        };
        let ServerResult::CallToolResult(result) = &mut r.result else {
            return None;
        };
        let meta = result.meta.as_mut()?;
        let token = meta.0.remove(TOKEN_KEY)?.as_u64();
        if meta.0.is_empty() {
            result.meta = None;
        }
        let (_, delivery) = self
            .waiting
            .lock()
            .expect("ledger lock")
            .by_token
            .remove(&token?)?;
        self.sending.send_modify(|n| *n += 1);
        Some(Sending {
            ledger: self.clone(),
            delivery: Some(delivery),
        })
    }

    /// Wait until every result already being written has been recorded.
    pub async fn settled(&self) {
        let mut rx = self.sending.subscribe();
        // The sender lives as long as the ledger: no error to see.
        let _ = rx.wait_for(|n| *n == 0).await;
    }
}

/// A result being written, and what it records once written.
struct Sending {
    ledger: Arc<Ledger>,
    delivery: Option<Delivery>,
}

impl Sending {
    /// The result is out: record, on a blocking thread (SQLite), and wait
    /// for it, so that the count drops only once the record is in.
    async fn delivered(mut self) {
        if let Some(d) = self.delivery.take() {
            let _ = tokio::task::spawn_blocking(move || d.record()).await;
        }
    }
}

impl Drop for Sending {
    fn drop(&mut self) {
        self.ledger.sending.send_modify(|n| *n -= 1);
    }
}

/// The stdio transport, recording each delivery once its result is out.
pub struct Delivering<T> {
    inner: T,
    ledger: Arc<Ledger>,
}

impl<T> Delivering<T> {
    pub fn new(inner: T, ledger: Arc<Ledger>) -> Self {
        Delivering { inner, ledger }
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Delivering<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        mut item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sending = self.ledger.claim(&mut item);
        let send = self.inner.send(item);
        async move {
            let result = send.await;
            if let (Ok(()), Some(s)) = (&result, sending) {
                s.delivered().await;
            }
            // A failed write drops `sending`: nothing is recorded.
            result
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        self.inner.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
