"""The demo: a control-plane member the load balancer forgot, and the wait that notices.

Run with ``make demo`` (or ``.venv/bin/python tools/demo/run.py``).  It starts minicloud unless one is
already up, builds an API load balancer with three control-plane members, adds a fourth while the
Octavia emulator loses it (the amphora v2 failure CAPO < v0.14 did not see), shows the load balancer
report ACTIVE anyway, and runs a playbook whose lb_member_wait task stops with the reason.  Then the
emulator recovers and the same playbook passes.  Exit status 0 means the story went as told.
"""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from minicloud.control import Minicloud

REPO = Path(__file__).resolve().parents[2]
PLAYBOOK = Path(__file__).with_name("wait-for-new-member.yml")
BIN = Path(sys.executable).parent
LB = "demo-cp"
NEW_MEMBER = "demo-cp-member-4"


def say(text=""):
    print(text, flush=True)


def step(number, text):
    say()
    say("[%d/7] %s" % (number, text))


def indent(text, prefix="      | "):
    """The playbook's output for a person: long lines wrapped, the raw result JSON summarised."""
    lines = []
    for line in text.rstrip().splitlines():
        if line.startswith("fatal: ") and "=> {" in line:
            head, _sep, body = line.partition(" => ")
            try:
                keys = sorted(json.loads(body))
            except ValueError:
                keys = []
            line = "%s => registered result with: %s" % (head, ", ".join(keys))
        lines.extend(textwrap.wrap(line, width=100, subsequent_indent="    ", break_on_hyphens=False) or [""])
    return "\n".join(prefix + line for line in lines)


def run_playbook(cloud, collections, timeout):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(collections), OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml),
               ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="0", ANSIBLE_INVENTORY_UNPARSED_WARNING="0",
               ANSIBLE_DEPRECATION_WARNINGS="0", PYTHONWARNINGS="ignore")
    cmd = [str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local",
           "-e", "ansible_python_interpreter=%s" % sys.executable, "-e", "wait_timeout=%d" % timeout, str(PLAYBOOK)]
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    return proc.returncode, proc.stdout + proc.stderr, time.monotonic() - started


