# -*- coding: utf-8 -*-
"""Did a failed connection send the request? Real connections on this machine: refused, and closed after the
request was read."""

import socket
import threading

import pytest
from keystoneauth1 import session as ksa_session

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.transport import failed_before_sending
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import describe_fault


def refused_port():
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    return port


def failure(url, timeout=5):
    try:
        ksa_session.Session().get(url, timeout=timeout)
    except Exception as exc:  # pylint: disable=broad-except
        return exc
    raise AssertionError("the request did not fail")


@pytest.fixture
def closing_server():
    """Reads one request, then closes the connection without an answer."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def serve():
        conn, _addr = server.accept()
        conn.recv(65536)
        conn.close()
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    thread.join(5)
    server.close()


def test_a_refused_connection_never_sent_the_request():
    exc = failure("http://127.0.0.1:%d/v2.0/security-groups" % refused_port())
    assert failed_before_sending(exc)
    fault = describe_fault(exc)
    assert fault.connection_error and not fault.maybe_committed


def test_a_connection_closed_after_the_request_may_have_committed(closing_server):
    exc = failure("http://127.0.0.1:%d/v2.0/security-groups" % closing_server)
    assert not failed_before_sending(exc)
    fault = describe_fault(exc)
    assert fault.connection_error and fault.maybe_committed


def test_exceptions_without_a_connection_in_their_chain_are_not_before_sending():
    assert not failed_before_sending(ValueError("x"))
    try:
        try:
            raise ConnectionRefusedError("refused")
        except ConnectionRefusedError:
            raise RuntimeError("wrapped")  # pylint: disable=raise-missing-from
    except RuntimeError as wrapped:
        assert failed_before_sending(wrapped)
