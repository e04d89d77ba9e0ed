"""`toolkit cassettes record | check-stable`: recorded exchanges from the sandbox or a real service."""
from __future__ import annotations

__all__ = ["add"]

import argparse
import json
import sys
from pathlib import Path

from toolkit.cli.options import (
    CREDENTIALS_HELP,
    read_credentials,
)


def _cassettes(args: argparse.Namespace) -> int:
    from toolkit import cassettes
    from toolkit.errors import ToolkitError
    actions = [args.action] if args.action else None
    if args.task == "check-stable":
        differ = cassettes.check_stable(args.service, folder=args.out or cassettes.FOLDER, actions=actions)
        print("\n".join(differ) or "stable: re-recording gives the committed files byte for byte")
        return 1 if differ else 0
    examples = json.loads(Path(args.examples).read_text()) if args.examples else None
    try:
        # only when named: a TOOLKIT_CREDENTIALS of a sandbox's file would turn a recording from a fresh
        # seeded sandbox into one from a "real" service
        credentials = read_credentials(args).get(args.service or "", {}) if args.credentials else {}
    except ToolkitError as error:
        print(f"toolkit cassettes: {error}", file=sys.stderr)
        return 2
    done = cassettes.record(args.service, folder=args.out, base_url=args.base_url, writes=args.writes,
                            actions=actions, examples=examples, credentials=credentials)
    for result in done:
        flag = "skip" if result.skipped else "ok  " if result.ok else "FAIL"
        print(f"{flag} {result.path}  {result.note}".rstrip())
    recorded = [r for r in done if not r.skipped]
    print(f"{sum(r.ok for r in recorded)} of {len(recorded)} recorded, {len(done) - len(recorded)} skipped")
    return 0 if all(r.ok for r in done) else 1


def add(sub: argparse._SubParsersAction) -> None:
    """Register this group's commands on the `toolkit` parser's subcommands."""
    tapes = sub.add_parser("cassettes", help="record cassettes from the sandbox or a real service; check-stable")
    tapes.add_argument("task", choices=("record", "check-stable"),
                       help="record: write cassettes; check-stable: record again into a temporary folder and "
                            "compare")
    tapes.add_argument("--service", help="one service (default: every service the sandbox serves)")
    tapes.add_argument("--action", help="one action (every version of it), e.g. list_teams")
    tapes.add_argument("--base-url", help="a real service: credentials from TOOLKIT_<SERVICE>_<FIELD>")
    tapes.add_argument("--out", help="folder (default cassettes/, cassettes-real/ for a real service)")
    tapes.add_argument("--writes", action="store_true", help="against a real service, record write actions too")
    tapes.add_argument("--examples", help="a JSON file of ids for the example calls ({\"asset_id\": ...})")
    tapes.add_argument("--credentials", metavar="FILE", help=CREDENTIALS_HELP)
    tapes.set_defaults(run=_cassettes)