def wait_for_lb_active(lbapi, lb_id, timeout=60):
    """What CAPO before v0.14 did after adding a member: wait for the load balancer only."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        lb = lbapi.get_load_balancer(lb_id)
        if lb.provisioning_status == "ACTIVE":
            return lb, time.monotonic() - started
        time.sleep(0.25)
    raise SystemExit("the load balancer never returned to ACTIVE")


def main():
    cloud = Minicloud()
    started_here = False
    rows = []
    say("flightcontrol.openstack demo: a control-plane member the load balancer forgot")
    say("=" * 78)

    step(1, "minicloud: real Keystone, Neutron and Octavia on 127.0.0.1, an emulated Octavia provider")
    if cloud.status().healthy:
        say("      already running in %s; using it and leaving it running" % cloud.state_dir)
    else:
        t0 = time.monotonic()
        cloud.up()
        started_here = True
        say("      up in %.0f s (state in %s)" % (time.monotonic() - t0, cloud.state_dir))
    cloud.set_octavia_mode("normal")
    conn = cloud.connect()
    lbapi = conn.load_balancer
    with tempfile.TemporaryDirectory() as tmp:
        collections = Path(os.environ.get("ANSIBLE_COLLECTIONS_PATH") or tmp)
        if not os.environ.get("ANSIBLE_COLLECTIONS_PATH"):
            (collections / "ansible_collections" / "flightcontrol").mkdir(parents=True)
            (collections / "ansible_collections" / "flightcontrol" / "openstack").symlink_to(REPO)
        try:
            ok = story(cloud, lbapi, collections, rows)
        finally:
            if lbapi.find_load_balancer(LB, ignore_missing=True):
                cloud.delete_lb(LB)
            cloud.set_octavia_mode("normal")
            if started_here:
                cloud.down()
                say("      minicloud stopped")
    table(rows)
    say()
    say("Result: %s" % ("the wait stopped the rollout while the member was lost, and let it go on once the "
                        "member served." if ok else "NOT AS EXPECTED, see above."))
    return 0 if ok else 1


def story(cloud, lbapi, collections, rows):
    step(2, "An API load balancer with three control-plane members and a health monitor")
    if lbapi.find_load_balancer(LB, ignore_missing=True):
        cloud.delete_lb(LB)
    created = cloud.create_lb(LB, members=3, monitor=True)
    pool_id = created["pool"]["id"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(m.operating_status != "ONLINE" for m in lbapi.members(pool_id)):
        time.sleep(0.5)  # the health monitor needs a few checks before it reports ONLINE
    for m in lbapi.members(pool_id):
        say("      %-18s %-10s %s / %s" % (m.name, m.address, m.provisioning_status, m.operating_status))

    step(3, "Octavia emulator -> lost-member for %s (the amphora v2 failure)" % NEW_MEMBER)
    cloud.set_octavia_mode("lost-member", members=NEW_MEMBER)

    step(4, "Add a fourth member the way CAPO does, then wait for the load balancer only (CAPO < v0.14)")
    lbapi.create_member(pool_id, name=NEW_MEMBER, address="10.0.0.13", protocol_port=6443,
                        subnet_id=created["subnet"]["id"])
    lb, took = wait_for_lb_active(lbapi, created["loadbalancer"]["id"])
    member = next(m for m in lbapi.members(pool_id) if m.name == NEW_MEMBER)
    say("      load balancer %s: %s after %.1f s   <- CAPO now deletes an old control-plane node" % (
        lb.name, lb.provisioning_status, took))
    say("      member %s: %s / %s   <- but the new member does not serve" % (
        member.name, member.provisioning_status, member.operating_status))
    rows.append(("CAPO-style wait on the load balancer", "ACTIVE", member.provisioning_status, "proceeds (wrong)"))

    step(5, "ansible-playbook %s (lb_member_wait, timeout 20 s)" % PLAYBOOK.relative_to(REPO))
    rc, output, took = run_playbook(cloud, collections, timeout=20)
    say(indent(output))
    member = next(m for m in lbapi.members(pool_id) if m.name == NEW_MEMBER)
    first_ok = rc != 0 and "although the load balancer is ACTIVE" in output
    rows.append(("lb_member_wait while the member is lost", lbapi.get_load_balancer(created["loadbalancer"]["id"])
                 .provisioning_status, member.provisioning_status,
                 "stopped after %.0f s (rc %d)" % (took, rc)))

    step(6, "The emulator recovers (normal mode finishes the lost member); the same playbook again")
    cloud.set_octavia_mode("normal")
    rc2, output, took = run_playbook(cloud, collections, timeout=60)
    say(indent(output))
    member = next(m for m in lbapi.members(pool_id) if m.name == NEW_MEMBER)
    second_ok = rc2 == 0
    rows.append(("lb_member_wait after recovery", lbapi.get_load_balancer(created["loadbalancer"]["id"])
                 .provisioning_status, "%s/%s" % (member.provisioning_status, member.operating_status),
                 "passed after %.0f s (rc %d)" % (took, rc2)))

    step(7, "Clean up the demo load balancer")
    return first_ok and second_ok


def table(rows):
    say()
    say("What happened")
    headers = ("step", "load balancer", "new member", "outcome")
    widths = [max(len(str(r[i])) for r in rows + [headers]) for i in range(4)]
    line = "  ".join("%-*s" % (w, h) for w, h in zip(widths, headers))
    say(line)
    say("-" * len(line))
    for row in rows:
        say("  ".join("%-*s" % (w, c) for w, c in zip(widths, row)))


if __name__ == "__main__":
    sys.exit(main())
