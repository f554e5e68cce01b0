"""Gate fault rules: a matching request is held in the service's middleware until the rule is released
from elsewhere (another thread here, another process through the command line), then goes through."""

import json
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from minicloud.runtime.control import Minicloud, MinicloudError
from minicloud.traffic.faults import FaultRule
from minicloud.traffic.middleware import TrafficMiddleware
from minicloud.traffic.store import TrafficStore


class App:
    """The real service: records which paths reached it."""

    def __init__(self):
        self.seen = []

    def __call__(self, environ, start_response):
        self.seen.append(environ["PATH_INFO"])
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"real"]


class Request(threading.Thread):
    """One request through the middleware, in a thread of its own as in the threaded server."""

    def __init__(self, mw, method="PUT", path="/v2.0/routers/r1"):
        super().__init__(daemon=True)
        self.mw, self.method, self.path = mw, method, path
        self.status = self.body = None
        self.start()

    def run(self):
        seen = {}

        def start_response(status, headers):
            seen["status"] = status

        env = {"REQUEST_METHOD": self.method, "PATH_INFO": self.path, "HTTP_USER_AGENT": "openstacksdk"}
        self.body = b"".join(self.mw(env, start_response))
        self.status = seen["status"]


@pytest.fixture
def cloud(tmp_path):
    return Minicloud(tmp_path / "state")


@pytest.fixture
def app():
    return App()


@pytest.fixture
def mw(cloud, app):
    # The service's own store (its own connection), as in a service process.
    return TrafficMiddleware(app, "network", TrafficStore(cloud.state.traffic_db))


def test_a_request_blocks_until_released_then_reaches_the_service(cloud, mw, app):
    gate = cloud.add_fault("network", method="PUT", path="/v2.0/routers/*", gate=True)
    assert gate["gate"] and gate["held"] == 0
    request = Request(mw)
    assert cloud.wait_held(gate["id"], 1, timeout=5)["held"] == 1
    request.join(0.5)
    assert request.is_alive() and app.seen == []
    other = Request(mw, "GET", "/v2.0/routers")  # not matched: not held
    other.join(5)
    assert other.status == "200 OK"
    released = cloud.release_fault(gate["id"])
    assert released["held"] == 1
    request.join(5)
    assert request.status == "200 OK" and request.body == b"real"
    assert app.seen == ["/v2.0/routers", "/v2.0/routers/r1"]
    assert cloud.faults() == []


def test_held_count_and_a_gate_with_a_count(cloud, mw, app):
    gate = cloud.add_fault("network", method="PUT", path="/v2.0/routers/*", gate=True, count=2)
    held = [Request(mw, path=f"/v2.0/routers/r{i}") for i in (1, 2)]
    cloud.wait_held(gate["id"], 2, timeout=5)
    (listed,) = cloud.faults()
    assert listed["held"] == 2 and listed["fired"] == 2 and listed["spent"]
    third = Request(mw, path="/v2.0/routers/r3")  # the gate is spent: through at once
    third.join(5)
    assert third.status == "200 OK" and all(r.is_alive() for r in held)
    assert cloud.release_fault(gate["id"])["held"] == 2
    for request in held:
        request.join(5)
        assert request.status == "200 OK"


def test_releasing_one_gate_leaves_the_other_holding_and_clear_releases_all(cloud, mw, app):
    first = cloud.add_fault("network", method="PUT", path="/v2.0/routers/*", gate=True)
    second = cloud.add_fault("network", method="PUT", path="/v2.0/ports/*", gate=True)
    router, port = Request(mw), Request(mw, path="/v2.0/ports/p1")
    cloud.wait_held(first["id"], 1, timeout=5)
    cloud.wait_held(second["id"], 1, timeout=5)
    cloud.release_fault(first["id"])
    router.join(5)
    assert router.status == "200 OK"
    port.join(0.5)
    assert port.is_alive()
    assert [(r["id"], r["held"]) for r in cloud.faults()] == [(second["id"], 1)]
    assert cloud.clear_faults() == 1
    port.join(5)
    assert port.status == "200 OK" and cloud.faults() == []


