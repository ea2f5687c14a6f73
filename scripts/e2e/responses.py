"""The OpenAI Responses API, answered from a script.

`POST /v1/responses` with `stream: true` (server-sent events:
`response.created`, one `response.output_item.added` and `.done` per item,
`response.completed`), or a plain JSON body. A request that offers tools is
the agent's main loop and gets the script's next turn; any other request (a
title, a summary) gets a short text. `GET /v1/models` lists the one model.

A turn is a list of output items built with `text(...)`, `function(name,
arguments)` (a function call, such as Codex's `exec_command`) and
`custom(name, input)` (a freeform custom tool call, such as Codex's
`apply_patch`), or a function of the request returning one. Which turn
answers a request is decided by the number of model turns already in its
`input`, so a resumed session carries on where the script left off.
"""

import itertools
import json

from model import Response

_ids = itertools.count(1)

# Items the model produced: a run of them in a request's input is one turn.
_MODEL_ITEMS = ("function_call", "custom_tool_call", "local_shell_call", "reasoning")


def text(s):
    return {"type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": s, "annotations": []}]}


def function(name, arguments):
    n = next(_ids)
    return {"type": "function_call", "status": "completed", "name": name,
            "arguments": json.dumps(arguments), "call_id": "call_e2e_%04d" % n}


def custom(name, input):
    n = next(_ids)
    return {"type": "custom_tool_call", "status": "completed", "name": name, "input": input,
            "call_id": "call_e2e_%04d" % n}


def _is_model_item(item):
    t = item.get("type")
    return t in _MODEL_ITEMS or (t == "message" and item.get("role") == "assistant")


def model_turns(body):
    """How many model turns a request's input already holds."""
    n, inside = 0, False
    for item in body.get("input", []) or []:
        if _is_model_item(item):
            if not inside:
                n += 1
            inside = True
        else:
            inside = False
    return n


def outputs(body):
    """Every tool output of a request's input, in order: (call_id, text)."""
    out = []
    for item in body.get("input", []) or []:
        if item.get("type") in ("function_call_output", "custom_tool_call_output"):
            o = item.get("output")
            if isinstance(o, list):
                o = "".join(p.get("text", "") for p in o if isinstance(p, dict))
            elif isinstance(o, dict):
                o = o.get("content") or json.dumps(o)
            out.append((item.get("call_id"), o))
    return out


def offers_tools(body):
    """Whether a request offers tools in its input (Codex's code mode: an
    `additional_tools` item, not the `tools` field)."""
    return any(i.get("type") == "additional_tools" for i in body.get("input", []) or [])


def messages(body, role):
    """The text of every input message of `role` (user, developer), in
    order."""
    out = []
    for item in body.get("input", []) or []:
        if item.get("type", "message") == "message" and item.get("role") == role:
            c = item.get("content")
            if isinstance(c, str):
                out.append(c)
            else:
                out.append("".join(p.get("text", "") for p in c or [] if isinstance(p, dict)))
    return out


class Responses:
    """A protocol for model.Server: the script `turns` (a list), answered in
    order to main-loop requests. `main` collects those requests, `side` the
    others."""

    def __init__(self, turns, model="gpt-5.5"):
        self.turns = list(turns)
        self.model = model
        self.main = []
        self.side = []

    def handle(self, req):
        path = req.path.split("?")[0]
        body = req.json or {}
        if req.method == "GET" and path.endswith("/models"):
            return Response.json({"object": "list", "data": [{"id": self.model, "object": "model"}],
                                  "models": []})
        if not path.endswith("/responses"):
            return Response.json({"error": {"message": "no route " + path, "type": "invalid_request_error"}}, 404)
        if body.get("tools") or offers_tools(body):
            self.main.append(req)
            n = model_turns(body)
            if n < len(self.turns):
                turn = self.turns[n]
                items = turn(body) if callable(turn) else turn
            else:
                items = [text("Done.")]
        else:
            self.side.append(req)
            items = [text("ok")]
        rid = "resp_e2e_%04d" % next(_ids)
        items = [dict(it, id="item_e2e_%04d" % next(_ids)) for it in items]
        usage = {"input_tokens": max(1, len(req.raw) // 4), "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": max(1, len(req.raw) // 4) + 10}
        done = {"id": rid, "object": "response", "status": "completed", "model": body.get("model", self.model),
                "output": items, "usage": usage}
        if not body.get("stream"):
            return Response.json(done)

        def ev(name, data):
            data = dict(data, type=name)
            return "event: %s\ndata: %s\n\n" % (name, json.dumps(data))

        start = dict(done, status="in_progress", output=[], usage=None)
        chunks = [ev("response.created", {"response": start})]
        for i, it in enumerate(items):
            chunks.append(ev("response.output_item.added", {"output_index": i, "item": it}))
            chunks.append(ev("response.output_item.done", {"output_index": i, "item": it}))
        chunks.append(ev("response.completed", {"response": done}))
        return Response(content_type="text/event-stream", chunks=chunks)
