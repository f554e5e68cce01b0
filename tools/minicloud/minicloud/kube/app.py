"""The HTTP layer: Kubernetes REST paths onto the store, with kube-apiserver's answers.

Paths (core kinds under ``/api/v1``, the others under ``/apis/GROUP/VERSION``)::

    .../PLURAL                          list (all namespaces for namespaced kinds), create
    .../namespaces/NS/PLURAL            list, create, deletecollection
    .../[namespaces/NS/]PLURAL/NAME     get, replace, patch, delete
    .../[namespaces/NS/]PLURAL/NAME/status

A list with ``watch=true`` is a watch (:mod:`minicloud.kube.watch`); every write takes
``dryRun=All`` (validated and answered, nothing stored).

Requests need ``Authorization: Bearer TOKEN`` (except ``/version`` and the health
paths, which kube-apiserver shows anonymous users too).
"""

from __future__ import annotations

import base64
import binascii
import json
import traceback
from dataclasses import dataclass

import yaml
from flask import Flask, Response, request

from minicloud.kube import capo_convert, capo_crds, convert, discovery, errors, event_versions, patches, protobuf, \
    resources, watch
from minicloud.kube.errors import ApiError
from minicloud.kube.openapi import check_fields, register
from minicloud.kube.resources import EVENTS_GROUP, Kind
from minicloud.kube.store import Store
from minicloud.kube.tables import include_object, table, wants_table

PUBLIC_PATHS = ("/version", "/healthz", "/livez", "/readyz")


@dataclass(frozen=True)
class Target:
    """What a resource path names."""

    kind: Kind
    version: str
    namespace: str | None
    name: str | None
    subresource: str | None


def view(kind: Kind, obj: dict, version: str) -> dict:
    """The stored object as served at ``version``."""
    if kind.group == EVENTS_GROUP:
        return event_versions.from_core(obj)
    if capo_crds.is_capo(kind):
        return capo_convert.convert(obj, kind.kind, version)
    if convert.converts(kind.kind):
        return convert.from_hub(obj, kind.kind, version)
    obj = dict(obj)
    obj["apiVersion"] = kind.api_version(version)
    obj["kind"] = kind.kind
    return obj


def stored(kind: Kind, obj: dict, version: str, current: dict | None = None) -> dict:
    """An object sent at ``version`` in its stored form (``current``: the object it replaces; a CAPO object is
    kept in the version it was created at, see :mod:`minicloud.kube.capo_crds`)."""
    if kind.group == EVENTS_GROUP:
        return event_versions.to_core(obj)
    if capo_crds.is_capo(kind):
        sent = dict(obj, apiVersion=kind.api_version(version))
        keep = capo_convert.version_of(current) if current else version
        return capo_convert.keep_lost(capo_convert.convert(sent, kind.kind, keep), current)
    if convert.converts(kind.kind):
        return convert.to_hub(obj, kind.kind, version)
    obj = dict(obj)
    obj["apiVersion"], obj["kind"] = kind.api_version(kind.hub), kind.kind
    return obj


def parse_target(group: str, version: str, parts: list[str], kinds: tuple[Kind, ...] = resources.KINDS) -> Target:
    """Resolve the path segments after ``/api/v1`` or ``/apis/GROUP/VERSION`` (``kinds``: what the plane
    serves)."""
    namespace = None
    if len(parts) >= 3 and parts[0] == "namespaces":
        candidate = resources.by_plural(group, parts[2], kinds)
        if candidate is not None and candidate.namespaced:
            namespace, parts = parts[1], parts[2:]
    kind = resources.by_plural(group, parts[0], kinds) if parts else None
    if kind is None or version not in kind.versions or len(parts) > 3:
        raise errors.not_found_path("/".join(parts))
    name = parts[1] if len(parts) > 1 else None
    subresource = parts[2] if len(parts) > 2 else None
    if subresource is not None and (subresource != "status" or not kind.status_subresource):
        raise errors.not_found_path("/".join(parts))
    return Target(kind, version, namespace, name, subresource)


def _json(data, code: int = 200) -> Response:
    return Response(json.dumps(data), status=code, mimetype="application/json")


def _warned(answer: Response, warnings: list[str]) -> Response:
    for value in warnings:
        answer.headers.add("Warning", value)
    return answer


def _table_or(t: Target, objects: list[dict], meta: dict, otherwise: dict) -> Response:
    """The Table of ``objects`` if the client asks for one (``kubectl get``), else ``otherwise``."""
    if wants_table(request.headers.get("Accept")):
        return _json(table(t.kind, t.version, objects, meta, include_object(request.args.get("includeObject"))))
    return _json(otherwise)


