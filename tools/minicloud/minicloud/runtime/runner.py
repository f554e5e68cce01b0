"""Entry point of every process minicloud starts.

    python -m minicloud.runtime.runner init SERVICE     # initialise a service's data, then exit
    python -m minicloud.runtime.runner serve SERVICE    # serve a service's API (with the traffic middleware)
    python -m minicloud.runtime.runner agent octavia    # run octavia-driver-agent
    python -m minicloud.runtime.runner seed SERVICE     # write seed data offline (JSON in on stdin, out on stdout)
    python -m minicloud.runtime.runner controller capo-load-balancer   # CAPO's load-balancer part (upstream)
    python -m minicloud.runtime.runner proxy kubernetes # the fault proxy in front of kube-apiserver (upstream)
    python -m minicloud.runtime.runner proxy kubernetes-target  # ... in front of the move target's

The state folder comes from ``$MINICLOUD_STATE_DIR``, which the launcher sets.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import signal
import sys
import traceback
import warnings

from minicloud.core.paths import STATE_DIR_ENV, StateDir
from minicloud.core.settings import HOST, Settings
from minicloud.core.wsgi import SeedEndpoint, SerializedApp, bind
from minicloud.kube.controllers.capo import OpenStack
from minicloud.runtime import processes
from minicloud.services import get_service
from minicloud.traffic.middleware import TrafficMiddleware
from minicloud.traffic.store import TrafficStore
from minicloud.upstream import capo_lb
from minicloud.upstream.api_proxy import ApiProxy
from minicloud.upstream.control_plane import UpstreamControlPlane, plane_named


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m minicloud.runtime.runner")
    parser.add_argument("action", choices=("init", "serve", "agent", "seed", "controller", "proxy"))
    parser.add_argument("service")
    args = parser.parse_args(argv)

    warnings.simplefilter("ignore")
    faulthandler.register(signal.SIGUSR1)  # kill -USR1 PID writes all stacks to the log
    state = StateDir(os.environ[STATE_DIR_ENV])
    settings = Settings.load(state)
    if settings is None:
        raise SystemExit(f"{state.settings_file} is missing")
    if args.action == "controller":
        run_controller(state, settings)
        return
    if args.action == "proxy":
        run_proxy(state, settings, args.service)
        return
    service = get_service(args.service, state, settings)
    # The services parse sys.argv themselves: leave them only the program name.
    sys.argv = sys.argv[:1]

    if args.action == "init":
        service.initialize()
    elif args.action == "seed":
        print(json.dumps(service.seed(json.load(sys.stdin))), flush=True)
    elif args.action == "agent":
        service.run_driver_agent()
    else:
        try:
            server = bind(HOST, service.port, service.server_ssl_context())  # first: a taken port fails fast
            app = service.application()
            if service.serialized:
                app = SerializedApp(app)
            app = TrafficMiddleware(app, service.service_type, TrafficStore(state.traffic_db))
            if service.seeds_while_serving:
                app = SeedEndpoint(app, service.seed_served)
            server.set_app(app)
            service.started(write_instances=lambda payload: processes.run_seed(state, "nova", payload))
        except BaseException:
            # Exit for sure: a failed service may leave non-daemon threads behind.
            traceback.print_exc()
            sys.stdout.flush()
            os._exit(1)
        print(f"serving {service.name} on {HOST}:{service.port}", flush=True)
        server.serve_forever()


def run_controller(state: StateDir, settings: Settings) -> None:
    """CAPO's load-balancer part for the real control plane (the only controller minicloud runs there)."""
    plane = UpstreamControlPlane(state, settings)
    openstack = []

    def connection():
        if not openstack:
            openstack.append(OpenStack(state, lambda payload: processes.run_seed(state, "nova", payload)))
        return openstack[0]

    print("running the CAPO load-balancer controller", flush=True)
    capo_lb.run(plane.request, connection, state.root)


def run_proxy(state: StateDir, settings: Settings, service: str) -> None:
    """The fault proxy in front of a plane's real kube-apiserver, on the ``service`` port (``kubernetes`` or
    ``kubernetes-target``), behind the traffic middleware (:mod:`minicloud.upstream.api_proxy`)."""
    plane = UpstreamControlPlane(state, settings, plane_named(service))
    server = bind(HOST, settings.port(service), plane.credentials.server_context())
    proxy = ApiProxy(plane.api_url, plane.credentials.client_context())
    server.set_app(TrafficMiddleware(proxy, service, TrafficStore(state.traffic_db)))
    print(f"proxying {HOST}:{settings.port(service)} to {plane.api_url}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
