"""A small threaded WSGI server for one real service, with its request lock.

sqlite allows one writer at a time, so each service handles one request at a
time: :data:`SERVICE_LOCK` is held while the real application runs. Anything
else in the process that writes the service's database (the Octavia provider
emulator) takes the same lock. The traffic middleware (faults, counting) runs
*outside* the lock, so an injected delay never blocks other requests.
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
import traceback
from socketserver import ThreadingMixIn
from wsgiref.simple_server import ServerHandler, WSGIRequestHandler, WSGIServer, make_server

SERVICE_LOCK = threading.Lock()
# minicloud's own door into a serving process (see SeedEndpoint); no OpenStack API uses this path.
SEED_PATH = "/minicloud/seed"


class DropConnection(ConnectionAbortedError):
    """Raised by middleware to close the client connection without a response."""


class SerializedApp:
    """Run the wrapped application, body included, while holding SERVICE_LOCK."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        with SERVICE_LOCK:
            result = self.app(environ, start_response)
            try:
                body = b"".join(result)
            finally:
                close = getattr(result, "close", None)
                if close:
                    close()
        return [body]


class SeedEndpoint:
    """``POST SEED_PATH`` with a JSON payload runs the service's seeding in the serving process.

    The process has its configuration parsed and its database open already: a seed costs
    milliseconds there, against seconds for a process that imports and configures the service
    first. It runs under SERVICE_LOCK like a request, and sits outside the traffic middleware:
    minicloud's own writes are never counted as client traffic nor hit by injected faults.
    """

    def __init__(self, app, seed):
        self.app = app
        self.seed = seed

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO") != SEED_PATH:
            return self.app(environ, start_response)
        if environ.get("REQUEST_METHOD") != "POST":
            return _answer(start_response, "405 Method Not Allowed", {"error": "POST only"})
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
            payload = json.loads(environ["wsgi.input"].read(length) or b"{}")
            with SERVICE_LOCK:
                result = self.seed(payload)
        except Exception:  # noqa: BLE001  (the caller reports it; the service keeps serving)
            return _answer(start_response, "500 Internal Server Error", {"error": traceback.format_exc()})
        return _answer(start_response, "200 OK", result)


def _answer(start_response, status: str, body: dict) -> list[bytes]:
    data = json.dumps(body).encode()
    start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
    return [data]


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


class _TLSThreadingServer(_ThreadingServer):
    """HTTPS: each connection's TLS handshake happens in its own request thread, so a slow
    client never holds up the accept loop."""

    ssl_context: ssl.SSLContext
    handshake_timeout = 30.0

    def finish_request(self, request, client_address):
        request.settimeout(self.handshake_timeout)
        try:
            conn = self.ssl_context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return  # a client that did not trust us, or went away
        conn.settimeout(None)
        try:
            self.RequestHandlerClass(conn, client_address, self)
        finally:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()


class _StreamingServerHandler(ServerHandler):
    """wsgiref's handler, plus chunked transfer encoding for an HTTP/1.1 request whose answer has no
    Content-Length (a Kubernetes watch). wsgiref answers such bodies as HTTP/1.0, ended by closing
    the connection; clients then read them in large blocks (urllib3 waits for 64 KiB or the end),
    so a watch event would reach them only at the end of the watch. Chunks reach them at once."""

    chunked = False

    def cleanup_headers(self):
        super().cleanup_headers()
        if "Content-Length" not in self.headers and self.environ.get("SERVER_PROTOCOL") == "HTTP/1.1":
            self.chunked = True
            self.http_version = "1.1"
            self.headers["Transfer-Encoding"] = "chunked"
            self.headers["Connection"] = "close"  # one request per connection, as for every answer here

    def write(self, data):
        if not self.status:
            raise AssertionError("write() before start_response()")
        if not self.headers_sent:
            self.bytes_sent = len(data)
            self.send_headers()
        else:
            self.bytes_sent += len(data)
        if self.chunked:
            if not data:
                return  # an empty chunk would end the body
            data = b"%x\r\n%s\r\n" % (len(data), data)
        self._write(data)
        self._flush()

    def finish_content(self):
        super().finish_content()
        if self.chunked:
            self._write(b"0\r\n\r\n")
            self._flush()


#: environ key: whether the request carried a Content-Type header (wsgiref fills in ``text/plain`` when it did not)
CONTENT_TYPE_GIVEN = "minicloud.content_type_given"


class _QuietHandler(WSGIRequestHandler):
    """No access log (requests are counted by the traffic middleware); chunked streaming answers."""

    def log_request(self, code="-", size="-"):
        pass

    def get_environ(self):
        """WSGIRequestHandler's environ, which says ``text/plain`` for a request without a Content-Type; with
        ``CONTENT_TYPE_GIVEN`` (whether the client sent one) for the proxy in front of kube-apiserver, which must
        forward the header only as the client sent it."""
        env = super().get_environ()
        env[CONTENT_TYPE_GIVEN] = self.headers.get("content-type") is not None
        return env

    def handle(self):
        """WSGIRequestHandler.handle, with :class:`_StreamingServerHandler`."""
        self.raw_requestline = self.rfile.readline(65537)
        if len(self.raw_requestline) > 65536:
            self.requestline = self.request_version = self.command = ""
            self.send_error(414)
            return
        if not self.parse_request():
            return
        handler = _StreamingServerHandler(self.rfile, self.wfile, self.get_stderr(), self.get_environ(),
                                          multithread=False)
        handler.request_handler = self
        handler.run(self.server.get_app())


def bind(host: str, port: int, ssl_context: ssl.SSLContext | None = None) -> WSGIServer:
    """A server bound to ``host:port`` (raises OSError if taken); give it an app with
    ``set_app`` and run ``serve_forever``. With ``ssl_context`` it serves HTTPS.

    ``DropConnection`` from the app closes the socket silently: wsgiref's handler
    treats ``ConnectionAbortedError`` as a client that went away and writes nothing,
    then the server closes the connection.
    """
    if ssl_context is None:
        return make_server(host, port, None, server_class=_ThreadingServer, handler_class=_QuietHandler)
    server = make_server(host, port, None, server_class=_TLSThreadingServer, handler_class=_QuietHandler)
    server.ssl_context = ssl_context
    return server
