# -*- coding: utf-8 -*-
"""node_registration_audit against minicloud: seeded Nova servers, emulated Kubernetes Nodes for some of them."""

import random
import time
import uuid

import pytest

import races

MODULE = "flightcontrol.openstack.node_registration_audit"


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:6])


def servers(cloud, prefix, count, network="regnet"):
    """``count`` servers ``prefix-1..N`` (one seeding call); returns them with their ports."""
    return cloud.json("server", "create", prefix, "--network", network, "--count", count)


def register(cloud, server):
    """A Node named like the server, with the server's address (matched by name: no providerID)."""
    cidr = "10.%d.%d.0/24" % (random.randint(100, 250), random.randint(0, 255))
    cloud.cli("kube", "node", "create", server["name"], "--pod-cidr", cidr, "--address",
              server["ports"][0]["ip_address"])
    return server["name"]


def unregister(cloud, names):
    for name in names:
        cloud.cli("kube", "node", "delete", name, check=False)


def task_states(cloud, ids):
    conn = cloud.sdk()
    listed = conn.compute.get("/servers/detail", raise_exc=True).json()["servers"]
    return dict((s["id"], s.get("OS-EXT-STS:task_state")) for s in listed if s["id"] in ids)


def run(run_module, cloud, prefix, check_mode=False, diff=False, playbook=False, **args):
    task = dict(cloud="minicloud", servers=[prefix + "-*"],
                kubernetes={"kubeconfig": str(cloud.state_dir / "kubeconfig")})
    task.update(args)
    return run_module(MODULE, task, check_mode=check_mode, diff=diff, playbook=playbook).result


def ok(result):
    assert not result.get("failed"), result.get("msg") or result
    return result


def test_audit_reports_the_server_that_never_registered_and_waits_for_young_ones(cloud, run_module):
    prefix = unique("reg")
    made = servers(cloud, prefix, 3)
    nodes = [register(cloud, s) for s in made[:2]]
    try:
        audit = ok(run(run_module, cloud, prefix, registration_timeout=0, playbook=True))
        assert not audit["changed"] and not audit["healthy"]
        assert [s["name"] for s in audit["unregistered"]] == [made[2]["name"]]
        by_name = dict((s["name"], s) for s in audit["servers"])
        assert by_name[made[0]["name"]]["node"] == made[0]["name"] and by_name[made[0]["name"]]["matched_by"] == "name"
        assert by_name[made[2]["name"]]["state"] == "unregistered" and by_name[made[2]["name"]]["node"] is None
        assert audit["counts"]["registered"] == 2 and audit["counts"]["unregistered"] == 1
        assert audit["deleted"] == [] and audit["api_calls"] >= 2

        young = ok(run(run_module, cloud, prefix, registration_timeout=3600))
        assert young["healthy"] and young["unregistered"] == []
        assert by_state(young, "waiting") == [made[2]["name"]]

        failing = run(run_module, cloud, prefix, registration_timeout=0, fail_on_findings=True)
        assert failing.get("failed") and made[2]["name"] in failing["msg"]
    finally:
        unregister(cloud, nodes)


def by_state(result, state):
    return [s["name"] for s in result["servers"] if s["state"] == state]


def test_cleaned_deletes_only_the_oldest_one_and_check_mode_writes_nothing(cloud, run_module):
    prefix = unique("cln")
    oldest = servers(cloud, prefix + "-a", 1)[0]
    time.sleep(1.1)  # Nova's created has one-second resolution
    rest = servers(cloud, prefix + "-b", 3)
    nodes = [register(cloud, rest[0])]
    ids = [oldest["id"]] + [s["id"] for s in rest]
    try:
        cloud.requests(reset=True)
        planned = ok(run(run_module, cloud, prefix, check_mode=True, diff=True, registration_timeout=0,
                         state="cleaned"))
        assert cloud.writes("compute") == {}
        assert planned["changed"] and [(d["name"], d["status"]) for d in planned["deleted"]] == [
            (oldest["name"], "planned")]
        assert sorted(s["name"] for s in planned["not_deleted"]) == sorted(s["name"] for s in rest[1:])
        assert all("max_deletions" in s["reason"] for s in planned["not_deleted"])
        assert oldest["name"] not in planned["diff"]["after"]["servers"]
        assert set(task_states(cloud, ids).values()) == {None}

        cloud.requests(reset=True)
        cleaned = ok(run(run_module, cloud, prefix, registration_timeout=0, state="cleaned", max_deletions=1))
        writes = cloud.writes("compute")
        assert writes == {"DELETE": {"/v2.1/servers/{id}": 1}}, writes
        assert cleaned["changed"] and [(d["name"], d["status"]) for d in cleaned["deleted"]] == [
            (oldest["name"], "done")]
        # Only the oldest unregistered server went (at once: Nova deletes a server without a compute host
        # locally), with its ports; the others are untouched.
        states = task_states(cloud, ids)
        assert oldest["id"] not in states and all(states[s["id"]] is None for s in rest)
        assert list(cloud.sdk().network.ports(device_id=oldest["id"])) == []

        cloud.requests(reset=True)
        again = ok(run(run_module, cloud, prefix, check_mode=True, registration_timeout=0, state="cleaned",
                       max_deletions=1))
        # The next run goes for the next oldest; the registered one is never a candidate.
        assert [d["name"] for d in again["deleted"]] == [rest[1]["name"]]
        assert by_state(again, "deleting") == []
    finally:
        unregister(cloud, nodes)


