"""The Gemini API (generativelanguage v1beta), answered from a script.

`POST /v1beta/models/MODEL:streamGenerateContent?alt=sse` (server-sent
events) and `:generateContent` (one JSON body), and `:countTokens`. A
request that offers tools is the agent's main loop and gets the script's
next turn. A request that asks for JSON (`responseJsonSchema`) is one of
gemini-cli's helpers: the model router (`complexity_score`, which must be
at least 1), the next-speaker check (always the user: the script decides
when the model acts), or another, answered with the schema's required
fields. Anything else gets a short text.

A turn is a list of parts built with `text(...)` and `call(name, args)`,
or a function of the request returning one. Which turn answers a request
is decided by the number of model messages already in it, so a resumed
session (`--resume`) carries on where the script left off.
"""

import itertools
import json

from model import Response

_ids = itertools.count(1)


def text(s):
    return {"text": s}


def call(name, args):
    """A function call part, with a made-up thought signature (Gemini 3
    models send one with every call, and gemini-cli sends it back)."""
    n = next(_ids)
    return {"functionCall": {"name": name, "args": args, "id": "call_e2e_%04d" % n},
            "thoughtSignature": "e2e-signature-%04d" % n}


def usage(prompt_tokens):
    """A part that makes the answer report `prompt_tokens` in its
    `usageMetadata` (what gemini-cli compresses for), whatever the request
    held. It is not sent as a part."""
    return {"usage": prompt_tokens}


# What a compression's summary requests get.
SUMMARY = ("<state_snapshot>\nThe user asked for files to be read; they were read. "
           "Nothing was changed.\n</state_snapshot>")


def is_summary_request(body):
    """gemini-cli's compression asks, with no tools, for a <state_snapshot>
    ("Generate a new <state_snapshot> ..."), then to check it ("Critically
    evaluate the <state_snapshot> ..."), in the last user message."""
    contents = body.get("contents") or []
    if body.get("tools") or not contents or contents[-1].get("role") != "user":
        return False
    return any("<state_snapshot>" in p.get("text", "") for p in contents[-1].get("parts", []) or [])


def function_responses(body):
    """Every functionResponse part of a request, in order: (name, id,
    response object)."""
    out = []
    for c in body.get("contents", []):
        for p in c.get("parts", []) or []:
            fr = p.get("functionResponse")
            if fr:
                out.append((fr.get("name"), fr.get("id"), fr.get("response") or {}))
    return out


def result_text(response):
    """What a functionResponse's `response` object told the model: its
    `output`, else its `error`, else the whole object."""
    if "output" in response:
        o = response["output"]
        return o if isinstance(o, str) else json.dumps(o)
    if "error" in response:
        return "ERROR: " + str(response["error"])
    return json.dumps(response)


def user_text(body):
    """Every text part of the user's messages, joined by newlines."""
    out = []
    for c in body.get("contents", []):
        if c.get("role") != "user":
            continue
        for p in c.get("parts", []) or []:
            if "text" in p:
                out.append(p["text"])
    return "\n".join(out)


def _json_answer(schema):
    props = (schema or {}).get("properties") or {}
    if "complexity_score" in props:
        return {"complexity_reasoning": "A scripted e2e model.", "complexity_score": 50}
    if "next_speaker" in props:
        return {"reasoning": "The script decides.", "next_speaker": "user"}
    out = {}
    for k in (schema or {}).get("required", []):
        t = (props.get(k) or {}).get("type")
        out[k] = {"number": 1, "integer": 1, "boolean": False, "array": [], "object": {}}.get(t, "")
        # The loop check (after 30 turns): no loop, the script decides.
        if "confidence" in k:
            out[k] = 0
    return out


class Gemini:
    """A protocol for model.Server: the script `turns` (a list), answered in
    order to main-loop requests. `main` collects those requests, `json`
    the helpers' (router, next speaker), `side` the rest."""

    def __init__(self, turns, model="gemini-3-pro-preview"):
        self.turns = list(turns)
        self.model = model
        self.main = []
        self.json = []
        self.side = []
        self.summaries = []

    def handle(self, req):
        path = req.path.split("?")[0]
        body = req.json or {}
        if path.endswith(":countTokens"):
            return Response.json({"totalTokens": max(1, len(req.raw) // 4)})
        if not (path.endswith(":streamGenerateContent") or path.endswith(":generateContent")):
            return Response.json({"error": {"code": 404, "message": path, "status": "NOT_FOUND"}}, 404)
        config = body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        if is_summary_request(body):
            self.summaries.append(req)
            parts = [text(SUMMARY)]
        elif body.get("tools"):
            self.main.append(req)
            n = sum(1 for c in body.get("contents", []) if c.get("role") == "model")
            if n < len(self.turns):
                turn = self.turns[n]
                parts = turn(body) if callable(turn) else turn
            else:
                parts = [text("Done.")]
        elif config.get("responseMimeType") == "application/json" or schema:
            self.json.append(req)
            parts = [text(json.dumps(_json_answer(schema)))]
        else:
            self.side.append(req)
            parts = [text("ok")]
        used = next((p["usage"] for p in parts if "usage" in p), max(1, len(req.raw) // 4))
        parts = [p for p in parts if "usage" not in p]
        resp = {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": used, "candidatesTokenCount": 10,
                              "totalTokenCount": used + 10},
            "modelVersion": self.model,
            "responseId": "resp_e2e_%04d" % next(_ids),
        }
        if path.endswith(":streamGenerateContent"):
            return Response(content_type="text/event-stream", chunks=["data: %s\r\n\r\n" % json.dumps(resp)])
        return Response.json(resp)


class Conversations(Gemini):
    """Several scripted conversations over one server, told apart by a
    marker in the user's text: the main thread's in its prompt, a
    subagent's (invoke_agent) in the prompt it is given. Turns count the
    model messages after the latest user message holding the marker, so a
    resumed conversation (`--resume`, which sends the whole history) plays
    its new prompt's script from the start. `by[marker]` holds each one's
    requests; requests of no script get "Done.", and are in `unmatched`."""

    def __init__(self, scripts, model="gemini-3-pro-preview"):
        super().__init__([], model)
        self.scripts = dict(scripts)
        self.by = {k: [] for k in self.scripts}
        self.unmatched = []

    def handle(self, req):
        body = req.json or {}
        if not body.get("tools"):
            return super().handle(req)
        contents = body.get("contents", [])
        found = None
        for i, c in enumerate(contents):
            if c.get("role") != "user":
                continue
            t = "\n".join(p.get("text", "") for p in c.get("parts", []) or [] if "text" in p)
            for k in self.scripts:
                if k in t:
                    found = (k, i)
        if found is None:
            self.unmatched.append(req)
            self.turns = []
            return super().handle(req)
        key, at = found
        self.by[key].append(req)
        done = sum(1 for c in contents if c.get("role") == "model")
        after = sum(1 for c in contents[at:] if c.get("role") == "model")
        # The base class answers turn `done`: line the script up with it.
        self.turns = [None] * done + self.scripts[key][after:]
        return super().handle(req)