def test_a_gate_never_released_answers_503_after_its_bound(cloud, app):
    mw = TrafficMiddleware(app, "network", TrafficStore(cloud.state.traffic_db), gate_timeout=0.5)
    gate = cloud.add_fault("network", gate=True)
    started = time.monotonic()
    request = Request(mw)
    request.join(5)
    assert 0.5 <= time.monotonic() - started < 3
    assert request.status == "503 Service Unavailable" and app.seen == []
    body = json.loads(request.body)
    assert "gate" in body["NeutronError"]["message"] and "not released" in body["NeutronError"]["message"]
    (listed,) = cloud.faults()
    assert listed["id"] == gate["id"] and listed["held"] == 0  # still there, holding nothing


def test_refusals(cloud):
    with pytest.raises(ValueError, match="gate"):
        cloud.add_fault("network", gate=True, status=503)
    with pytest.raises(ValueError, match="gate"):
        cloud.add_fault("network", gate=True, delay=1)
    with pytest.raises(MinicloudError, match="no fault rule 42"):
        cloud.release_fault(42)
    plain = cloud.add_fault("network", status=503)
    with pytest.raises(MinicloudError, match="not a gate"):
        cloud.wait_held(plain["id"], 1, timeout=0.1)
    gate = cloud.add_fault("network", gate=True)
    with pytest.raises(MinicloudError, match="holds 0 request"):
        cloud.wait_held(gate["id"], 1, timeout=0.2)
    assert cloud.release_fault(plain["id"])["status"] == 503  # any rule can be released (removed)


def test_a_state_folder_from_before_gates_gets_the_columns(tmp_path):
    db = sqlite3.connect(tmp_path / "t.sqlite")
    db.executescript("""CREATE TABLE rules (id INTEGER PRIMARY KEY AUTOINCREMENT, service TEXT NOT NULL,
        method TEXT NOT NULL, path TEXT NOT NULL, status TEXT, retry_after REAL, remaining INTEGER,
        delay REAL NOT NULL DEFAULT 0, fired INTEGER NOT NULL DEFAULT 0);
        INSERT INTO rules (service, method, path, status) VALUES ('network', '*', '*', '503');""")
    db.commit()
    db.close()
    store = TrafficStore(tmp_path / "t.sqlite")
    (old,) = store.rules()
    assert old.status == 503 and not old.gate
    assert store.add_rule(FaultRule(service="network", gate=True)).gate


SERVICE_PROCESS = textwrap.dedent("""
    import json, sys, time
    from minicloud.traffic.middleware import TrafficMiddleware
    from minicloud.traffic.store import TrafficStore

    def app(environ, start_response):
        start_response("200 OK", [])
        return [b"real"]

    mw = TrafficMiddleware(app, "network", TrafficStore(sys.argv[1]))
    seen = {}
    env = {"REQUEST_METHOD": "PUT", "PATH_INFO": "/v2.0/routers/r1", "HTTP_USER_AGENT": "openstacksdk"}
    cpu, started = time.process_time(), time.monotonic()
    body = b"".join(mw(env, lambda status, headers: seen.update(status=status)))
    print(json.dumps({"status": seen["status"], "body": body.decode(), "elapsed": time.monotonic() - started,
                      "cpu": time.process_time() - cpu}))
""")


def test_held_in_one_process_released_by_the_command_line_in_another(cloud):
    def cli(*args):
        done = subprocess.run([sys.executable, "-m", "minicloud", "--state-dir", str(cloud.state_dir), "fault", *args],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    gate = json.loads(cli("add", "--service", "network", "--method", "PUT", "--path", "/v2.0/routers/*", "--gate"))
    service = subprocess.Popen([sys.executable, "-c", SERVICE_PROCESS, str(cloud.state.traffic_db)],
                               stdout=subprocess.PIPE, text=True)
    try:
        cloud.wait_held(gate["id"], 1, timeout=30)
        time.sleep(1.0)
        assert service.poll() is None, "the request went through while its gate was closed"
        (listed,) = json.loads(cli("list"))
        assert listed["gate"] and listed["held"] == 1
        assert cli("release", str(gate["id"])) == f"released fault rule {gate['id']} (1 held request(s) let through)\n"
        out, _ = service.communicate(timeout=10)
    finally:
        service.kill()
    result = json.loads(out)
    assert result["status"] == "200 OK" and result["body"] == "real"
    assert result["elapsed"] >= 1.0
    assert result["cpu"] < 0.2, "waiting at a gate must not use the CPU"