def test_refuses_to_delete_when_no_server_is_a_node(cloud, run_module):
    prefix = unique("ref")
    servers(cloud, prefix, 2)
    other = unique("foreign-node")
    cloud.cli("kube", "node", "create", other, "--pod-cidr", "10.99.1.0/24", "--address", "10.99.0.1")
    try:
        cloud.requests(reset=True)
        result = ok(run(run_module, cloud, prefix, registration_timeout=0, state="cleaned", max_deletions=5))
        assert result["deleted"] == [] and not result["changed"] and "every server" in result["refused"]
        assert len(result["not_deleted"]) == 2 and all(s["reason"].startswith("refused") for s in result["not_deleted"])
        assert cloud.writes("compute") == {}
    finally:
        unregister(cloud, [other])


def test_neither_servers_nor_metadata_is_refused(cloud, run_module):
    result = run_module(MODULE, dict(cloud="minicloud"), check_mode=False).result
    assert result.get("failed") and "servers" in result["msg"] and "server_metadata" in result["msg"]


def test_a_server_in_error_is_a_finding_at_once_and_may_be_cleaned_while_young(cloud, run_module):
    """A server whose boot failed never becomes a Node: it is a finding however young, and a clean-up may
    delete it while a young booted server still has time to register; an ERROR server whose Node exists is
    left alone."""
    prefix = unique("err")
    booted = servers(cloud, prefix + "-ok", 2)
    time.sleep(1.1)  # Nova's created has one-second resolution: the failed ones are the youngest
    failed = cloud.json("server", "create", prefix + "-bad", "--network", "regnet", "--count", 2, "--error")
    assert [s["status"] for s in failed] == ["ERROR", "ERROR"]
    nodes = [register(cloud, booted[0]), register(cloud, failed[1])]
    try:
        audit = ok(run(run_module, cloud, prefix, registration_timeout=3600))
        assert not audit["healthy"] and audit["counts"]["error"] == 1
        assert by_state(audit, "error") == [failed[0]["name"]]
        assert by_state(audit, "waiting") == [booted[1]["name"]]  # young and booted: not a finding yet
        kept = [s for s in audit["servers"] if s["name"] == failed[1]["name"]][0]
        assert kept["state"] == "registered" and "in ERROR but its Node exists" in kept["reason"]

        cleaned = ok(run(run_module, cloud, prefix, registration_timeout=3600, state="cleaned", max_deletions=5))
        assert [(d["name"], d["status"]) for d in cleaned["deleted"]] == [(failed[0]["name"], "done")]
        remaining = dict((s.name, s.status) for s in cloud.sdk().compute.servers() if s.name.startswith(prefix))
        assert sorted(remaining) == sorted([booted[0]["name"], booted[1]["name"], failed[1]["name"]])
        assert remaining[failed[1]["name"]] == "ERROR"
    finally:
        unregister(cloud, nodes)


# -- names with glob characters, entries that match nothing, a world that moves before the deletion ---------

def glob_world(cloud, prefix):
    """Servers ``<prefix>-gm[1]`` and ``<prefix>-gm1`` (neither a Node, the oldest first) and ``<prefix>-gmreg`` (a
    Node); returns them by short name and the Nodes made."""
    made = {}
    for short in ("gm1", "gm[1]", "gmx", "gmreg"):
        made[short] = cloud.api.create_servers(["%s-%s" % (prefix, short)], "regnet")[0]
        time.sleep(1.1)  # Nova's created has one-second resolution: the order above is oldest first
    return made, [register(cloud, made["gmreg"])]


