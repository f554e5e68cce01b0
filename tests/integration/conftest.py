# -*- coding: utf-8 -*-
"""Integration tests against minicloud (real Keystone, Neutron, Octavia, nova-api; emulated Kubernetes and CAPI).

Modules run in this process (``run_module``, ``run_in_process``) or in a real ``ansible-playbook``
(``run_module(..., playbook=True)``, ``playbooks``); minicloud is driven through its Python API and its command
line, in this process too (``cloud_driver.TestCloud``). One minicloud serves the whole run (one per worker with
pytest-xdist); set MINICLOUD_STATE_DIR (and MINICLOUD_WORKER_STATE_DIRS for the other workers) to use clouds that
are already up (they are then left running).

Every module result a test gets from these runs is held against the module's RETURN documentation
(``return_docs.check_result``, in ``inprocess.run_module`` and ``PlaybookRunner.module``): a key documented as
``returned: always`` is in it, failed results and check mode included.
"""

import json
import os
import uuid

import pytest

import inprocess
from cloud_driver import TestCloud
import playbook_runner
from playbook_runner import PlaybookRunner

# Seconds a test cloud may take to come up: a cold start initialises four databases, and with xdist workers
# (three in make test) several clouds may start at once on a busy machine.
UP_TIMEOUT = 300


# Modules whose tests take a minute or more (real rollouts, fleet waves, the whole flight check, the fuzz sample), run
# first, the longest first:
# with pytest-xdist's worksteal, a long test started last keeps one worker busy while the other has nothing left.
LONG_FIRST = ("test_fleet_waves.py", "test_rollout_property.py", "test_fleet_runner.py",
              "test_rollout_guard_stop_failure.py", "test_rollout_guard_direct.py", "test_flight_check.py",
              "test_fuzz_modules.py", "test_cluster_move.py")


def pytest_collection_modifyitems(items):
    def rank(item):
        name = item.path.name
        return LONG_FIRST.index(name) if name in LONG_FIRST else len(LONG_FIRST)

    items.sort(key=rank)  # stable: file order otherwise


def _given_cloud():
    """The state folder of a cloud that is up already for this process: MINICLOUD_STATE_DIR for the first
    pytest-xdist worker (or a run without workers), the n-th entry of MINICLOUD_WORKER_STATE_DIRS (folders
    separated by ':', as ``make test`` starts them) for worker n + 1; None when there is none."""
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0")[2:])
    given = [os.environ.get("MINICLOUD_STATE_DIR")] + os.environ.get("MINICLOUD_WORKER_STATE_DIRS", "").split(":")
    return (given[worker] or None) if worker < len(given) else None


@pytest.fixture(scope="session")
def minicloud(tmp_path_factory):
    """The run's minicloud: one that is up already (``_given_cloud``; left running), else one started here in a
    temporary folder on free ports and stopped at the end. With pytest-xdist (``-n 2``) each worker has a cloud of
    its own, so that no two tests ever share a cloud (faults, the emulator's mode and request counts are per
    cloud)."""
    before = os.environ.get("MINICLOUD_STATE_DIR")
    given = _given_cloud()
    cloud = TestCloud(given or tmp_path_factory.mktemp("minicloud"))
    # what the tests start (the clusterctl stand-in, minicloud verbs in plays) finds this cloud, not another
    os.environ["MINICLOUD_STATE_DIR"] = str(cloud.state_dir)
    try:
        if given:
            cloud.process("status")
        else:
            # Free ports keep the test cloud clear of other clouds on this machine (a developer's, a parallel run).
            cloud.process("up", "--port-offset", "auto", "--timeout", UP_TIMEOUT)
        yield cloud
    finally:
        if not given:
            cloud.process("down", check=False)
        if before is None:
            os.environ.pop("MINICLOUD_STATE_DIR", None)
        else:
            os.environ["MINICLOUD_STATE_DIR"] = before


@pytest.fixture
def cloud(minicloud):
    """The session's minicloud, with the emulator normal and no faults before and after each test; the CAPI
    clusters the test seeded are removed afterwards."""
    minicloud.normal()
    clusters = minicloud.capi_clusters()
    yield minicloud
    minicloud.normal()
    minicloud.remove_capi_clusters(keep=clusters)


@pytest.fixture
def lb(cloud):
    """A load balancer with three ACTIVE members (port 6443) and no health monitor, deleted afterwards."""
    name = "it-%s" % uuid.uuid4().hex[:6]
    created = cloud.json("lb", "create", name, "--members", 3)
    yield created
    cloud.cli("lb", "delete", name, check=False)


@pytest.fixture(scope="session")
def shared_lb(minicloud):
    """One load balancer with three ACTIVE members (port 6443, no monitor) for the tests that only read it
    (refusals, faults on reads, bad input): created once per run instead of once per test."""
    name = "it-shared-%s" % uuid.uuid4().hex[:6]
    created = minicloud.json("lb", "create", name, "--members", 3)
    yield created
    minicloud.cli("lb", "delete", name, check=False)


class InProcessRun:
    """A module run in this process: its result, ``rc`` 2 when it failed (as ``ansible-playbook`` would exit),
    and its output (the JSON it printed)."""

    def __init__(self, result):
        self.result = result
        self.rc = 2 if result.get("failed") else 0
        self.output = json.dumps(result, indent=1)


def _in_process(minicloud, module, args, check_mode=False, diff=False):
    name = module.rsplit(".", 1)[-1]
    return inprocess.run_module(name, args, check_mode=check_mode, diff=diff,
                                env={"OS_CLIENT_CONFIG_FILE": str(minicloud.clouds_yaml)})


@pytest.fixture
def run_in_process(minicloud):
    """Run one module in this process (``inprocess.run_module``) against the session's minicloud and return
    its result: the module's own argument checks, runner and requests, without a playbook around it."""

    def run(module, args, check_mode=False, diff=False):
        return _in_process(minicloud, module, args, check_mode=check_mode, diff=diff)

    return run


@pytest.fixture(scope="session")
def collections_path(tmp_path_factory):
    return playbook_runner.collections_path(lambda: tmp_path_factory.mktemp("collections"))


@pytest.fixture
def playbooks(minicloud, collections_path, tmp_path):
    """The one ``ansible-playbook`` runner (``playbook_runner.PlaybookRunner``) on the session's minicloud."""
    return PlaybookRunner(tmp_path, collections_path, minicloud.clouds_yaml)


@pytest.fixture
def run_module(minicloud, playbooks):
    """Run one module task and return its run (``result``, ``rc``, ``output``).

    In this process by default (argument checks, refusals, check mode, diff and plain outcomes: what a playbook
    adds nothing to); ``playbook=True`` (and any ``verbosity``) runs it in a real ``ansible-playbook`` instead:
    every module keeps such a run, and so does every test of a fault or a race."""

    def run(module, args, check_mode=False, verbosity=0, diff=False, playbook=False):
        if playbook or verbosity:
            return playbooks.module(module, args, check_mode=check_mode, diff=diff, verbosity=verbosity)
        return InProcessRun(_in_process(minicloud, module, args, check_mode=check_mode, diff=diff))

    return run
