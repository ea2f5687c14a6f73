"""The Anthropic Messages API, answered from a script.

`POST /v1/messages` (streaming SSE or a plain JSON body, as the request
asks) and `POST /v1/messages/count_tokens`. A request that offers tools is
the agent's main loop and gets the script's next turn; any other request
(a title, a summary, a quota probe) gets a short text, so a scenario only
scripts what the model does in the conversation.

A turn is a list of content blocks built with `text(...)` and
`tool(name, input)`, or a function of the request returning one. Which
turn answers a request is decided by the number of assistant messages
already in it, so a resumed conversation (`--resume`) carries on where the
script left off, and a retried request gets the same answer.

Subagents (Claude Code's `Agent` tool) send their own requests to the same
server, interleaved with the main thread's when they run in the
background. `Conversations` scripts each of them apart, telling them by a
marker in their prompt (see there).
"""

import itertools
import json

from model import Response

_ids = itertools.count(1)


def text(s):
    return {"type": "text", "text": s}


def tool(name, input, id=None):
    return {"type": "tool_use", "id": id or "toolu_e2e_%04d" % next(_ids), "name": name, "input": input}


def blocks_text(content):
    """All text of a message's content (a string or a list of blocks),
    tool results included, joined by newlines."""
    if isinstance(content, str):
        return content
    out = []
    for b in content or []:
        if b.get("type") == "text":
            out.append(b.get("text", ""))
        elif b.get("type") == "tool_result":
            out.append(blocks_text(b.get("content")))
    return "\n".join(out)


def tool_results(body):
    """Every tool_result block of a request, in order: (tool_use_id,
    is_error, text)."""
    out = []
    for m in body.get("messages", []):
        if m.get("role") != "user" or isinstance(m.get("content"), str):
            continue
        for b in m["content"]:
            if b.get("type") == "tool_result":
                out.append((b.get("tool_use_id"), bool(b.get("is_error")), blocks_text(b.get("content"))))
    return out


def count_tokens_of(body):
    """A rough token count of a request: four characters a token, as a
    model tokenizer would give for English and code."""
    n = len(json.dumps(body.get("messages", []))) + len(json.dumps(body.get("system", "")))
    return max(1, n // 4)


class Messages:
    """A protocol for model.Server: the script `turns` (a list), answered in
    order to main-loop requests. `main` collects those requests, `side` the
    others, `counted` the count_tokens calls."""

    def __init__(self, turns, model="claude-opus-5-5"):
        self.turns = list(turns)
        self.model = model
        self.main = []
        self.side = []
        self.counted = []

    def handle(self, req):
        path = req.path.split("?")[0]
        body = req.json or {}
        if path.endswith("/v1/messages/count_tokens"):
            self.counted.append(req)
            return Response.json({"input_tokens": count_tokens_of(body)})
        if not path.endswith("/v1/messages"):
            return Response.json({"type": "error", "error": {"type": "not_found_error", "message": path}}, 404)
        if body.get("tools"):
            self.main.append(req)
            n = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
            if n < len(self.turns):
                turn = self.turns[n]
                content = turn(body) if callable(turn) else turn
            else:
                content = [text("Done.")]
        else:
            self.side.append(req)
            content = [text("ok")]
        return self._answer(body, content)

    def _answer(self, body, content):
        stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        msg_id = "msg_e2e_%04d" % next(_ids)
        if body.get("stream"):
            return Response(content_type="text/event-stream", chunks=list(self._sse(msg_id, body, content, stop)))
        return Response.json({
            "id": msg_id, "type": "message", "role": "assistant", "model": body.get("model", self.model),
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": count_tokens_of(body), "output_tokens": 10},
        })

    def _sse(self, msg_id, body, content, stop):
        def ev(name, data):
            return "event: %s\ndata: %s\n\n" % (name, json.dumps(data))

        yield ev("message_start", {"type": "message_start", "message": {
            "id": msg_id, "type": "message", "role": "assistant", "model": body.get("model", self.model),
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": count_tokens_of(body), "output_tokens": 1}}})
        for i, b in enumerate(content):
            if b["type"] == "text":
                yield ev("content_block_start", {"type": "content_block_start", "index": i,
                                                 "content_block": {"type": "text", "text": ""}})
                yield ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                                 "delta": {"type": "text_delta", "text": b["text"]}})
            else:
                yield ev("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                    "type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}})
                yield ev("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                    "type": "input_json_delta", "partial_json": json.dumps(b["input"])}})
            yield ev("content_block_stop", {"type": "content_block_stop", "index": i})
        yield ev("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                   "usage": {"output_tokens": 10}})
        yield ev("message_stop", {"type": "message_stop"})


def user_texts(body):
    """(message index, text) of every text a user message of the request
    holds, tool results left out."""
    out = []
    for i, m in enumerate(body.get("messages", [])):
        if m.get("role") != "user":
            continue
        c = m.get("content")
        if isinstance(c, str):
            out.append((i, c))
            continue
        for b in c or []:
            if b.get("type") == "text":
                out.append((i, b.get("text", "")))
    return out


class Conversations(Messages):
    """Several scripted conversations over one server: the main thread and
    each subagent, told apart by the request body.

    `scripts` maps a marker to a list of turns; a marker must be a string no
    other text of the conversation holds by chance (a bracketed token: a
    `<task-notification>` carries paths and the agent's description). A
    request belongs to the
    conversation whose marker appears in the latest user text that holds
    one (tool results are not looked at): the main thread's marker is in the
    `-p` prompt, a subagent's in the prompt its `Agent` call gives it (its
    first user message), and a `fork`, whose requests start with its
    parent's whole conversation, has its directive last. Turns count the
    assistant messages after that user message. `by[marker]` holds each
    conversation's requests; `main` holds every scripted request, so
    `tool_results` of a subagent's calls are found there too."""

    def __init__(self, scripts, model="claude-opus-5-5"):
        super().__init__([], model)
        self.scripts = dict(scripts)
        self.by = {k: [] for k in self.scripts}
        self.unmatched = []

    def conversation(self, body):
        """(marker, index of the user message holding it), or None."""
        best = None
        for i, t in user_texts(body):
            for k in self.scripts:
                if k in t and (best is None or i >= best[1]):
                    best = (k, i)
        return best

    def handle(self, req):
        path = req.path.split("?")[0]
        body = req.json or {}
        if not (path.endswith("/v1/messages") and body.get("tools")):
            return super().handle(req)
        found = self.conversation(body)
        if found is None:
            self.unmatched.append(req)
            self.main.append(req)
            return self._answer(body, [text("(no script for this conversation)")])
        key, at = found
        self.by[key].append(req)
        self.main.append(req)
        n = sum(1 for m in body["messages"][at:] if m.get("role") == "assistant")
        turns = self.scripts[key]
        if n < len(turns):
            turn = turns[n]
            content = turn(body) if callable(turn) else turn
        else:
            content = [text("Done.")]
        return self._answer(body, content)
