"""The driver agent's listeners served by threads instead of forks: minicloud's one change to octavia-driver-agent.

Upstream's listeners (``octavia.api.drivers.driver_agent.driver_listener``) serve the status, statistics and get
sockets with ``ForkingUDSServer``: every request forks the listener process. The forked child then builds its own
database engine (the parent never touched the database), does one update and exits; in minicloud that costs about
60-70 ms of CPU per status update or statistics report (docs/benchmarks.md). :class:`ThreadingUDSServer` serves the
same requests with the same handlers (``StatusRequestHandler``...) in a thread of the listener process, which keeps
its engine between requests.

What stays upstream's: the three listener processes, their signal handling, the request handlers and the update
logic (a new database session per request, as before), ``exit_event`` and ``server.shutdown()``, the socket files'
clean-up. What differs: the process model of a request, and no cap on requests served at once (upstream's
``*_max_processes``, 50 by default, is the forking server's ``max_children``; set, but not used here).
"""

from __future__ import annotations

import socketserver


class ThreadingUDSServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """A unix stream server with a thread per request. Closing it waits for the requests under way
    (``block_on_close``), as upstream's forking server waits for its children."""

    block_on_close = True
    daemon_threads = False


def serve_listeners_with_threads() -> None:
    """Make the driver agent's listeners use :class:`ThreadingUDSServer`: call before ``driver_agent.main()``
    (the listener processes it forks keep the substitution)."""
    from octavia.api.drivers.driver_agent import driver_listener

    driver_listener.ForkingUDSServer = ThreadingUDSServer
