"""Built-in kinds in the protobuf encoding kubectl sends them in."""

from __future__ import annotations

import base64
import shutil
import subprocess

import pytest
from kube_harness import KubeServer

from minicloud.kube import protobuf
from minicloud.kube.errors import ApiError
from minicloud.kube.resources import by_kind


def field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (enough for the short test messages here)."""
    return bytes([number << 3 | 2, len(payload)]) + payload


def unknown(api_version: str, kind: str, raw: bytes) -> bytes:
    return protobuf.MAGIC + field(1, field(1, api_version.encode()) + field(2, kind.encode())) + field(2, raw)


def test_a_config_map_decodes_to_its_json_shape():
    meta = field(1, b"settings") + field(11, field(1, b"app") + field(2, b"web"))
    body = unknown("v1", "ConfigMap", field(1, meta) + field(2, field(1, b"mode") + field(2, b"live"))
                   + field(3, field(1, b"blob") + field(2, b"\x00\x01")))
    assert protobuf.decode(body) == {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "labels": {"app": "web"}},
        "data": {"mode": "live"}, "binaryData": {"blob": base64.b64encode(b"\x00\x01").decode()}}


def test_a_kind_without_a_protobuf_schema_is_415_and_garbage_is_400():
    with pytest.raises(ApiError) as caught:
        protobuf.decode(unknown("cluster.x-k8s.io/v1beta2", "Cluster", b""))
    assert caught.value.code == 415
    with pytest.raises(ApiError) as caught:
        protobuf.decode(b'{"kind": "Secret"}')
    assert caught.value.code == 400
    with pytest.raises(ApiError) as caught:
        protobuf.decode(protobuf.MAGIC + b"\x0a\x7f")  # a field longer than the body
    assert caught.value.code == 400


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
def test_kubectl_creates_secrets_namespaces_and_config_maps(tmp_path):
    server = KubeServer(tmp_path).start()
    try:
        def kubectl(*args):
            return subprocess.run(["kubectl", "--kubeconfig", str(server.kubeconfig), *args], capture_output=True,
                                  text=True, timeout=60, check=True).stdout

        kubectl("create", "namespace", "rehearsal")
        kubectl("create", "secret", "generic", "token", "-n", "rehearsal", "--from-literal=key=s3cret")
        kubectl("create", "configmap", "settings", "-n", "rehearsal", "--from-literal=mode=live")
        store = server.store
        assert store.get(by_kind("Namespace"), None, "rehearsal")["status"]["phase"] == "Active"
        secret = store.get(by_kind("Secret"), "rehearsal", "token")
        assert (secret["type"], secret["data"]) == ("Opaque", {"key": base64.b64encode(b"s3cret").decode()})
        assert store.get(by_kind("ConfigMap"), "rehearsal", "settings")["data"] == {"mode": "live"}
    finally:
        server.stop()
