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
