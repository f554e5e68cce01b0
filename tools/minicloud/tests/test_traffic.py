from minicloud.traffic.faults import FaultRule
from minicloud.traffic.store import TrafficStore


def test_rule_with_count_is_spent_after_n_firings(tmp_path):
    store = TrafficStore(tmp_path / "t.sqlite")
    store.add_rule(FaultRule(service="network", method="GET", path="/v2.0/*", status=429, remaining=2))
    assert store.take_rule("network", "GET", "/v2.0/ports").status == 429
    assert store.take_rule("network", "GET", "/v2.0/ports") is not None
    assert store.take_rule("network", "GET", "/v2.0/ports") is None
    [rule] = store.rules()
    assert rule.spent and rule.fired == 2


def test_unlimited_rule_and_first_match_wins(tmp_path):
    store = TrafficStore(tmp_path / "t.sqlite")
    first = store.add_rule(FaultRule(service="identity", status=503))
    store.add_rule(FaultRule(service="identity", status=500))
    for _ in range(3):
        assert store.take_rule("identity", "POST", "/v3/auth/tokens").id == first.id
    assert store.take_rule("network", "GET", "/") is None


def test_rules_are_shared_between_store_objects(tmp_path):
    writer, reader = TrafficStore(tmp_path / "t.sqlite"), TrafficStore(tmp_path / "t.sqlite")
    writer.add_rule(FaultRule(service="network", status=502))
    assert reader.take_rule("network", "GET", "/").status == 502
    assert writer.clear_rules() == 1
    assert reader.rules() == []


def test_counts_split_client_and_internal(tmp_path):
    store = TrafficStore(tmp_path / "t.sqlite")
    store.count("network", "GET", "/v2.0/ports", internal=False)
    store.count("network", "GET", "/v2.0/ports", internal=False)
    store.count("identity", "GET", "/v3/auth/tokens", internal=True)
    counts = store.counts()
    assert counts["requests"] == {"network": {"GET": {"/v2.0/ports": 2}}}
    assert counts["internal"] == {"identity": {"GET": {"/v3/auth/tokens": 1}}}
    assert counts["totals"] == {"all": 2, "internal": 1, "by_service": {"network": 2}}
    assert store.counts("identity")["requests"] == {}
    store.reset_counts("network")
    assert store.counts()["totals"]["all"] == 0
