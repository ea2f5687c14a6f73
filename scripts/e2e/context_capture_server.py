#!/usr/bin/env python3
"""A scripted Anthropic Messages API on 127.0.0.1 that records what it is sent.

Usage: context_capture_server.py OUT_DIR [--read PATH]

Writes its port to OUT_DIR/port once listening, then saves every POST body
as OUT_DIR/NNN-<endpoint>.json (NNN counts requests from 001). Replies:
  /v1/messages/count_tokens  {"input_tokens": 1}
  /v1/messages               a streaming (SSE) reply; with --read PATH, the
                             first request that offers the Read tool and has
                             no tool result yet gets a Read of PATH, every
                             other request a short text that ends the turn.
Stops on SIGTERM. Python 3 standard library only.
"""

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OUT = sys.argv[1]
READ = sys.argv[sys.argv.index("--read") + 1] if "--read" in sys.argv else None
lock = threading.Lock()
state = {"n": 0, "read_sent": False}


def sse(events):
    return "".join(
        f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events
    ).encode()


def message(content_block, delta, stop_reason):
    return [
        {"type": "message_start", "message": {
            "id": "msg_capture", "type": "message", "role": "assistant",
            "model": "claude-capture", "content": [], "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": content_block},
        {"type": "content_block_delta", "index": 0, "delta": delta},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": stop_reason,
                                            "stop_sequence": None},
         "usage": {"output_tokens": 1}},
        {"type": "message_stop"},
    ]


def offers_read(body):
    return any(t.get("name") == "Read" for t in body.get("tools") or [])


def has_tool_result(body):
    for m in body.get("messages") or []:
        c = m.get("content")
        if isinstance(c, list) and any(b.get("type") == "tool_result" for b in c):
            return True
    return False


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = self.path.split("?")[0]
        endpoint = path.strip("/").replace("/", "_")
        with lock:
            state["n"] += 1
            n = state["n"]
        with open(os.path.join(OUT, f"{n:03d}-{endpoint}.json"), "wb") as f:
            f.write(raw)
        if path.endswith("/count_tokens"):
            return self.reply(200, "application/json", b'{"input_tokens": 1}')
        if not path.endswith("/v1/messages"):
            return self.reply(404, "application/json", b'{"type":"error"}')
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        with lock:
            read_now = (READ is not None and not state["read_sent"]
                        and offers_read(body) and not has_tool_result(body))
            if read_now:
                state["read_sent"] = True
        if read_now:
            events = message(
                {"type": "tool_use", "id": "toolu_capture_read", "name": "Read", "input": {}},
                {"type": "input_json_delta", "partial_json": json.dumps({"file_path": READ})},
                "tool_use")
        else:
            events = message({"type": "text", "text": ""},
                             {"type": "text_delta", "text": "ok"}, "end_turn")
        self.reply(200, "text/event-stream", sse(events))

    def do_GET(self):
        self.reply(404, "application/json", b'{"type":"error"}')

    def reply(self, code, ctype, data):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = os.path.join(OUT, "port.tmp")
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, os.path.join(OUT, "port"))
    import signal
    signal.signal(signal.SIGTERM, lambda *a: threading.Thread(target=server.shutdown).start())
    server.serve_forever()


if __name__ == "__main__":
    main()