def _body():
    if request.mimetype == protobuf.CONTENT_TYPE:
        return protobuf.decode(request.get_data())
    if request.mimetype == patches.APPLY:
        try:
            return yaml.safe_load(request.get_data() or b"null")
        except yaml.YAMLError as exc:
            raise errors.bad_request(f"error decoding YAML: {exc}") from None
    try:
        return json.loads(request.get_data() or b"null")
    except ValueError as exc:
        raise errors.bad_request(f"error decoding the request body: {exc}") from None


OPTIONS_KIND = {"POST": "CreateOptions", "PUT": "UpdateOptions", "PATCH": "PatchOptions", "DELETE": "DeleteOptions"}


def dry_run(method: str, values: list[str]) -> bool:
    """Whether the write is a dry run: ``dryRun=All``; any other value is refused as kube-apiserver's
    options validation refuses it (422 Invalid)."""
    if any(v != "All" for v in values):
        shown = ", ".join(f'"{v}"' for v in values)
        raise errors.invalid("meta.k8s.io", "", OPTIONS_KIND.get(method, "CreateOptions"), "", [(
            "dryRun", "FieldValueNotSupported", f'Unsupported value: []string{{{shown}}}: supported values: "All"')])
    return bool(values)


def _encode_continue(offset: int, revision: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"o": offset, "rv": revision}).encode()).decode()


def _decode_continue(token: str) -> int:
    try:
        return int(json.loads(base64.urlsafe_b64decode(token.encode()))["o"])
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise errors.bad_request("continue key is not valid: incorrect encoded start resourceVersion") from None


