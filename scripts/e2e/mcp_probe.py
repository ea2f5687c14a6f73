#!/usr/bin/env python3
"""A minimal MCP server on stdio for the e2e suites: one tool, `big`,
whose result is one text part of `bytes` bytes (lines of 99 characters
and a newline), so that a suite can see what an agent does with text a
hook or plugin adds to a long MCP result."""

import json
import sys


def result(req_id, value):
    return {"jsonrpc": "2.0", "id": req_id, "result": value}


def answer(msg):
    method, req_id = msg.get("method"), msg.get("id")
    if req_id is None:
        return None  # a notification
    if method == "initialize":
        version = (msg.get("params") or {}).get("protocolVersion", "2025-06-18")
        return result(req_id, {"protocolVersion": version, "capabilities": {"tools": {}},
                               "serverInfo": {"name": "probe", "version": "1"}})
    if method == "tools/list":
        return result(req_id, {"tools": [{
            "name": "big",
            "description": "Returns `bytes` bytes of text.",
            "inputSchema": {"type": "object", "properties": {"bytes": {"type": "integer"}},
                            "required": ["bytes"]},
        }]})
    if method == "tools/call":
        n = int(((msg.get("params") or {}).get("arguments") or {}).get("bytes", 0))
        line = "x" * 99 + "\n"
        text = (line * (n // 100 + 1))[:n]
        return result(req_id, {"content": [{"type": "text", "text": text}]})
    if method == "ping":
        return result(req_id, {})
    return {"jsonrpc": "2.0", "id": req_id, "error": {"code": -32601, "message": "no method %s" % method}}


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        out = answer(json.loads(line))
        if out is not None:
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
