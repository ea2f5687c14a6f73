"""The OpenAI Chat Completions API, answered from a script.

`POST .../chat/completions` with `stream: true` (server-sent `data:`
chunks, a final chunk with `finish_reason` and `usage`, then `data:
[DONE]`), or a plain JSON body. `GET .../models` lists the one model. A
request that offers tools is the agent's main loop and gets the script's
next turn; any other request (a title, a summary, a next-speaker check)
gets a short text, so a scenario only scripts what the model does in the
conversation. Qwen Code, opencode and other agents with an
"OpenAI-compatible" provider call this API.

A turn is a list of parts built with `text(...)` and `call(name,
arguments)`, or a function of the request returning one. Which turn
answers a request is decided by the number of assistant messages already
in it, so a resumed conversation carries on where the script left off, and
a retried request gets the same answer.
"""

import itertools
import json
import time

from model import Response

_ids = itertools.count(1)


def text(s):
    return {"type": "text", "text": s}


def usage(prompt_tokens):
    """A part that makes the answer report `prompt_tokens` of input in its
    `usage` (an overflow the agent compacts for), whatever the request
    held."""
    return {"type": "usage", "prompt_tokens": prompt_tokens}


def call(name, arguments, id=None):
    """A tool call (a function call with JSON arguments)."""
    return {"type": "call", "id": id or "call_e2e_%04d" % next(_ids), "name": name, "arguments": arguments}


def message_text(content):
    """The text of a message's content: a string or a list of parts."""
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def tool_results(body):
    """Every tool message of a request, in order: (tool_call_id, text)."""
    return [(m.get("tool_call_id"), message_text(m.get("content")))
            for m in body.get("messages", []) if m.get("role") == "tool"]


def assistant_turns(body):
    return sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")


# What a compaction's summary request gets.
SUMMARY = ("<state_snapshot>\nThe user asked for files to be read; they were read. "
           "Nothing was changed.\n</state_snapshot>")

# Words of the agents' requests for a summary of the conversation, in the
# request's last message (the agent's own, as the user): Qwen Code's
# "produce the <state_snapshot> XML", opencode's and Kilo's "Create a new
# anchored summary" (or "Here is the summary of the conversation before"),
# pi's "Create a structured context checkpoint summary", "Summarize the
# prefix" and "incorporate into the existing summary". A conversation
# after a compaction holds the summary too, but never last: a prompt or a
# tool result follows it.
SUMMARY_ASKS = ("<state_snapshot>", "anchored summary", "Here is the summary of the conversation before",
                "context checkpoint summary", "Summarize the prefix", "incorporate into the existing summary",
                "The history is being compacted")


def is_summary_request(body):
    msgs = body.get("messages") or []
    if not msgs or msgs[-1].get("role") != "user":
        return False
    t = message_text(msgs[-1].get("content"))
    return any(w in t for w in SUMMARY_ASKS)


def tokens_of(body):
    return max(1, len(json.dumps(body.get("messages", []))) // 4)


class Chat:
    """A protocol for model.Server: the script `turns` (a list), answered in
    order to main-loop requests. `main` collects those requests, `side` the
    others."""

    def __init__(self, turns, model="e2e-model"):
        self.turns = list(turns)
        self.model = model
        self.main = []
        self.side = []
        self.summaries = []

    def handle(self, req):
        path = req.path.split("?")[0].rstrip("/")
        if req.method == "GET" and path.endswith("/models"):
            return Response.json({"object": "list", "data": [
                {"id": self.model, "object": "model", "created": 0, "owned_by": "e2e"}]})
        if not path.endswith("/chat/completions"):
            return Response.json({"error": {"message": "no such route: %s %s" % (req.method, path),
                                            "type": "invalid_request_error"}}, 404)
        body = req.json or {}
        if is_summary_request(body):
            # An agent compacting its conversation asks for a summary (with
            # its tools offered, or none): it gets one, in every agent's
            # expected shape (Qwen Code wants a closed <state_snapshot>).
            self.summaries.append(req)
            parts = [text(SUMMARY)]
        elif body.get("tools"):
            self.main.append(req)
            n = assistant_turns(body)
            if n < len(self.turns):
                turn = self.turns[n]
                parts = turn(body) if callable(turn) else turn
            else:
                parts = [text("Done.")]
        else:
            self.side.append(req)
            parts = [text("ok")]
        calls = [p for p in parts if p["type"] == "call"]
        content = "".join(p["text"] for p in parts if p["type"] == "text")
        finish = "tool_calls" if calls else "stop"
        cid = "chatcmpl-e2e-%04d" % next(_ids)
        model = body.get("model") or self.model
        used = next((p["prompt_tokens"] for p in parts if p["type"] == "usage"), tokens_of(body))
        usage = {"prompt_tokens": used, "completion_tokens": 10, "total_tokens": used + 10}
        if body.get("stream"):
            return Response(content_type="text/event-stream",
                            chunks=list(self._sse(cid, model, content, calls, finish, usage)))
        msg = {"role": "assistant", "content": content or None}
        if calls:
            msg["tool_calls"] = [{"id": c["id"], "type": "function", "function": {
                "name": c["name"], "arguments": json.dumps(c["arguments"])}} for c in calls]
        return Response.json({"id": cid, "object": "chat.completion", "created": int(time.time()), "model": model,
                              "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                              "usage": usage})

    def _sse(self, cid, model, content, calls, finish, usage):
        created = int(time.time())

        def chunk(delta, finish_reason=None, **extra):
            d = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
            d.update(extra)
            return "data: %s\n\n" % json.dumps(d)

        yield chunk({"role": "assistant", "content": ""})
        if content:
            yield chunk({"content": content})
        for i, c in enumerate(calls):
            yield chunk({"tool_calls": [{"index": i, "id": c["id"], "type": "function", "function": {
                "name": c["name"], "arguments": json.dumps(c["arguments"])}}]})
        yield chunk({}, finish, usage=usage)
        yield "data: [DONE]\n\n"


class Conversations(Chat):
    """Scripted prompts over one server, told apart by a marker in the
    user's text (marker -> turns). Turns count the assistant messages after
    the latest user message holding the marker, so a resumed conversation
    (which sends its history) and a compacted one (a summary in place of
    it) play each prompt's script from its start."""

    def __init__(self, scripts, model="e2e-model"):
        super().__init__([], model)
        self.scripts = dict(scripts)

    def handle(self, req):
        body = req.json or {}
        msgs = body.get("messages", [])
        found = None
        for i, m in enumerate(msgs):
            if m.get("role") != "user":
                continue
            for k in self.scripts:
                if k in message_text(m.get("content")):
                    found = (k, i)
        if body.get("tools") and found:
            key, at = found
            done = assistant_turns(body)
            after = sum(1 for m in msgs[at:] if m.get("role") == "assistant")
            self.turns = [None] * done + self.scripts[key][after:]
        else:
            self.turns = []
        return super().handle(req)