class KubeApi:
    """Request handlers over one :class:`Store`."""

    def __init__(self, store: Store, token: str):
        self.store = store
        self.token = token
        self.capo = capo_crds.CapoCrds()  # the versions of CAPO's kinds this plane serves

    # -- collections ----------------------------------------------------------------

    def list(self, t: Target) -> Response:
        if request.args.get("watch") in ("true", "1"):
            return self.watch(t)
        items, revision = self.store.list(t.kind, t.namespace, request.args.get("labelSelector"),
                                          request.args.get("fieldSelector"))
        meta = {"resourceVersion": revision}
        limit = int(request.args.get("limit") or 0)
        start = _decode_continue(request.args["continue"]) if request.args.get("continue") else 0
        if limit or start:
            end = start + limit if limit else len(items)
            if end < len(items):
                meta["continue"] = _encode_continue(end, revision)
                meta["remainingItemCount"] = len(items) - end
            items = items[start:end]
        views = [view(t.kind, obj, t.version) for obj in items]
        return _table_or(t, views, meta, {"apiVersion": t.kind.api_version(t.version), "kind": t.kind.list_kind,
                                          "metadata": meta, "items": views})

    def watch(self, t: Target) -> Response:
        asked = watch.WatchRequest.parse(request.args, t.kind, t.namespace, self.store.selectable(t.kind))

        def bookmark(revision: int, annotations: dict) -> dict:
            meta = {"resourceVersion": str(revision)}
            if annotations:
                meta["annotations"] = annotations
            return {"kind": t.kind.kind, "apiVersion": t.kind.api_version(t.version), "metadata": meta}

        def serve(obj: dict) -> dict:
            served = view(t.kind, obj, t.version)
            if tabled:  # kubectl get --watch: each event's object is a one-row Table
                return table(t.kind, t.version, [served], {"resourceVersion": obj["metadata"]["resourceVersion"]},
                             include)
            return served

        # read now: the events are written after the request's context is gone
        tabled, include = wants_table(request.headers.get("Accept")), include_object(request.args.get("includeObject"))
        events = watch.stream(self.store, t.kind, asked, serve, bookmark, watch.client_gone(request.environ))
        return Response(events, status=200, mimetype="application/json",
                        headers={"Cache-Control": "no-cache, private"}, direct_passthrough=True)

    def create(self, t: Target) -> Response:
        body = _body()
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request must be an object")
        expected = t.kind.api_version(t.version)
        if body.get("apiVersion") not in (None, expected) or body.get("kind") not in (None, t.kind.kind):
            raise errors.bad_request(f"the API version in the data ({body.get('apiVersion')}) does not match the "
                                     f"expected API version ({expected})")
        body_ns = body.get("metadata", {}).get("namespace")
        if t.kind.namespaced and body_ns and t.namespace and body_ns != t.namespace:
            raise errors.bad_request("the namespace of the provided object does not match the namespace sent on "
                                     "the request")
        if t.kind.namespaced and not t.namespace:
            raise errors.method_not_allowed()
        warnings = check_fields(t.kind.kind, expected, body, request.args.get("fieldValidation"))
        obj = self.store.create(t.kind, stored(t.kind, body, t.version), t.namespace, self.dry_run())
        return _warned(_json(view(t.kind, obj, t.version), 201), warnings)

    def delete_collection(self, t: Target) -> Response:
        rehearsal = self.dry_run()
        items, _ = self.store.list(t.kind, t.namespace, request.args.get("labelSelector"),
                                   request.args.get("fieldSelector"))
        done = []
        for obj in items:
            try:
                done.append(self.store.delete(t.kind, t.namespace, obj["metadata"]["name"], rehearsal)[0])
            except ApiError:
                continue  # gone meanwhile
        return _json({"apiVersion": t.kind.api_version(t.version), "kind": t.kind.list_kind,
                      "metadata": {"resourceVersion": str(self.store.revision)},
                      "items": [view(t.kind, obj, t.version) for obj in done]})

    # -- items --------------------------------------------------------------------------

    def get(self, t: Target) -> Response:
        obj = view(t.kind, self.store.get(t.kind, t.namespace, t.name), t.version)
        return _table_or(t, [obj], {"resourceVersion": obj["metadata"].get("resourceVersion", "")}, obj)

    def replace(self, t: Target) -> Response:
        body = _body()
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request must be an object")
        meta = body.get("metadata") or {}
        if meta.get("name") != t.name:
            raise errors.bad_request(f"the name of the object ({meta.get('name')}) does not match the name on the "
                                     f"URL ({t.name})")
        if t.kind.namespaced and meta.get("namespace") not in (None, t.namespace):
            raise errors.bad_request("the namespace of the provided object does not match the namespace sent on "
                                     "the request")
        warnings = check_fields(t.kind.kind, t.kind.api_version(t.version), body,
                                request.args.get("fieldValidation"))
        current = self.store.find(t.kind, t.namespace, t.name) if capo_crds.is_capo(t.kind) else None
        obj = self.store.replace(t.kind, stored(t.kind, body, t.version, current), t.namespace, t.name,
                                 t.subresource, self.dry_run())
        return _warned(_json(view(t.kind, obj, t.version)), warnings)

    def patch(self, t: Target) -> Response:
        body = _body()
        content_type = request.headers.get("Content-Type", "")
        warnings: list[str] = []

        def change(current: dict) -> dict:
            before = view(t.kind, current, t.version)
            patched = patches.apply(content_type, before, body, t.kind.custom)
            if not isinstance(patched, dict):
                raise errors.bad_request("the patch did not produce an object")
            warnings[:] = check_fields(t.kind.kind, t.kind.api_version(t.version), patched,
                                       request.args.get("fieldValidation"), before)
            meta = patched.get("metadata") or {}
            if meta.get("name") not in (None, t.name):
                raise errors.bad_request("metadata.name: Invalid value: the name of an object cannot be patched")
            return stored(t.kind, patched, t.version, current)

        applying = request.mimetype == patches.APPLY
        if applying and not request.args.get("fieldManager"):
            raise errors.invalid("meta.k8s.io", "", "PatchOptions", "", [(
                "fieldManager", "FieldValueRequired", "Required value: is required for apply patch")])
        if applying and t.subresource is None and self.store.find(t.kind, t.namespace, t.name) is None:
            return self.apply_new(t, body)  # server-side apply creates what does not exist yet
        obj = self.store.update(t.kind, t.namespace, t.name, change, t.subresource, self.dry_run())
        return _warned(_json(view(t.kind, obj, t.version)), warnings)

    def apply_new(self, t: Target, body) -> Response:
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request must be an object")
        meta = body.setdefault("metadata", {})
        if meta.get("name") not in (None, t.name):
            raise errors.bad_request(f"the name of the object ({meta.get('name')}) does not match the name on the "
                                     f"URL ({t.name})")
        meta["name"] = t.name
        obj = self.store.create(t.kind, stored(t.kind, body, t.version), t.namespace, self.dry_run())
        return _json(view(t.kind, obj, t.version), 201)

    def delete(self, t: Target) -> Response:
        obj, gone = self.store.delete(t.kind, t.namespace, t.name, self.dry_run())
        if gone and not t.kind.custom:
            details = {"name": t.name, "kind": t.kind.plural, "uid": obj["metadata"]["uid"]}
            if t.kind.group:
                details["group"] = t.kind.group
            return _json({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                          "details": details})
        return _json(view(t.kind, obj, t.version))

    @staticmethod
    def dry_run() -> bool:
        """``dryRun`` from the query, or for a DELETE from the DeleteOptions body clients send (client-go
        and the Python client put the options there)."""
        values = request.args.getlist("dryRun")
        if request.method == "DELETE" and request.get_data():
            options = _body()
            if isinstance(options, dict) and options.get("dryRun") is not None:
                values = options["dryRun"] if isinstance(options["dryRun"], list) else [str(options["dryRun"])]
        return dry_run(request.method, values)

    # -- dispatch ---------------------------------------------------------------------

    def handle(self, group: str, version: str, rest: str) -> Response:
        t = parse_target(group, version, [p for p in rest.split("/") if p], self.capo.kinds)
        method = request.method
        if t.name is None:
            handler = {"GET": self.list, "POST": self.create, "DELETE": self.delete_collection}.get(method)
        elif t.subresource is not None:
            handler = {"GET": self.get, "PUT": self.replace, "PATCH": self.patch}.get(method)
        else:
            handler = {"GET": self.get, "PUT": self.replace, "PATCH": self.patch, "DELETE": self.delete}.get(method)
        if handler is None:
            raise errors.method_not_allowed()
        return handler(t)

    def authenticated(self) -> bool:
        header = request.headers.get("Authorization", "")
        scheme, _, credential = header.partition(" ")
        return scheme.lower() == "bearer" and credential.strip() == self.token


