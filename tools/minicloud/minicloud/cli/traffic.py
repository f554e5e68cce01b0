"""Verbs fault (rules and gates), extension (an older API), policy (a service's own rules) and requests (counts)."""

from __future__ import annotations

from minicloud.cli.common import print_json, status_value
from minicloud.runtime.control import POLICY_SERVICES, Minicloud
from minicloud.traffic import hidden_extensions
from minicloud.traffic.faults import GATE_TIMEOUT, SERVICES


def cmd_fault(cloud: Minicloud, args) -> int:
    if args.fault_action == "add":
        print_json(cloud.add_fault(args.service, method=args.method, path=args.path, status=args.status,
                                   retry_after=args.retry_after, count=args.count, delay=args.delay,
                                   gate=args.gate, after=args.after, query=args.query))
    elif args.fault_action == "list":
        print_json(cloud.faults())
    elif args.fault_action == "release":
        rule = cloud.release_fault(args.id)
        print(f"released fault rule {rule['id']} ({rule['held']} held request(s) let through)")
    else:
        print(f"cleared {cloud.clear_faults()} fault rule(s)")
    return 0


def cmd_extension(cloud: Minicloud, args) -> int:
    if args.extension_action == "hide":
        hidden = cloud.hide_extension(args.alias)
    elif args.extension_action == "restore":
        hidden = cloud.restore_extensions(args.alias)
    else:
        hidden = cloud.hidden_extensions()
    print_json({"hidden": hidden})
    return 0


def cmd_policy(cloud: Minicloud, args) -> int:
    if args.policy_action == "set":
        print_json(cloud.set_policy(args.service, {args.rule: args.check}))
    elif args.policy_action == "reset":
        cloud.reset_policy(args.service)
        print_json({})
    else:
        print_json(cloud.policy(args.service))
    return 0


def cmd_requests(cloud: Minicloud, args) -> int:
    print_json(cloud.request_counts(service=args.service, reset=args.reset))
    return 0


def add_fault_verb(verbs) -> None:
    p = verbs.add_parser("fault", help="add, list, release or clear HTTP fault rules")
    actions = p.add_subparsers(dest="fault_action", required=True)
    add = actions.add_parser("add", help="add a rule")
    add.add_argument("--service", required=True, choices=SERVICES)
    add.add_argument("--method", default="*", help="HTTP method (default any)")
    add.add_argument("--path", default="*", help="glob on the request path, e.g. /v2/lbaas/pools/*/members")
    add.add_argument("--query", help="key=value pairs (joined with &) the query must hold, e.g. watch=true")
    add.add_argument("--status", type=status_value,
                     help="401 (an expired token, in the service's own words), 405, 410, 429, 500, 502, 503, 504 "
                          "or drop")
    add.add_argument("--retry-after", type=float, help="Retry-After header value, seconds")
    add.add_argument("--count", type=int, help="fire this many times, then the rule is spent")
    add.add_argument("--delay", type=float, default=0.0, help="seconds to wait before answering")
    add.add_argument("--after", action="store_true",
                     help="let the request through to the service first (it commits), then answer --status or "
                          "drop the connection instead of its answer (without --status: its answer, --delay late)")
    add.add_argument("--gate", action="store_true",
                     help="hold matching requests until 'fault release ID' (or clear), then let them through; "
                          f"503 after {GATE_TIMEOUT:g} s")
    actions.add_parser("list", help="list rules with how often each fired (gates: how many requests they hold)")
    release = actions.add_parser("release", help="remove rule ID, letting the requests it holds through")
    release.add_argument("id", type=int)
    actions.add_parser("clear", help="remove all rules (gates let what they hold through)")
    p.set_defaults(func=cmd_fault)


def add_verbs(verbs) -> None:
    add_fault_verb(verbs)

    p = verbs.add_parser("extension", help="hide API extensions: answer as an older cloud without them")
    actions = p.add_subparsers(dest="extension_action", required=True)
    hide = actions.add_parser("hide", help="leave ALIAS out of the extension list and answer 404 on its paths")
    hide.add_argument("alias", choices=sorted(hidden_extensions.HIDEABLE))
    restore = actions.add_parser("restore", help="serve ALIAS again (default: every hidden extension)")
    restore.add_argument("alias", nargs="?", choices=sorted(hidden_extensions.HIDEABLE))
    actions.add_parser("list", help="the hidden extensions")
    p.set_defaults(func=cmd_extension)

    p = verbs.add_parser("policy", help="override rules of a service's own policy (Octavia's)")
    actions = p.add_subparsers(dest="policy_action", required=True)
    override = actions.add_parser("set", help="set RULE to CHECK, e.g. os_load-balancer_api:loadbalancer:get_status '!'")
    override.add_argument("service", choices=sorted(POLICY_SERVICES))
    override.add_argument("rule")
    override.add_argument("check", help="an oslo.policy check: '!' refuses everyone, '@' allows everyone")
    for action, text in (("reset", "the service's default policy again"), ("list", "the overrides in force")):
        actions.add_parser(action, help=text).add_argument("service", choices=sorted(POLICY_SERVICES))
    p.set_defaults(func=cmd_policy)

    p = verbs.add_parser("requests", help="request counts by service, method and path")
    p.add_argument("--service", choices=SERVICES)
    p.add_argument("--reset", action="store_true", help="zero the counts after printing")
    p.set_defaults(func=cmd_requests)
