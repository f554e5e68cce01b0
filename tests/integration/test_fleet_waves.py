# -*- coding: utf-8 -*-
"""playbooks/fleet_rollout.yml in waves, run the way AWX runs a sliced job: three ansible-playbook processes at
once, each given an inventory holding only its slice of the fleet's hosts (with their variables, as AWX hands a
slice job its hosts; not --limit, under which every process would still see the whole inventory): each reads the
whole fleet from the management cluster and follows one plan. A cluster of the second wave gets a member that
never serves: its rollout stops, the wave fails above its budget (0), the fleet halts (ConfigMap
flightcontrol-fleet-halt), and no cluster of the third wave is touched (never its Lease) by any slice. A second
actor (cluster_lease, as every role takes it) is refused while the halt stands; fleet_resume.yml lifts it. Bad wave
specs are refused before any record is written."""

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import yaml
from kubernetes import client as k8s_client

from leases import lease
from playbook_runner import REPO
from rollouts import kube_api

BIN = str(Path(sys.executable).parent)
CANARY = "flightcontrol.openstack/canary"


def configmap(cloud, name, namespace):
    with kube_api(cloud) as api:
        try:
            return k8s_client.CoreV1Api(api).read_namespaced_config_map(name, namespace)
        except k8s_client.ApiException as exc:
            if exc.status == 404:
                return None
            raise


def label_canary(cloud, name, namespace):
    with kube_api(cloud) as api:
        k8s_client.CustomObjectsApi(api).patch_namespaced_custom_object(
            "cluster.x-k8s.io", "v1beta2", namespace, "clusters", name, {"metadata": {"labels": {CANARY: "true"}}})


def start_slice(cloud, collections_path, workdir, playbook, inventory, limit, extra_vars):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(collections_path), ANSIBLE_NOCOLOR="1",
               OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml), ANSIBLE_INVENTORY_UNPARSED_FAILED="true",
               ANSIBLE_PYTHON_INTERPRETER=sys.executable, PATH=BIN + os.pathsep + os.environ["PATH"])
    args = [BIN + "/ansible-playbook", "-i", str(inventory), str(REPO / "playbooks" / playbook),
            "-e", json.dumps(extra_vars)]
    if limit:
        args += ["--limit", ",".join(limit)]
    log = open(workdir / ("%s-%d.log" % (playbook, len(list(workdir.glob("*.log"))))), "w+")
    return subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT, text=True), log


def plain(value):
    """ansible-inventory's JSON without its ``{"__ansible_unsafe": ...}`` wrappers (AWX stores plain values)."""
    if isinstance(value, dict):
        return plain(value["__ansible_unsafe"]) if set(value) == {"__ansible_unsafe"} else dict(
            (k, plain(v)) for k, v in value.items())
    return [plain(v) for v in value] if isinstance(value, list) else value


def slice_inventories(cloud, collections_path, workdir, inventory, slices, more_hostvars=None):
    """One static inventory per slice, each with only its hosts, their variables and groups (what AWX gives
    each job of a sliced job template), made from ``ansible-inventory --list`` of the capi_clusters source;
    ``more_hostvars`` (host -> variables) adds to a host's variables, as a host's own variables in AWX would."""
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(collections_path), ANSIBLE_INVENTORY_UNPARSED_FAILED="true",
               OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml))
    listed = json.loads(subprocess.run([BIN + "/ansible-inventory", "-i", str(inventory), "--list"], env=env,
                                       check=True, capture_output=True, text=True).stdout)
    hostvars = plain(listed["_meta"]["hostvars"])
    for host, variables in (more_hostvars or {}).items():
        hostvars[host].update(variables)
    paths = []
    for index, hosts in enumerate(slices):
        groups = {}
        for group, entry in listed.items():
            members = [h for h in (entry.get("hosts") or []) if h in hosts] if isinstance(entry, dict) else []
            if group not in ("_meta", "all", "ungrouped") and members:
                groups[group] = {"hosts": dict((h, None) for h in members)}
        path = workdir / ("slice-%d.yml" % index)
        path.write_text(yaml.safe_dump({"all": {"hosts": dict((h, hostvars[h]) for h in hosts),
                                                "children": groups}}))
        paths.append(path)
    return paths


def finish(proc, log, timeout=600):
    rc = proc.wait(timeout=timeout)
    log.seek(0)
    return rc, log.read()


@pytest.fixture
def wave_fleet(minicloud):
    """Six clusters with one control-plane machine each, in a namespace of their own; the fourth a canary."""
    suffix = uuid.uuid4().hex[:6]
    prefix, namespace = "fw%s" % suffix, "fleet-wave-%s" % suffix
    minicloud.normal()
    seeded = {"clusters": []}
    try:
        seeded = minicloud.api.create_capi_fleet(6, prefix=prefix, namespaces=[namespace])
        names = [c["name"] for c in seeded["clusters"]]
        label_canary(minicloud, names[3], namespace)
        yield namespace, names
    finally:
        minicloud.normal()
        with kube_api(minicloud) as api:
            core = k8s_client.CoreV1Api(api)
            for name in ("flightcontrol-fleet-halt", "flightcontrol-fleet-run-t" + suffix):
                try:
                    core.delete_namespaced_config_map(name, namespace)
                except k8s_client.ApiException:
                    pass
        for cluster in seeded["clusters"]:
            minicloud.api.delete_capi_cluster(cluster["name"], cluster["namespace"])