def create_app(store: Store, token: str) -> Flask:
    """The WSGI application serving ``store`` to clients presenting ``token``."""
    app = Flask("minicloud.kube")
    api = KubeApi(store, token)
    register(app)  # /openapi/v2, /openapi/v3
    _add_checks(app, api)
    _add_discovery(app, api)
    _add_resources(app, api)
    _add_capo_crds(app, api)
    return app


def _add_checks(app: Flask, api: KubeApi) -> None:
    """Authentication first, and every error answered as a Kubernetes Status."""

    @app.before_request
    def authenticate():
        if request.path.rstrip("/") not in PUBLIC_PATHS and not api.authenticated():
            return _json(errors.unauthorized().status(), 401)
        return None

    @app.errorhandler(ApiError)
    def api_error(exc: ApiError):
        return _json(exc.status(), exc.code)

    @app.errorhandler(404)
    def no_route(_exc):
        return _json(errors.not_found_path(request.path).status(), 404)

    @app.errorhandler(405)
    def no_method(_exc):
        return _json(errors.method_not_allowed().status(), 405)

    @app.errorhandler(Exception)
    def internal(exc):
        traceback.print_exc()
        return _json(ApiError(500, "InternalError", f"Internal error occurred: {exc}", {}).status(), 500)


def _add_discovery(app: Flask, api: KubeApi) -> None:
    """Version, health and the API discovery documents."""

    @app.get("/version/", strict_slashes=False)
    def version():
        return _json(discovery.SERVER_VERSION)

    @app.get("/healthz/", strict_slashes=False)
    @app.get("/livez/", strict_slashes=False)
    @app.get("/readyz/", strict_slashes=False)
    def health():
        return Response("ok", mimetype="text/plain")

    @app.get("/api/", strict_slashes=False)
    def core_versions():
        return _json(discovery.api_versions())

    @app.get("/apis/", strict_slashes=False)
    def group_list():
        return _json(discovery.api_group_list(api.capo.kinds))

    @app.get("/api/<version>/", strict_slashes=False)
    def core_resources(version):
        found = discovery.resource_list("", version, api.capo.kinds)
        if found is None:
            raise errors.not_found_path(request.path)
        return _json(found)

    @app.get("/apis/<group>/", strict_slashes=False)
    def group(group):
        found = discovery.api_group(group, api.capo.kinds)
        if found is None:
            raise errors.not_found_path(request.path)
        return _json(found)

    @app.get("/apis/<group>/<version>/", strict_slashes=False)
    def group_resources(group, version):
        found = discovery.resource_list(group, version, api.capo.kinds)
        if found is None:
            raise errors.not_found_path(request.path)
        return _json(found)


def _add_resources(app: Flask, api: KubeApi) -> None:
    """Every resource path of the core group and of the named groups, served by ``api``."""
    methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]

    @app.route("/api/<version>/<path:rest>", methods=methods)
    def core(version, rest):
        return api.handle("", version, rest)

    @app.route("/apis/<group>/<version>/<path:rest>", methods=methods)
    def named(group, version, rest):
        return api.handle(group, version, rest)


def _add_capo_crds(app: Flask, api: KubeApi) -> None:
    """minicloud's own endpoint for the plane's CAPO CRDs (:mod:`minicloud.kube.capo_crds`): GET says which are
    installed, PUT ``{"apiVersion": "v1beta2"}`` installs CAPO v0.15's (``v1beta1``: back to v0.14's)."""

    @app.route(capo_crds.ENDPOINT, methods=["GET", "PUT"])
    def capo_crds_endpoint():
        if request.method == "PUT":
            body = _body()
            return _json(api.capo.install((body or {}).get("apiVersion") if isinstance(body, dict) else None,
                                          api.store))
        return _json(api.capo.describe())