def test_a_name_with_a_character_class_deletes_that_server_only(cloud, run_module):
    """``servers: ["<p>-gm[1]", "<p>-gmreg"]`` names the server called ``<p>-gm[1]``: the clean-up deletes it,
    never ``<p>-gm1`` (which the character class would match); a pattern that matches ``gm1`` only through ``[1]``
    or ``?`` reports it but never deletes it."""
    prefix = unique("glob")
    made, nodes = glob_world(cloud, prefix)
    try:
        classed = run(run_module, cloud, prefix, registration_timeout=0, state="cleaned", max_deletions=5,
                      servers=[prefix + "-gm[1x]*", prefix + "-gmreg"], check_mode=True)
        assert not classed.get("failed"), classed["msg"]
        assert sorted(s["name"] for s in classed["unregistered"]) == sorted([made["gm1"]["name"], made["gmx"]["name"]])
        assert classed["deleted"] == []  # both matched only through the class [1x]
        assert all("'?' or '[...]'" in s["reason"] for s in classed["not_deleted"]), classed["not_deleted"]

        cloud.requests(reset=True)
        cleaned = ok(run(run_module, cloud, prefix, registration_timeout=0, state="cleaned", max_deletions=5,
                         servers=[prefix + "-gm[1]", prefix + "-gmreg"], playbook=True))
        assert [(d["name"], d["status"]) for d in cleaned["deleted"]] == [(made["gm[1]"]["name"], "done")]
        assert sorted(s["name"] for s in cleaned["servers"]) == sorted([made["gm[1]"]["name"], made["gmreg"]["name"]])
        left = set(s["name"] for s in cloud.api.list_servers())
        assert made["gm1"]["name"] in left and made["gmx"]["name"] in left and made["gm[1]"]["name"] not in left
    finally:
        unregister(cloud, nodes)


@pytest.mark.parametrize("entries, words", [
    (["{p}-*", "{p}-typo"], ["'{p}-typo' matched no server"]),
    (["{p}-gm[2]", "{p}-gmreg"], ["'{p}-gm[2]' matched no server"]),  # no '*': no pattern, gm2 does not exist
    (["{p}-none-*"], ["'{p}-none-*' matched no server"]),
], ids=["typo", "class-without-star", "pattern"])
def test_an_entry_that_matches_nothing_fails_and_deletes_nothing(cloud, run_module, entries, words):
    prefix = unique("miss")
    made, nodes = glob_world(cloud, prefix)
    try:
        cloud.requests(reset=True)
        result = run(run_module, cloud, prefix, registration_timeout=0, state="cleaned", max_deletions=5,
                     servers=[e.format(p=prefix) for e in entries])
        assert result.get("failed"), result
        for word in words:
            assert word.format(p=prefix) in result["msg"], result["msg"]
        assert "nothing was deleted" in result["msg"] and not result["changed"] and result["healthy"] is False
        assert result["unmatched"] == [e.format(p=prefix) for e in entries if "typo" in e or "[2]" in e or "none" in e]
        assert cloud.writes("compute") == {}
        assert len([s for s in cloud.api.list_servers() if s["name"].startswith(prefix)]) == len(made)
    finally:
        unregister(cloud, nodes)


def test_a_server_that_became_a_node_after_the_audit_read_is_not_deleted(cloud, run_module):
    """The read of the servers is held; meanwhile the oldest unregistered server registers (its Node appears);
    the clean-up judges the deletion again on the read just before it, and keeps the server."""
    prefix = unique("race")
    made, nodes = glob_world(cloud, prefix)
    late = made["gm1"]
    cloud.requests(reset=True)
    try:
        result, _node = races.with_concurrent_change(
            cloud, "compute", "GET", "*/servers/detail",
            lambda: run(run_module, cloud, prefix, registration_timeout=0, state="cleaned", max_deletions=1,
                        servers=[prefix + "-gm1", prefix + "-gmreg"], playbook=True),
            lambda: nodes.append(register(cloud, late)))
        assert not result.get("failed"), result["msg"]
        assert result["deleted"] == [] and not result["changed"]
        assert "since the audit: registered as Node %s" % late["name"] in result["not_deleted"][0]["reason"]
        assert cloud.writes("compute") == {}
        assert late["name"] in set(s["name"] for s in cloud.api.list_servers())
    finally:
        unregister(cloud, nodes)