def test_waves_halt_every_slice_before_a_later_wave(minicloud, wave_fleet, collections_path, tmp_path, run_module):
    namespace, names = wave_fleet
    hosts = sorted("%s/%s" % (namespace, name) for name in names)
    canary = "%s/%s" % (namespace, names[3])
    run = "t" + namespace.rsplit("-", 1)[1]
    inventory = tmp_path / "fleet.capi_clusters.yml"
    inventory.write_text(yaml.safe_dump({"plugin": "flightcontrol.openstack.capi_clusters",
                                         "kubeconfig": str(minicloud.state_dir / "kubeconfig"),
                                         "namespaces": [namespace]}))
    common = {"fleet_cloud": "minicloud", "fleet_namespaces": [namespace], "fleet_kubeconfig": str(minicloud.state_dir / "kubeconfig"),
              "fleet_run": run, "fleet_records_namespace": namespace, "fleet_soak": 1, "fleet_poll_interval": 1,
              "control_plane_rollout_poll_interval": 1,
              # the VIPs are on minicloud's loopback data plane: the gate's /readyz goes where each listens
              "fleet_readyz_urls": dict((h, "https://%s/readyz" % minicloud.api.lb_vip(
                  "k8s-clusterapi-cluster-%s-kubeapi" % h.replace("/", "-"))) for h in hosts)}

    # Bad specs: refused before any record is written.
    for waves, words in (([1, 3], "cover 4 of the 6 clusters"), ([1, "120%"], "at most 100")):
        proc, log = start_slice(minicloud, collections_path, tmp_path, "fleet_rollout.yml", inventory, None,
                                dict(common, fleet_waves=waves))
        rc, output = finish(proc, log)
        assert rc != 0 and words in output, output[-3000:]
        assert configmap(minicloud, "flightcontrol-fleet-run-" + run, namespace) is None
    proc, log = start_slice(minicloud, collections_path, tmp_path, "fleet_rollout.yml", inventory, None,
                            dict(common, fleet_waves=[1, "100%"], fleet_budgets=[2]))
    rc, output = finish(proc, log)
    assert rc != 0 and "above the 1 cluster(s) of wave 1" in output, output[-3000:]
    # The fleet read from the management cluster with other filters than the inventory's: refused, naming them.
    proc, log = start_slice(minicloud, collections_path, tmp_path, "fleet_rollout.yml", inventory, None,
                            dict(common, fleet_waves=[1, "100%"], fleet_namespaces=[namespace + "-other"]))
    rc, output = finish(proc, log)
    assert rc != 0 and "which the fleet read from the management cluster" in output, output[-3000:]
    assert configmap(minicloud, "flightcontrol-fleet-run-" + run, namespace) is None

    # Waves [1, 1, "100%"]: the canary, then the first in inventory order, then the rest. The second wave's
    # cluster never gets a serving member.
    order = [canary] + [h for h in hosts if h != canary]
    stuck, later = order[1], order[2:]
    minicloud.octavia("lost-member", members="k8s-clusterapi-cluster-%s-kubeapi-6443-*" % stuck.replace("/", "-"),
                      delay=0.2)
    slices = [hosts[i::3] for i in range(3)]
    # the stuck cluster's rollout stops 10 s after its new Machine (its member never serves); the others get the
    # time a busy machine may need to bring a new Machine's member up (they go on as soon as it serves)
    member_timeouts = dict((h, {"control_plane_rollout_member_timeout": 10 if h == stuck else 180}) for h in hosts)
    inventories = slice_inventories(minicloud, collections_path, tmp_path, inventory, slices, member_timeouts)
    running = [start_slice(minicloud, collections_path, tmp_path, "fleet_rollout.yml", part, None,
                           dict(common, fleet_waves=[1, 1, "100%"])) for part in inventories]
    results = [finish(proc, log) for proc, log in running]
    outputs = "\n=====\n".join(output for rc, output in results)
    assert all(rc != 0 for rc, output in results), outputs[-6000:]

    halt = configmap(minicloud, "flightcontrol-fleet-halt", namespace)
    assert halt is not None, outputs[-6000:]
    recorded = configmap(minicloud, "flightcontrol-fleet-run-" + run, namespace).data
    assert halt.data["run"] == run and halt.data["wave"] == "2" and json.loads(halt.data["failed"]) == [stuck], \
        (halt.data, recorded.get("outcomes"), outputs[-6000:])
    # one plan of the whole fleet, whichever slice recorded it
    assert [w["clusters"] for w in json.loads(recorded["plan"])["waves"]] == [[canary], [stuck], later], recorded
    record = json.loads(recorded["outcomes"])
    assert sorted(record) == sorted([canary, stuck]), record
    assert record[canary]["outcome"] == "done" and record[canary]["gate"]["passed"], record[canary]
    assert record[stuck]["outcome"] == "failed"
    for host in later:  # no slice touched a cluster of the third wave: not even its Lease was taken
        assert lease(minicloud, host.split("/")[1], namespace) is None, host
    assert outputs.count("not started: The fleet is halted") >= 1, outputs[-6000:]

    # A second actor honours the halt before starting on a cluster.
    refused = run_module("cluster_lease", dict(name=later[0].split("/")[1], namespace=namespace,
                                               holder={"id": "by-hand"}, halt_namespace=namespace,
                                               kubeconfig=str(minicloud.state_dir / "kubeconfig")))
    assert refused.result.get("failed") and "The fleet is halted" in refused.result["msg"], refused.result
    assert lease(minicloud, later[0].split("/")[1], namespace) is None

    # Lifted only by the explicit action; the failed cluster is forgotten, to be retried.
    proc, log = start_slice(minicloud, collections_path, tmp_path, "fleet_resume.yml", "localhost,", None,
                            {"fleet_records_namespace": namespace, "fleet_kubeconfig": common["fleet_kubeconfig"]})
    rc, output = finish(proc, log)
    assert rc == 0, output[-3000:]
    assert "Lifted the halt of run %s (wave 2" % run in output and "to be retried: %s" % stuck in output, output
    assert configmap(minicloud, "flightcontrol-fleet-halt", namespace) is None
    record = json.loads(configmap(minicloud, "flightcontrol-fleet-run-" + run, namespace).data["outcomes"])
    assert sorted(record) == [canary]
    taken = run_module("cluster_lease", dict(name=later[0].split("/")[1], namespace=namespace,
                                             holder={"id": "by-hand"}, halt_namespace=namespace,
                                             kubeconfig=str(minicloud.state_dir / "kubeconfig")))
    assert taken.result.get("acquired"), taken.result


