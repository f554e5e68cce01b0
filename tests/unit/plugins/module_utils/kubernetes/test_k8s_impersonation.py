# -*- coding: utf-8 -*-
"""kubernetes.core's impersonate_user, impersonate_groups and proxy_headers, honoured: from the options or
K8S_AUTH_IMPERSONATE_*, an Impersonate-User header and one Impersonate-Group header per group on every request;
the proxy's headers made as kubernetes.core makes them."""

import pytest

kubernetes = pytest.importorskip("kubernetes")

from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import (  # noqa: E402
    auth_settings,
    build_configuration,
    impersonation_headers,
    KubernetesClient,
)

SETTINGS = {"host": "https://k8s.example:6443", "api_key": "token"}


def test_the_options_win_over_the_environment_and_groups_split_on_commas():
    env = {"K8S_AUTH_IMPERSONATE_USER": "env-user", "K8S_AUTH_IMPERSONATE_GROUPS": "a, b,,c"}
    assert auth_settings({}, env)["impersonate_user"] == "env-user"
    assert auth_settings({}, env)["impersonate_groups"] == ["a", "b", "c"]
    settings = auth_settings({"impersonate_user": "alice", "impersonate_groups": ["ops"]}, env)
    assert settings["impersonate_user"] == "alice" and settings["impersonate_groups"] == ["ops"]
    assert "impersonate_user" not in auth_settings({}, {})


def test_one_group_header_per_group():
    headers = impersonation_headers({"impersonate_user": "alice", "impersonate_groups": ["dev", "ops"]},
                                    {"Accept": "application/json"})
    assert headers["Impersonate-User"] == "alice" and headers["Accept"] == "application/json"
    assert headers.getlist("Impersonate-Group") == ["dev", "ops"]
    plain = {"Accept": "application/json"}
    assert impersonation_headers({}, plain) is plain


def test_every_request_of_the_client_carries_the_headers(monkeypatch):
    sent = []

    def request(self, method, url, query_params=None, headers=None, **kwargs):
        sent.append(headers)

    monkeypatch.setattr(kubernetes.client.rest.RESTClientObject, "request", request)
    client = KubernetesClient(dict(SETTINGS, impersonate_user="alice", impersonate_groups=["dev", "ops"]))
    client.api_client.rest_client.request("GET", SETTINGS["host"] + "/version", headers={"Accept": "application/json"})
    assert sent[0]["Impersonate-User"] == "alice" and sent[0].getlist("Impersonate-Group") == ["dev", "ops"]
    plain = KubernetesClient(dict(SETTINGS))
    plain.api_client.rest_client.request("GET", SETTINGS["host"] + "/version", headers={"Accept": "application/json"})
    assert "Impersonate-User" not in sent[1]


def test_proxy_headers_go_to_the_proxy():
    settings = auth_settings({"proxy": "http://proxy.example:3128",
                              "proxy_headers": {"proxy_basic_auth": "user:secret", "basic_auth": None,
                                                "user_agent": "mine"}}, {})
    settings.update(SETTINGS)
    configuration = build_configuration(settings)
    assert configuration.proxy_headers["proxy-authorization"] == "Basic dXNlcjpzZWNyZXQ="
    assert configuration.proxy_headers["user-agent"] == "mine"
    assert build_configuration(dict(SETTINGS)).proxy_headers is None
