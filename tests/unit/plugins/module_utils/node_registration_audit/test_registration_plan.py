# -*- coding: utf-8 -*-

import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.flightcontrol.openstack.plugins.module_utils.node_registration_audit import plan as registration_plan

NOW = datetime.datetime(2025, 5, 1, 12, 0, 0, tzinfo=registration_plan.UTC)
TIMEOUT = 2700


def created(minutes_ago):
    return (NOW - datetime.timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def server(name, minutes_ago=60, status="ACTIVE", sid=None, metadata=None, task_state=None):
    return dict(id=sid or "id-" + name, name=name, status=status, created=created(minutes_ago),
                metadata=metadata or {}, task_state=task_state)


def node(name, provider_id=None):
    return dict(name=name, provider_id=provider_id)


def states(records):
    return dict((r["name"], r["state"]) for r in records)


# -- selection and matching ---------------------------------------------------------------------

def test_servers_selected_by_glob_id_and_metadata():
    servers = [server("prod-node-1", metadata={"cluster": "prod"}), server("prod-node-2"),
               server("dev-node-1", metadata={"cluster": "prod"}), server("other", sid="abc")]
    assert [s["name"] for s in registration_plan.select_servers(servers, ["prod-node-*", "abc"])] == [
        "prod-node-1", "prod-node-2", "other"]
    assert [s["name"] for s in registration_plan.select_servers(servers, None, {"cluster": "prod"})] == ["prod-node-1", "dev-node-1"]
    assert [s["name"] for s in registration_plan.select_servers(servers, ["prod-*"], {"cluster": "prod"})] == ["prod-node-1"]


def test_provider_id_wins_over_names_and_names_match_case_insensitively():
    servers = [server("Node-A", sid="u1"), server("node-b", sid="u2"), server("node-c", sid="u3")]
    nodes = [node("whatever", "openstack:///u1"), node("node-a"), node("node-b", "openstack://region-1/u2")]
    matched = registration_plan.match_nodes(servers, nodes)
    assert matched == {"u1": ("whatever", "providerID"), "u2": ("node-b", "providerID")}
    # A Node without a providerID matches by name; "node-a" is free once u1 matched by providerID.
    assert registration_plan.match_nodes([server("NODE-A", sid="u9")], [node("node-a")]) == {"u9": ("node-a", "name")}


def test_provider_id_of_another_cloud_is_no_openstack_id():
    assert registration_plan.provider_server_id("aws:///eu-west-1a/i-123") is None
    assert registration_plan.provider_server_id("openstack:///") is None
    assert registration_plan.provider_server_id("openstack:///0b5f") == "0b5f"


# -- classification ----------------------------------------------------------------------------

def test_states_by_node_age_status_and_task_state():
    servers = [server("reg", 120), server("young", 10), server("old", 46), server("err", 1, status="ERROR"),
               server("going", 300, task_state="deleting"), server("shelved", 300, status="SHELVED_OFFLOADED"),
               server("reg-err", 100, status="ERROR")]
    records = registration_plan.classify(servers, [node("reg"), node("reg-err")], NOW, TIMEOUT)
    assert states(records) == {"reg": "registered", "young": "waiting", "old": "unregistered", "err": "error",
                               "going": "deleting", "shelved": "deleting", "reg-err": "registered"}
    assert [r["name"] for r in records][:2] in (["going", "shelved"], ["shelved", "going"])  # oldest first
    old = next(r for r in records if r["name"] == "old")
    assert old["age"] == 46 * 60 and old["node"] is None and "45m" in old["reason"]


def test_timeout_zero_makes_every_server_without_node_unregistered():
    records = registration_plan.classify([server("a", 0), server("b", 0)], [node("a")], NOW, 0)
    assert states(records) == {"a": "registered", "b": "unregistered"}


@pytest.mark.parametrize("text", ["2025-05-01T11:00:00Z", "2025-05-01T11:00:00.123456Z", "2025-05-01T11:00:00+00:00",
                                  "2025-05-01T13:00:00+02:00", "2025-05-01T11:00:00"])
def test_nova_time_forms(text):
    assert abs((NOW - registration_plan.parse_time(text)).total_seconds() - 3600) < 1


def test_bad_time_is_a_plan_error():
    with pytest.raises(registration_plan.PlanError, match="not an ISO 8601"):
        registration_plan.parse_time("yesterday")


# -- deletions ---------------------------------------------------------------------------------

def test_oldest_first_and_capped():
    servers = [server("reg", 500), server("u1", 100), server("u2", 300), server("e", 5, status="ERROR")]
    records = registration_plan.classify(servers, [node("reg")], NOW, TIMEOUT)
    delete, skipped, refusal = registration_plan.plan_deletions(records, 1, 1)
    assert refusal is None
    assert [r["name"] for r in delete] == ["u2"]
    assert [(s["name"], "max_deletions" in s["reason"]) for s in skipped] == [("u1", True), ("e", True)]
    delete, skipped, _refusal = registration_plan.plan_deletions(records, 5, 1)
    assert [r["name"] for r in delete] == ["u2", "u1", "e"] and skipped == []


def test_refused_when_no_node_is_visible():
    records = registration_plan.classify([server("a"), server("b")], [], NOW, TIMEOUT)
    delete, skipped, refusal = registration_plan.plan_deletions(records, 1, 0)
    assert delete == [] and "no Kubernetes Node is visible" in refusal
    assert sorted(s["name"] for s in skipped) == ["a", "b"] and all("refused" in s["reason"] for s in skipped)


def test_refused_when_no_server_is_a_node_even_if_nodes_exist():
    records = registration_plan.classify([server("a"), server("b")], [node("x"), node("y")], NOW, TIMEOUT)
    delete, _skipped, refusal = registration_plan.plan_deletions(records, 10, 2)
    assert delete == [] and "every server" in refusal


def test_nothing_to_delete_is_no_refusal():
    records = registration_plan.classify([server("a", 10)], [], NOW, TIMEOUT)  # still within the timeout
    assert registration_plan.plan_deletions(records, 1, 0) == ([], [], None)


# -- names with glob characters, entries that match nothing --------------------------------------

def test_gm1_is_never_deleted_for_an_entry_gm_bracket_1():
    """``servers: ["gm[1]", "gmreg"]`` with servers gm[1] and gm1: the entry names gm[1] only; gm1 is not
    chosen, so never deleted."""
    servers = [server("gm[1]", 500), server("gm1", 400), server("gmreg", 600)]
    selection = registration_plan.choose_servers(servers, ["gm[1]", "gmreg"])
    assert [s["name"] for s in selection.chosen] == ["gm[1]", "gmreg"] and selection.missing == []
    records = registration_plan.classify(selection.chosen, [node("gmreg")], NOW, TIMEOUT)
    delete, _skipped, _refusal = registration_plan.plan_deletions(records, 5, 1, selection=selection)
    assert [r["name"] for r in delete] == ["gm[1]"]


def test_a_server_matched_only_through_a_class_or_question_mark_is_audited_but_never_deleted():
    servers = [server("gm1", 500), server("gmx", 400), server("gm-star", 300), server("gmreg", 600)]
    selection = registration_plan.choose_servers(servers, ["gm[1]*", "gm?", "gm-*", "gmreg"])
    assert [s["name"] for s in selection.chosen] == ["gm1", "gm-star", "gmreg"]  # 'gm?' is a literal name: missing
    assert selection.missing == ["gm?"]
    records = registration_plan.classify(selection.chosen, [node("gmreg")], NOW, TIMEOUT)
    assert states(records)["gm1"] == registration_plan.UNREGISTERED  # reported
    delete, skipped, _refusal = registration_plan.plan_deletions(records, 5, 1, selection=selection)
    assert [r["name"] for r in delete] == ["gm-star"]
    assert [s["name"] for s in skipped] == ["gm1"] and "'?' or '[...]'" in skipped[0]["reason"]


def test_entries_that_match_nothing_are_named():
    servers = [server("prod-1", metadata={"cluster": "prod"}), server("dev-1", metadata={"cluster": "dev"})]
    assert registration_plan.choose_servers(servers, ["prod-*", "prod-typo", "dev-*"], {"cluster": "prod"}).missing \
        == ["prod-typo", "dev-*"]
    message = registration_plan.unmatched_message(["prod-typo"], None, 2)
    assert "'prod-typo' matched no server" in message and "nothing was deleted" in message
    assert "server_metadata" in registration_plan.unmatched_message([], {"cluster": "x"}, 2)


# -- the read just before a deletion ------------------------------------------------------------

RECHECK_SERVERS = [server("w-reg", 600, sid="r"), server("w-new", 500, sid="n", metadata={"cluster": "prod"})]


@pytest.mark.parametrize("servers_now, nodes_now, why", [
    (RECHECK_SERVERS, [node("w-reg")], None),
    (RECHECK_SERVERS, [node("w-reg"), node("late", "openstack:///n")], "registered as Node late"),
    (RECHECK_SERVERS, [node("w-reg"), node("w-new")], "registered as Node w-new"),
    (RECHECK_SERVERS[:1], [node("w-reg")], registration_plan.GONE_SINCE),
    ([RECHECK_SERVERS[0], dict(RECHECK_SERVERS[1], name="x-renamed")], [node("w-reg")], "no longer chooses it"),
    ([RECHECK_SERVERS[0], dict(RECHECK_SERVERS[1], metadata={"cluster": "staging"})], [node("w-reg")],
     "now carries cluster=staging"),
    ([RECHECK_SERVERS[0], dict(RECHECK_SERVERS[1], task_state="deleting")], [node("w-reg")], "being deleted"),
    (RECHECK_SERVERS, [], "no Kubernetes Node is visible"),
    (RECHECK_SERVERS, [node("other")], "none of the cluster's servers is a Node"),
    (RECHECK_SERVERS + [server("w-new", 10, sid="n2")], [node("w-reg")], "no longer resolves"),
], ids=["still", "node-by-provider-id", "node-by-name", "gone", "renamed", "other-cluster", "deleting", "no-nodes",
        "no-node-of-ours", "ambiguous"])
def test_a_deletion_is_judged_again_on_the_read_just_before_it(servers_now, nodes_now, why):
    record = [r for r in registration_plan.classify(RECHECK_SERVERS, [node("w-reg")], NOW, TIMEOUT)
              if r["name"] == "w-new"][0]
    found = registration_plan.recheck(record, servers_now, nodes_now, ["w-reg", "w-new"], None,
                                      {"cluster": "prod"}, NOW, TIMEOUT)
    if why is None:
        assert found is None
    else:
        assert why in found, found


def test_duration_reads_at_a_glance():
    assert [registration_plan.duration(s) for s in (5, 60, 2700, 2730, 3600, 5400)] == ["5s", "1m", "45m", "45m30s", "1h", "1h30m"]


server_specs = st.lists(
    st.tuples(st.integers(0, 200), st.sampled_from(["ACTIVE", "ERROR", "BUILD", "SHUTOFF", "SHELVED"]),
              st.booleans(), st.sampled_from([None, "deleting"])),
    min_size=0, max_size=12)


@settings(max_examples=300, deadline=None)
@given(server_specs, st.integers(1, 5), st.integers(0, 120), st.integers(0, 3))
def test_never_deletes_a_node_never_more_than_the_cap_never_all(specs, cap, timeout_minutes, foreign_nodes):
    servers = [server("s%d" % i, age, status=status, task_state=task) for i, (age, status, _node, task) in enumerate(specs)]
    nodes = [node("s%d" % i) for i, spec in enumerate(specs) if spec[2]]
    nodes += [node("foreign-%d" % i) for i in range(foreign_nodes)]
    records = registration_plan.classify(servers, nodes, NOW, timeout_minutes * 60)
    delete, skipped, refusal = registration_plan.plan_deletions(records, cap, len(nodes))
    registered = set("s%d" % i for i, spec in enumerate(specs) if spec[2])
    deleted = [r["name"] for r in delete]
    assert not set(deleted) & registered
    assert len(deleted) <= cap
    if servers:
        assert len(deleted) < len(servers)
    assert all(r["state"] in (registration_plan.UNREGISTERED, registration_plan.ERROR) for r in delete)
    assert all(s["task_state"] is None for s in servers if s["name"] in deleted)
    if not nodes or not registered:
        assert deleted == []
    if refusal is None:
        ages = [r["age"] for r in delete]
        assert ages == sorted(ages, reverse=True)
        assert all(s["age"] <= min(ages) for s in skipped) if ages else True
    assert len(deleted) + len(skipped) == sum(1 for r in records if r["state"] in (registration_plan.UNREGISTERED, registration_plan.ERROR))


def test_the_final_guard_stops_a_clean_up_that_would_delete_a_protected_server():
    servers = [server("n1", 600), server("n2", 600), server("w1", 5), server("x1", 600, metadata={"cluster": "b"})]
    records = registration_plan.classify(servers, [node("n1")], NOW, TIMEOUT)
    by_name = dict((r["name"], r) for r in records)
    refused = [dict(registration_plan.brief(by_name["x1"]), reason="refused: another cluster")]
    for name in ("n1", "w1", "x1"):  # a Node, a server still waiting, a refused one
        with pytest.raises(registration_plan.PlanError, match="internal error.*%s" % name):
            registration_plan.guard_deletions([by_name["n2"], by_name[name]], refused)
    assert registration_plan.guard_deletions([by_name["n2"]], refused) == [by_name["n2"]]