def test_a_halt_deleted_by_hand_mid_wave_starts_nothing_more_of_the_run(minicloud, wave_fleet, run_module):
    """The halt record removed by hand while a wave runs: the run's own record still holds the wave's failure
    above its budget, so neither the rest of that wave nor a later one starts; fleet_wave's lift (what
    fleet_resume.yml runs) with the run lifts it, here keeping the failure (retry_failed false)."""
    namespace, names = wave_fleet
    base = dict(run="t" + namespace.rsplit("-", 1)[1], records_namespace=namespace,
                kubeconfig=str(minicloud.state_dir / "kubeconfig"))
    clusters = [dict(host="%s/%s" % (namespace, name), labels={}) for name in names]
    planned = run_module("fleet_wave", dict(base, action="plan", clusters=clusters, waves=[1, 3, "100%"],
                                            mine=[c["host"] for c in clusters]))
    assert planned.result.get("changed"), planned.result
    first, second, third = [w["clusters"] for w in planned.result["plan"]["waves"]]
    assert run_module("fleet_wave", dict(base, action="record", cluster=first[0], outcome="done")).result["changed"]
    for host in second[:2]:  # two clusters of the second wave start together (two slices)
        assert run_module("fleet_wave", dict(base, action="await", cluster=host)).result["state"] == "go"
    failed = run_module("fleet_wave", dict(base, action="record", cluster=second[0], outcome="failed", reason="stuck"))
    assert failed.result["halted"] and failed.result["halt"]["failed"] == [second[0]], failed.result
    with kube_api(minicloud) as api:
        k8s_client.CoreV1Api(api).delete_namespaced_config_map("flightcontrol-fleet-halt", namespace)
    assert configmap(minicloud, "flightcontrol-fleet-halt", namespace) is None

    for host in (second[2], third[0]):
        refused = run_module("fleet_wave", dict(base, action="await", cluster=host, timeout=5))
        assert refused.result.get("failed") and refused.result["state"] == "halted", refused.result
        assert "wave 2 failed above its budget" in refused.result["msg"] and second[0] in refused.result["msg"]
    # the other cluster already running records its end; its wave stays halted
    done = run_module("fleet_wave", dict(base, action="record", cluster=second[1], outcome="done"))
    assert done.result["halted"], done.result

    lifted = run_module("fleet_wave", dict(base, action="lift", retry_failed=False))
    assert lifted.result["lifted"] and lifted.result["kept"] == [second[0]], lifted.result
    assert configmap(minicloud, "flightcontrol-fleet-halt", namespace) is None
    assert run_module("fleet_wave", dict(base, action="await", cluster=second[2])).result["state"] == "go"
    outcomes = json.loads(configmap(minicloud, "flightcontrol-fleet-run-" + base["run"], namespace).data["outcomes"])
    assert outcomes[second[0]]["outcome"] == "failed" and outcomes[second[0]]["lifted"] is True
