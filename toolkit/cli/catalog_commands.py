"""What the catalog holds and what the services answer: `toolkit actions`, `resources`, `call`, `doctor`."""
from __future__ import annotations

__all__ = ["LISTED", "add"]

import argparse
import json
import sys

from toolkit.cli.options import (
    CREDENTIALS_HELP,
    credentials_file,
    credentials_refused,
    credentials_source,
    read_credentials,
    unknown_name,
)

# what `toolkit actions` and `toolkit resources` show as a table; json and csv give every column
LISTED = {"actions": ["action", "version", "method", "path", "doc"],
          "resources": ["service", "resource", "key", "fan_out", "parent", "filters", "doc"]}


def _listing(args: argparse.Namespace) -> int:
    from toolkit.catalog import listings, tables
    from toolkit.errors import UnknownNameError
    try:
        table = getattr(tables, args.command)(args.service)
    except UnknownNameError as error:
        print(f"toolkit {args.command}: {error}", file=sys.stderr)
        return 2
    if args.format == "table":
        table = table[LISTED[args.command]]
    print(listings.shown(table, args.format))
    return 0


def _call(args: argparse.Namespace) -> int:
    from toolkit import catalog
    from toolkit.errors import ToolkitError
    from toolkit.http.client import connect
    try:
        action = catalog.action(args.action)
    except KeyError as error:
        print(f"toolkit call: {error.args[0]}", file=sys.stderr)
        return 2
    try:
        params = json.loads(args.params) if args.params else {}
    except json.JSONDecodeError as error:
        # the position only: the params may hold a password, and the error would quote them
        print(f"toolkit call: the params are not JSON ({error.msg}, character {error.pos})", file=sys.stderr)
        return 2
    if not isinstance(params, dict):
        print(f"toolkit call: the params must be a JSON object, not {type(params).__name__}", file=sys.stderr)
        return 2
    if credentials_refused(args, "call"):   # said before anything is opened or sent
        return 2
    try:
        result = connect(action.service, source=credentials_source(args), credentials_file=credentials_file(args)) \
            .call(action.id, **params)
    except ToolkitError as error:
        # one line, as `pull` gives: the errors mask secret values and scrub the service's answers
        print(f"toolkit call: {type(error).__name__}: {error}", file=sys.stderr)
        return 2
    if isinstance(result, bytes):
        sys.stdout.buffer.write(result)
    else:
        print(json.dumps(result, indent=2, default=str))
    return 0


def _doctor(args: argparse.Namespace) -> int:
    from toolkit import catalog
    from toolkit.checkup.doctor import doctor
    from toolkit.errors import ToolkitError
    if unknown_name("doctor", "service", args.services, list(catalog.SERVICES)):
        return 2
    base_urls = {}
    for given in args.base_url:
        service, _, url = given.partition("=") if "=" in given.split("://", 1)[0] else ("", "", given)
        if not service and len(args.services) == 1:
            service = args.services[0]
        if service not in catalog.SERVICES or not url:
            print(f"toolkit doctor: --base-url takes SERVICE=URL, or a URL when one service is named; got {given!r}",
                  file=sys.stderr)
            return 2
        base_urls[service] = url
    try:
        credentials = read_credentials(args)
    except ToolkitError as error:
        print(f"toolkit doctor: {error}", file=sys.stderr)
        return 2
    # progress on stderr as each resource is checked (a real service may be slow); the report on stdout
    say = (lambda line: print(line, file=sys.stderr, flush=True)) if sys.stderr.isatty() else None
    try:
        named = args.services or [s for s in credentials if s in catalog.SERVICES]
        report = doctor(*named, credentials=credentials, base_urls=base_urls, page_size=args.page_size, say=say,
                        source=credentials_source(args))
    except ToolkitError as error:        # a service unknown, unconfigured or lacking a credential: nothing was sent
        print(f"toolkit doctor: {type(error).__name__}: {error}", file=sys.stderr)
        return 2
    print(report.text())
    if args.json:
        try:
            print(f"report written to {report.to_json(args.json)} (names and types only: no value, no secret)")
        except OSError as error:
            print(f"toolkit doctor: cannot write {args.json}: {error.strerror}", file=sys.stderr)
            return 2
    return 0 if report.ok else 1


def add(sub: argparse._SubParsersAction) -> None:
    """Register this group's commands on the `toolkit` parser's subcommands."""
    for name in ("actions", "resources"):
        listing = sub.add_parser(name, help=f"list the catalog's {name}")
        listing.add_argument("service", nargs="?", help=f"only this service's {name} (default: all four)")
        listing.add_argument("--format", choices=("table", "json", "csv"), default="table",
                             help="a table that fits the terminal (default), or every column as JSON or CSV")
        listing.set_defaults(run=_listing)
    call = sub.add_parser("call", help="call one action with credentials from TOOLKIT_<SERVICE>_<FIELD>")
    call.add_argument("action", help="an action id, e.g. asset_library.list_tags")
    call.add_argument("params", nargs="?", help="the params as a JSON object")
    call.add_argument("--credentials", metavar="FILE", help=CREDENTIALS_HELP)
    call.set_defaults(run=_call)
    check = sub.add_parser("doctor", help="read-only calls to services with credentials from TOOLKIT_<SERVICE>_<FIELD>: "
                                          "auth, each resource's first page against the catalog, limits, clock, "
                                          "versions; exit 0 when all answered as declared, 1 when not")
    check.add_argument("services", nargs="*", metavar="SERVICE",
                       help="services to check (default: every one with a base URL in the environment)")
    check.add_argument("--json", metavar="FILE", help="also write the report as JSON (no value, no secret), "
                                                      "to attach to a bug report")
    check.add_argument("--base-url", action="append", default=[], metavar="[SERVICE=]URL",
                       help="a service's base URL, instead of TOOLKIT_<SERVICE>_BASE_URL (repeatable)")
    check.add_argument("--page-size", type=int, default=1, help="rows asked for on each first page (default 1)")
    check.add_argument("--credentials", metavar="FILE", help=CREDENTIALS_HELP)
    check.set_defaults(run=_doctor)
