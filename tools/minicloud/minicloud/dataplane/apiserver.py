"""A small endpoint that answers like a kube-apiserver for what a load generator asks.

``/readyz``, ``/livez``, ``/healthz`` (``ok``), ``/version`` (JSON), and any request with ``watch=true`` (or ``1``):
a watch that stays open, one BOOKMARK event a second, ended cleanly after ``timeoutSeconds`` (as the
apiserver ends watches). Everything else answers an empty list. HTTPS with a self-signed certificate
(:func:`certificate`), or plain HTTP.

:meth:`Endpoint.lose_etcd` is the node after KCP removed its etcd member (before the server is deleted): the
apiserver still accepts connections (a TCP health check passes, the load balancer keeps sending), but every
request that needs etcd fails with 500 ``etcdserver: server stopped``, ``/readyz`` and ``/livez`` fail their
etcd check, open watches end with an ERROR event; ``/version`` still answers.

:meth:`Endpoint.shutdown` is kube-apiserver's graceful termination on SIGTERM with kubeadm's defaults
(``--shutdown-delay-duration`` 0, ``--shutdown-watch-termination-grace-period`` 0, ``--shutdown-send-retry-after``
false), what the guest's orderly shutdown does to it when Nova stops the server (:mod:`.power`): ``/readyz`` fails
its ``shutdown`` check, the listener closes (new connections are refused: the host is still up and sends RST), a
request in flight is answered (with ``Connection: close``, after which the connection is closed, as Go's
``http.Server.Shutdown`` stops keep-alives), an idle kept-alive connection is closed at once, an open watch ends
cleanly (its last chunk), and the shutdown returns once no connection is left, or after its timeout.

:meth:`Endpoint.stop` is what a deleted or powered-off server looks like from the network: nothing answers any
more. A listening socket stays (after a graceful shutdown: bound again), with its accept queue filled, so new
connections time out instead of being refused (a vanished VM sends no RST), and established connections get no
further byte.
"""

from __future__ import annotations

import datetime
import ipaddress
import contextlib
import json
import logging
import select
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

LOOPBACK = "127.0.0.1"
VERSION = {"major": "1", "minor": "31", "gitVersion": "v1.31.0", "platform": "linux/amd64"}
BOOKMARK_SECONDS = 1.0
DEFAULT_WATCH_SECONDS = 30.0
# A stopped endpoint holds its established connections this long without a byte, then drops them.
FROZEN_SECONDS = 600.0
# What kube-apiserver answers once its etcd member is gone
ETCD_STOPPED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "etcdserver: server stopped", "code": 500}
ETCD_CHECK_FAILED = b"[-]etcd failed: reason withheld\nreadyz check failed\n"
# What /readyz answers once kube-apiserver's graceful termination began
SHUTDOWN_CHECK_FAILED = b"[-]shutdown failed: reason withheld\nreadyz check failed\n"
# kube-apiserver's own bound on its graceful termination (Go's http.Server.Shutdown: ShutdownTimeout, 60 s)
SHUTDOWN_SECONDS = 60.0
ACCEPT_POLL = 0.05  # how soon the accepting loop sees a stop
LOG = logging.getLogger(__name__)


def certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for loopback (made once per folder): ``(cert, key)``."""
    cert, key = folder / "apiserver.crt", folder / "apiserver.key"
    if cert.exists() and key.exists():
        return cert, key
    folder.mkdir(parents=True, exist_ok=True)
    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")])
    now = datetime.datetime.now(datetime.timezone.utc)
    built = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(private.public_key())
             .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
             .not_valid_after(now + datetime.timedelta(days=3650))
             .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                         x509.IPAddress(ipaddress.ip_address(LOOPBACK))]),
                            critical=False)
             .sign(private, hashes.SHA256()))
    key_tmp, cert_tmp = key.with_suffix(".tmp-key"), cert.with_suffix(".tmp-crt")
    key_tmp.write_bytes(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                              serialization.NoEncryption()))
    cert_tmp.write_bytes(built.public_bytes(serialization.Encoding.PEM))
    key_tmp.replace(key)
    cert_tmp.replace(cert)
    return cert, key


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 16

    def __init__(self, endpoint: Endpoint, tls: ssl.SSLContext | None):
        self.endpoint = endpoint
        self.tls = tls
        super().__init__((LOOPBACK, 0), _Handler)

    def get_request(self):
        sock, address = super().get_request()
        if self.tls is not None:
            sock.settimeout(10)
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address

    def finish_request(self, request, client_address):
        if isinstance(request, ssl.SSLSocket):
            try:
                request.do_handshake()
            except (OSError, ssl.SSLError):
                return
            request.settimeout(None)
        super().finish_request(request, client_address)

    def handle_error(self, request, client_address):
        pass  # a client that went away is no news


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass

    def handle(self):
        """Requests one after the other on the connection (as the base class), but an idle connection is closed
        once the endpoint shuts down (:meth:`Endpoint.shutdown`)."""
        endpoint = self.server.endpoint
        with endpoint.connection():
            self.close_connection, first = False, True
            while not self.close_connection:
                if not endpoint.request_waiting(self.connection, first):
                    return  # idle while shutting down: closed
                self.ready = not endpoint.draining.is_set()  # /readyz as when the request came in
                self.handle_one_request()
                first = False

    def do_GET(self):  # noqa: N802 (the base class's name)
        endpoint = self.server.endpoint
        endpoint.freeze_if_stopped()
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        if endpoint.etcd_gone.is_set() and url.path != "/version":
            self._without_etcd(url.path)
        elif not self.ready and url.path == "/readyz":
            self._send(500, SHUTDOWN_CHECK_FAILED, "text/plain")
        elif query.get("watch", [""])[0] in ("true", "1"):
            self._watch(float(query.get("timeoutSeconds", [DEFAULT_WATCH_SECONDS])[0]))
        elif url.path in ("/readyz", "/livez", "/healthz"):
            self._send(200, b"ok", "text/plain")
        elif url.path == "/version":
            self._send(200, json.dumps(VERSION).encode(), "application/json")
        else:
            self._send(200, json.dumps({"kind": "List", "apiVersion": "v1", "items": []}).encode(),
                       "application/json")

    do_HEAD = do_GET  # noqa: N815

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if self.server.endpoint.draining.is_set():
            self.send_header("Connection", "close")  # no keep-alive while shutting down
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _without_etcd(self, path: str) -> None:
        if path in ("/readyz", "/livez", "/healthz"):
            self._send(500, ETCD_CHECK_FAILED, "text/plain")
        else:
            self._send(500, json.dumps(ETCD_STOPPED).encode(), "application/json")

    def _watch(self, seconds: float) -> None:
        endpoint = self.server.endpoint
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        end = time.monotonic() + seconds
        version = 0
        while time.monotonic() < end:
            endpoint.freeze_if_stopped()
            version += 1
            event = json.dumps({"type": "BOOKMARK", "object": {"kind": "ConfigMap", "apiVersion": "v1",
                                                               "metadata": {"resourceVersion": str(version)}}})
            if endpoint.draining.is_set():
                break  # shutting down: the watch ends cleanly
            if endpoint.etcd_gone.is_set():
                event, end = json.dumps({"type": "ERROR", "object": ETCD_STOPPED}), 0.0
            data = event.encode() + b"\n"
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
            endpoint.changed.wait(min(BOOKMARK_SECONDS, max(0.0, end - time.monotonic())))
        endpoint.freeze_if_stopped()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        if endpoint.draining.is_set():
            self.close_connection = True


class Endpoint:
    """One endpoint on a loopback port of its own; ``address`` is ``127.0.0.1:<port>``."""

    def __init__(self, tls_files: tuple[Path, Path] | None = None):
        context = None
        if tls_files is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls_files)
        self.stopped = threading.Event()
        self.etcd_gone = threading.Event()
        self.draining = threading.Event()  # the graceful shutdown began
        self.changed = threading.Event()  # set by stop() and lose_etcd(): open watches look again at once
        self._open = 0  # connections being served
        self._open_changed = threading.Condition()
        self._wake = socket.socketpair()  # readable once the shutdown began: idle connections look again
        self._listening = True
        self._server = _Server(self, context)
        self._port = self._server.server_address[1]
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._server.serve_forever, args=(ACCEPT_POLL,),
                                        name="apiserver-endpoint", daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return self._port

    @property
    def address(self) -> str:
        return f"{LOOPBACK}:{self.port}"

    @property
    def open_connections(self) -> int:
        return self._open

    @contextlib.contextmanager
    def connection(self):
        with self._open_changed:
            self._open += 1
        try:
            yield
        finally:
            with self._open_changed:
                self._open -= 1
                self._open_changed.notify_all()

    def request_waiting(self, sock: socket.socket, first: bool) -> bool:
        """Wait until the client sends a request on ``sock`` (True) or the endpoint shuts down while the
        connection is idle (False). As Go's ``http.Server.Shutdown``: a kept-alive connection between requests is
        idle (closed even if the next request's bytes just came: the client sends it again on a new connection);
        a new connection's first request is served."""
        while True:
            if self.draining.is_set() and not first:
                return False
            if isinstance(sock, ssl.SSLSocket) and sock.pending():
                return True
            try:
                readable, _, _ = select.select([sock, self._wake[0]], [], [])
            except (OSError, ValueError):
                return False  # closed under us
            if sock in readable:
                return True
            if self.draining.is_set():
                return False

    def freeze_if_stopped(self) -> None:
        if self.stopped.is_set():
            time.sleep(FROZEN_SECONDS)
            raise ConnectionAbortedError("the server is gone")

    def lose_etcd(self) -> None:
        """The node's etcd member is removed: requests fail from now on, while connections are still taken."""
        self.etcd_gone.set()
        self.changed.set()

    def shutdown(self, timeout: float = SHUTDOWN_SECONDS) -> bool:
        """kube-apiserver's graceful termination (see the module's doc): True if every connection was closed
        within ``timeout`` seconds, False if some were left (the caller then powers off: :meth:`stop`)."""
        if not self.draining.is_set():
            self.draining.set()  # /readyz fails, answers close their connection
            self.changed.set()  # open watches end
            self._wake[1].send(b"x")  # idle connections are closed
            self._server.shutdown()  # no accept any more
            self._server.socket.close()  # the listener is gone: new connections are refused
            self._listening = False
        deadline = time.monotonic() + timeout
        with self._open_changed:
            while self._open > 0 and not self.stopped.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._open_changed.wait(left)
        return self._open == 0

    def stop(self) -> None:
        """The server is gone (deleted, or powered off): stop accepting (new connections time out) and answer
        nothing more."""
        if self.stopped.is_set():
            return
        self.stopped.set()
        self.changed.set()
        with self._open_changed:
            self._open_changed.notify_all()
        self._server.shutdown()  # no accept any more; the socket keeps listening
        listener = self._server.socket if self._listening else self._listen_again()
        if listener is None:
            return
        for _ in range(self._server.request_queue_size + 2):
            held = socket.socket()
            held.setblocking(False)
            try:
                held.connect((LOOPBACK, self.port))
            except BlockingIOError:
                pass
            self._held.append(held)

    def _listen_again(self) -> socket.socket | None:
        """After a graceful shutdown closed the listener: a socket listening on the port again, never accepting
        (a powered-off VM answers nothing), or None if the port is taken meanwhile (it refuses then)."""
        hole = socket.socket()
        hole.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            hole.bind((LOOPBACK, self.port))
            hole.listen(self._server.request_queue_size)
        except OSError as exc:
            LOG.warning("endpoint %s: port taken after its shutdown, it refuses instead (%s)", self.address, exc)
            hole.close()
            return None
        self._held.append(hole)
        return hole

    def close(self) -> None:
        """Release the port (after :meth:`stop`: the address refuses from now on)."""
        self.stop()
        self._server.server_close()
        for held in self._held:
            held.close()
        for end in self._wake:
            end.close()
