"""The Cluster API release of the upstream plane (``up --capi-version``): which wrapper module of tools/upstream
pins each release, that the choice is kept in the state folder and refused when it changes, and that build.sh
keeps one folder of programs per release. Pure, or build.sh's ``--dir`` (which builds nothing)."""

import json
import subprocess

import pytest

from minicloud.core.paths import StateDir
from minicloud.core.settings import CAPI_VERSIONS, DEFAULT_CAPI_VERSION, Settings
from minicloud.runtime.lifecycle import Lifecycle, MinicloudError
from minicloud.upstream import binaries


def test_v1_13_is_the_default_and_v1_12_stays_selectable():
    assert DEFAULT_CAPI_VERSION == "v1.13" and set(CAPI_VERSIONS) == {"v1.13", "v1.12"}
    assert Settings().capi_version == "v1.13"


@pytest.mark.parametrize("release", CAPI_VERSIONS)
def test_each_release_reads_its_own_wrapper_module(release):
    pinned = binaries.versions(release)
    core, test = pinned["sigs.k8s.io/cluster-api"], pinned["sigs.k8s.io/cluster-api/test"]
    assert core.startswith(release + ".") and test.startswith(release + "."), pinned
    # etcd and kube-apiserver are the same for every release
    assert pinned["k8s.io/kubernetes"] == binaries.versions(DEFAULT_CAPI_VERSION)["k8s.io/kubernetes"]


def test_a_release_the_plane_does_not_build_is_refused_naming_those_it_does():
    with pytest.raises(binaries.UpstreamError, match="v1.13 or v1.12"):
        binaries.versions("v1.11")


def test_build_sh_keeps_one_folder_per_release_and_refuses_others():
    script = str(binaries.UPSTREAM_DIR / "build.sh")
    folders = {release: subprocess.run(["bash", script, "--capi", release, "--dir"], capture_output=True, text=True,
                                       check=True).stdout.strip() for release in CAPI_VERSIONS}
    assert folders["v1.13"] != folders["v1.12"] and "plane-v1.13-" in folders["v1.13"], folders
    default = subprocess.run(["bash", script, "--dir"], capture_output=True, text=True, check=True).stdout.strip()
    assert default == folders["v1.13"]
    refused = subprocess.run(["bash", script, "--capi", "v1.11", "--dir"], capture_output=True, text=True)
    assert refused.returncode == 2 and "v1.13 (the default) or v1.12" in refused.stderr


def test_the_release_is_kept_in_the_state_folder_and_a_change_is_refused(tmp_path):
    state = StateDir(tmp_path / "state")
    lifecycle = Lifecycle(state)
    first = lifecycle._settings(0, "upstream", "v1.12")
    assert first.capi_version == "v1.12" and Settings.load(state).capi_version == "v1.12"
    assert lifecycle._settings(0, None, None).capi_version == "v1.12"
    with pytest.raises(MinicloudError, match="set up with Cluster API v1.12"):
        lifecycle._settings(0, None, "v1.13")
    with pytest.raises(MinicloudError, match="v1.13 or v1.12"):
        lifecycle._settings(0, None, "v1.14")


def test_an_upstream_folder_from_before_the_choice_ran_v1_12(tmp_path):
    state = StateDir(tmp_path / "state")
    state.root.mkdir(parents=True)
    state.settings_file.write_text(json.dumps({"port_offset": 0, "kubernetes": "upstream"}))
    assert Settings.load(state).capi_version == "v1.12"
    state.settings_file.write_text(json.dumps({"port_offset": 0, "kubernetes": "emulated"}))
    assert Settings.load(state).capi_version == DEFAULT_CAPI_VERSION
