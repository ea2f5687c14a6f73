"""Counting what a model receives, in tokens, by a real tokenizer.

The tokenizer is npm `@anthropic-ai/tokenizer` (Claude's legacy
tokenizer, the one Anthropic published; its vocabulary ships inside the
package, so it counts offline), installed once into
~/.cache/fsview-e2e/anthropic-tokenizer-VERSION (never into the
repository) and run by one long-lived `node` process. It is an
approximation of what today's models count, the same for every agent and
every run, so ratios between runs hold. Where it cannot be installed,
`Counter` counts bytes instead and says so (`unit`).

`request_tokens(body)` counts one request of the Anthropic Messages API,
the Gemini API or the Responses API as the model receives it: the system
text, the tool definitions and every message, each message counted apart
(and remembered, since each request repeats the ones before it).
"""

import hashlib
import json
import os
import subprocess
import threading

from harness import Skip, cache_root

PACKAGE = "@anthropic-ai/tokenizer"
VERSION = "0.0.4"

_NODE = r"""
const {countTokens} = require("@anthropic-ai/tokenizer");
const rl = require("readline").createInterface({input: process.stdin});
rl.on("line", (l) => { process.stdout.write(countTokens(JSON.parse(l)) + "\n"); });
"""


def ensure(log=None):
    """The node_modules directory holding the tokenizer, installed when
    missing. Raises Skip when npm cannot install it here."""
    d = os.path.join(cache_root(), "anthropic-tokenizer-%s" % VERSION)
    pkg = os.path.join(d, "node_modules", "@anthropic-ai", "tokenizer", "package.json")

    def installed():
        try:
            with open(pkg) as f:
                return json.load(f).get("version") == VERSION
        except (OSError, ValueError):
            return False

    if installed():
        return os.path.join(d, "node_modules")
    os.makedirs(d, exist_ok=True)
    if log:
        print("bench-tokens: installing %s@%s into %s" % (PACKAGE, VERSION, d), file=log, flush=True)
    try:
        p = subprocess.run(["npm", "install", "--prefix", d, "--no-audit", "--no-fund", "--save-exact",
                            "%s@%s" % (PACKAGE, VERSION)], capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Skip("npm could not install %s@%s: %s" % (PACKAGE, VERSION, e))
    if p.returncode != 0 or not installed():
        raise Skip("npm could not install %s@%s: %s" % (PACKAGE, VERSION, (p.stderr.strip().splitlines() or [""])[-1]))
    return os.path.join(d, "node_modules")


class Counter:
    """Tokens of texts, by the tokenizer (`unit` "tokens"), else bytes
    (`unit` "bytes"). Thread-safe; remembers what it counted."""

    def __init__(self, log=None, bytes_only=False):
        self._lock = threading.Lock()
        self._seen = {}
        self._proc = None
        self.unit = "bytes"
        if bytes_only:
            return
        try:
            modules = ensure(log)
        except Skip as e:
            if log:
                print("bench-tokens: counting bytes: %s" % e, file=log, flush=True)
            return
        env = dict(os.environ, NODE_PATH=modules)
        self._proc = subprocess.Popen(["node", "-e", _NODE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      env=env, text=True, bufsize=1)
        self.unit = "tokens"
        self.count("warm up")

    def count(self, text):
        if not text:
            return 0
        key = hashlib.sha1(text.encode("utf-8", "surrogatepass")).digest()
        with self._lock:
            n = self._seen.get(key)
            if n is not None:
                return n
            if self._proc is None:
                n = len(text.encode("utf-8", "surrogatepass"))
            else:
                self._proc.stdin.write(json.dumps(text) + "\n")
                self._proc.stdin.flush()
                n = int(self._proc.stdout.readline())
            self._seen[key] = n
            return n

    def close(self):
        if self._proc:
            self._proc.stdin.close()
            self._proc.wait(timeout=30)


def _texts(obj):
    """The strings a message holds, as the model reads them: text, tool
    inputs and results (JSON where the API sends JSON)."""
    if isinstance(obj, str):
        return [obj]
    out = []
    if isinstance(obj, list):
        for x in obj:
            out += _texts(x)
        return out
    if not isinstance(obj, dict):
        return [json.dumps(obj)]
    t = obj.get("type")
    if t == "text" or (t is None and "text" in obj and len(obj) <= 3):
        return [obj.get("text", "")]
    if t == "tool_use":
        return [obj.get("name", ""), json.dumps(obj.get("input", {}))]
    if t == "tool_result":
        return _texts(obj.get("content") or "")
    if "tool_calls" in obj:  # an OpenAI Chat Completions assistant message
        out = _texts(obj.get("content") or "")
        for c in obj.get("tool_calls") or []:
            fn = c.get("function") or {}
            out += [fn.get("name", ""), fn.get("arguments", "")]
        return out
    if "functionCall" in obj:
        fc = obj["functionCall"]
        return [fc.get("name", ""), json.dumps(fc.get("args", {}))]
    if "functionResponse" in obj:
        return [json.dumps(obj["functionResponse"].get("response", {}))]
    if "parts" in obj:
        return _texts(obj["parts"])
    if "content" in obj:
        return _texts(obj["content"])
    return [json.dumps(obj)]


def request_tokens(counter, body):
    """What one request gives the model, counted: system, tools, messages."""
    n = 0
    system = body.get("system") or body.get("systemInstruction") or body.get("instructions")
    if system:
        n += counter.count("\n".join(_texts(system)))
    if body.get("tools"):
        n += counter.count(json.dumps(body["tools"]))
    for m in body.get("messages") or body.get("contents") or body.get("input") or []:
        n += counter.count("\n".join(_texts(m)))
    return n
