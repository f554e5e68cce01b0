# -*- coding: utf-8 -*-
"""The connection options beside a kubeconfig: an option given explicitly (or by its K8S_AUTH_* variable) wins over
what the kubeconfig says, as in kubernetes.core, on every request; credentials of two kinds are refused.

The table is kubernetes.core's rule (module_utils/k8s/client.py: the kubeconfig is loaded unless host comes with
api_key, username and password, or client_cert and client_key; then each option given is set over it). What is
checked is what the client sends, request after request: the kubernetes client's loader re-applies a kubeconfig
file's token, server and certificates before each request."""

import pytest

kubernetes = pytest.importorskip("kubernetes")
yaml = pytest.importorskip("yaml")

from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import (  # noqa: E402
    auth_settings,
    connection_problem,
    credential_source,
    KubernetesClient,
)

SERVER = "https://kubeconfig.example:6443"
KUBECONFIG = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
              "clusters": [{"name": "k", "cluster": {"server": SERVER, "insecure-skip-tls-verify": True}}],
              "users": [{"name": "u", "user": {"token": "KUBECONFIG-TOKEN"}}],
              "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}]}
BASIC_ADMIN = "Basic YWRtaW46c2VjcmV0"  # admin:secret


class Answer:
    status, reason, data, headers = 200, "OK", b"{}", {}


class Recorder:
    """In place of urllib3's pool: records what each request would send."""

    def __init__(self):
        self.sent = []

    def request(self, method, url, **kwargs):
        self.sent.append((url.split("/version")[0], (kwargs.get("headers") or {}).get("authorization")))
        return Answer()


@pytest.fixture(params=["file", "dict"])
def kubeconfig(request, tmp_path):
    if request.param == "dict":
        return KUBECONFIG
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(KUBECONFIG))
    return str(path)


def sent(settings, requests=2):
    """(server, Authorization header) of each of ``requests`` requests a client of ``settings`` makes."""
    client = KubernetesClient(settings)
    recorder = Recorder()
    client.api_client.rest_client.pool_manager = recorder
    for dummy in range(requests):
        kubernetes.client.VersionApi(client.api_client).get_code(_preload_content=False)
    return recorder.sent, client.configuration


@pytest.mark.parametrize("options, server, authorization", [
    ({}, SERVER, "Bearer KUBECONFIG-TOKEN"),
    ({"api_key": "WRONG"}, SERVER, "Bearer WRONG"),
    ({"host": "https://explicit.example:6443/"}, "https://explicit.example:6443", "Bearer KUBECONFIG-TOKEN"),
    ({"host": "https://explicit.example:6443", "api_key": "WRONG"}, "https://explicit.example:6443",
     "Bearer WRONG"),
    ({"username": "admin", "password": "secret"}, SERVER, BASIC_ADMIN),
    ({"client_cert": "/explicit/client.crt", "client_key": "/explicit/client.key"}, SERVER, None),
    ({"client_cert": "/explicit/both.pem"}, SERVER, None),
])
def test_an_option_given_wins_over_the_kubeconfig_on_every_request(kubeconfig, options, server, authorization):
    requests, configuration = sent(dict(options, kubeconfig=kubeconfig))
    assert requests == [(server, authorization)] * 2
    if "client_cert" in options:
        assert (configuration.cert_file, configuration.key_file) == (options["client_cert"], options.get("client_key"))


def test_tls_and_proxy_options_win_over_the_kubeconfig(kubeconfig):
    options = {"validate_certs": True, "ca_cert": "/explicit/ca.pem", "proxy": "http://proxy.example:3128"}
    _requests, configuration = sent(dict(options, kubeconfig=kubeconfig))
    assert (configuration.verify_ssl, configuration.ssl_ca_cert, configuration.proxy) == (
        True, "/explicit/ca.pem", "http://proxy.example:3128")


def test_a_key_from_the_environment_wins_over_the_kubeconfig_as_in_kubernetes_core(kubeconfig):
    settings = auth_settings({"kubeconfig": kubeconfig}, {"K8S_AUTH_API_KEY": "FROM-ENV"})
    assert sent(settings)[0] == [(SERVER, "Bearer FROM-ENV")] * 2


@pytest.mark.parametrize("settings, source", [
    ({"host": "https://k", "api_key": "t", "kubeconfig": "/unread"}, "options"),
    ({"host": "https://k", "username": "u", "password": "p"}, "options"),
    ({"host": "https://k", "client_cert": "/c.crt", "client_key": "/c.key"}, "options"),
    ({"host": "https://k", "client_cert": "/both.pem"}, "kubeconfig-or-default"),
    ({"host": "https://k"}, "kubeconfig-or-default"),
    ({"api_key": "t"}, "kubeconfig-or-default"),
    ({"context": "c"}, "kubeconfig"),
    ({"kubeconfig": {"apiVersion": "v1"}, "api_key": "t"}, "kubeconfig"),
])
def test_where_the_rest_comes_from_follows_kubernetes_core(settings, source):
    found = credential_source(settings)
    assert found == source or (source == "kubeconfig-or-default" and found == "default")


@pytest.mark.parametrize("settings, words", [
    ({"username": "admin"}, "username is given without password"),
    ({"password": "secret"}, "password is given without username"),
    ({"client_key": "/c.key"}, "client_key is given without client_cert"),
    ({"api_key": "t", "username": "admin", "password": "secret"}, "api_key and username/password"),
    ({"api_key": "t", "client_cert": "/c.crt"}, "api_key and client_cert"),
    ({"username": "a", "password": "s", "client_cert": "/c.crt", "client_key": "/c.key"},
     "username/password and client_cert"),
])
def test_credentials_that_one_request_cannot_carry_alone_are_refused(settings, words):
    problem = connection_problem(dict(settings, kubeconfig=KUBECONFIG))
    assert problem is not None and words in problem
    assert "secret" not in problem.replace("password", "")
    with pytest.raises(kubernetes.config.ConfigException, match=words.replace("/", ".")):
        KubernetesClient(dict(settings, kubeconfig=KUBECONFIG))


@pytest.mark.parametrize("settings", [
    {}, {"api_key": "t"}, {"username": "u", "password": "p"}, {"client_cert": "/c.crt"},
    {"client_cert": "/c.crt", "client_key": "/c.key"}, {"host": "https://k", "context": "c", "validate_certs": False},
])
def test_one_kind_of_credentials_is_accepted(settings):
    assert connection_problem(settings) is None
