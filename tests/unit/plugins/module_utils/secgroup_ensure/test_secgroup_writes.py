# -*- coding: utf-8 -*-
"""The decisions secgroup_ensure makes at the moment of its writes: twin groups of two runs, deletes re-judged."""

from ansible_collections.flightcontrol.openstack.plugins.module_utils.secgroup_ensure import plan as sr


def neutron_rule(rule_id, port, direction="ingress"):
    return dict(id=rule_id, direction=direction, ethertype="IPv4", protocol="tcp", port_range_min=port,
                port_range_max=port, remote_ip_prefix="198.19.0.0/16", remote_group_id=None)


def test_every_run_keeps_the_oldest_twin_then_the_smallest_id():
    groups = [dict(id="b", created_at="2026-01-01T00:00:01Z"), dict(id="c", created_at="2026-01-01T00:00:00Z"),
              dict(id="a", created_at="2026-01-01T00:00:01Z")]
    assert sr.settle_twins(groups, "b") == (groups[1], True)
    assert sr.settle_twins(groups, "c") == (groups[1], False)
    same_second = [dict(id="b", created_at="2026-01-01T00:00:01Z"), dict(id="a", created_at="2026-01-01T00:00:01Z")]
    assert sr.settle_twins(same_second, "a")[1] is False and sr.settle_twins(same_second, "b")[1] is True


def test_a_twin_is_removed_only_while_it_is_as_neutron_made_it():
    created = dict(security_group_rules=[neutron_rule("e1", None, "egress")])
    assert sr.untouched_since_created(created, dict(security_group_rules=[neutron_rule("e1", None, "egress")]))
    assert not sr.untouched_since_created(created, dict(security_group_rules=[
        neutron_rule("e1", None, "egress"), neutron_rule("x", 22)]))
    assert not sr.untouched_since_created(created, None)  # gone meanwhile: nothing to remove


def rules(*pairs):
    return [sr.rule_from_neutron(neutron_rule(rule_id, port)) for rule_id, port in pairs]


def test_deletes_are_judged_again_on_the_fresh_rules():
    planned = rules(("x", 1), ("y", 2))
    fresh = rules(("x", 1), ("y", 2), ("w1", 10), ("w2", 11), ("new", 3))
    delete, gone, refusal = sr.recheck_deletes(planned, fresh, 0.5)
    assert [r.id for r in delete] == ["x", "y"] and gone == [] and refusal is None
    # the rule "new" (added after the plan's read) is never deleted; "y" went meanwhile
    delete, gone, refusal = sr.recheck_deletes(planned, rules(("x", 1), ("w1", 10), ("new", 3)), 0.5)
    assert [r.id for r in delete] == ["x"] and [r.id for r in gone] == ["y"] and refusal is None


def test_a_removal_share_exceeded_on_the_fresh_rules_is_refused():
    planned = rules(("x", 1), ("y", 2))
    delete, _gone, refusal = sr.recheck_deletes(planned, rules(("x", 1), ("y", 2), ("w1", 10)), 0.5)
    assert len(delete) == 2 and refusal.startswith("refusing exclusive: it would remove 2 of the group's 3 rules")
    assert sr.recheck_deletes(planned, rules(("x", 1), ("y", 2), ("w1", 10)), 1)[2] is None
