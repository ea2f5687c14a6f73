"""A scripted model server on 127.0.0.1, for driving real agent binaries.

The server answers an agent's API calls from a script instead of a model, and
keeps every request it was sent, so a test can assert on exactly what the
agent sent the model (its context, its tool results). It knows nothing of a
particular API: a protocol (see anthropic.py) routes each request to an
answer. Python 3 standard library only.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Request:
    """One request the agent sent: method, path, headers, JSON body."""

    def __init__(self, method, path, headers, body):
        self.method = method
        self.path = path
        self.headers = headers
        self.raw = body
        try:
            self.json = json.loads(body) if body else None
        except ValueError:
            self.json = None

    def __repr__(self):
        return "Request(%s %s)" % (self.method, self.path)


class Response:
    """An answer: a status, headers, and either a body or a list of chunks
    sent one by one (a stream)."""

    def __init__(self, status=200, body=b"", content_type="application/json", chunks=None):
        self.status = status
        self.body = body if isinstance(body, bytes) else body.encode()
        self.content_type = content_type
        self.chunks = chunks

    @staticmethod
    def json(obj, status=200):
        return Response(status, json.dumps(obj))


class Server:
    """Serve `protocol.handle(request) -> Response` on 127.0.0.1 (a free
    port) in a background thread. Use as a context manager; `requests` holds
    every request received, in order."""

    def __init__(self, protocol):
        self.protocol = protocol
        self.requests = []
        self.errors = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _serve(self):
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                req = Request(self.command, self.path, dict(self.headers), body)
                with server._lock:
                    server.requests.append(req)
                try:
                    resp = server.protocol.handle(req)
                except Exception as e:  # a script error must show, not hang
                    server.errors.append("%s %s: %r" % (req.method, req.path, e))
                    resp = Response.json({"type": "error", "error": {"type": "api_error", "message": repr(e)}}, 500)
                self.send_response(resp.status)
                self.send_header("content-type", resp.content_type)
                if resp.chunks is None:
                    self.send_header("content-length", str(len(resp.body)))
                    self.end_headers()
                    self.wfile.write(resp.body)
                else:
                    self.send_header("cache-control", "no-cache")
                    self.send_header("connection", "close")
                    self.end_headers()
                    for c in resp.chunks:
                        self.wfile.write(c if isinstance(c, bytes) else c.encode())
                        self.wfile.flush()
                    self.close_connection = True

            do_POST = _serve
            do_GET = _serve

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        return False
