"""`toolkit lake init | check | clean`: a team workspace's upkeep (DuckLake on PostgreSQL)."""
from __future__ import annotations

__all__ = ["add"]

import argparse
import sys
from pathlib import Path

from toolkit.cli.options import (
    WAIT_HELP,
    duration,
    failed,
    open_workspace,
    workspace_options,
)

PASSWORDS = {"writer": "TOOLKIT_LAKE_WRITER_PASSWORD", "reader": "TOOLKIT_LAKE_READER_PASSWORD"}
ADMIN_PASSWORD = "TOOLKIT_LAKE_ADMIN_PASSWORD"


def _admin_address(address: str, from_argv: bool) -> str | None:
    """The superuser's address with its password, which never comes from the command line (`ps` shows
    it to every user of the machine): TOOLKIT_LAKE_ADMIN_PASSWORD, else libpq's own (PGPASSWORD,
    ~/.pgpass), else a prompt on a terminal. None (said) for an address given with its password."""
    import getpass
    import os

    from toolkit.storage.lake import without_password
    bare, given = without_password(address)
    if given is not None and from_argv:
        print("toolkit lake init: refused: a password on the command line shows in `ps` to every user of this "
              f"machine. Give the address without it and the password in {ADMIN_PASSWORD} (or PGPASSWORD), or "
              "type it at the prompt: toolkit lake init 'ducklake:postgres:dbname=... host=... user=...' ...",
              file=sys.stderr)
        return None
    password = given or os.environ.get(ADMIN_PASSWORD)
    if password is None and not os.environ.get("PGPASSWORD") and sys.stdin.isatty():
        password = getpass.getpass(f"password of {bare.rsplit('user=', 1)[-1].split()[0] if 'user=' in bare else 'the superuser'}"
                                   " (or set TOOLKIT_LAKE_ADMIN_PASSWORD): ") or None
    if password is None:
        return bare
    quoted = "'" + password.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return f"{bare} password={quoted}"


def _lake_init(args: argparse.Namespace) -> int:
    """Make a lake and its roles (or print the SQL that does): database, roles, DuckLake's and toolkit's
    tables, then the grants."""
    import os

    from toolkit.catalog.masking import mask_passwords
    from toolkit.errors import ToolkitError
    from toolkit.storage import grants
    from toolkit.workspace import Workspace
    address = args.address or os.environ.get("TOOLKIT_WORKSPACE")
    data_path = args.data_path or os.environ.get("TOOLKIT_DATA_PATH")
    if not address:
        print("toolkit lake init: name the lake: toolkit lake init 'ducklake:postgres:dbname=LAKE host=... "
              "user=ADMIN' --data-path PATH --writer ROLE --reader ROLE", file=sys.stderr)
        return 2
    admin = _admin_address(address, from_argv=bool(args.address)) if not args.print_sql else address
    if admin is None:
        return 2
    address = admin
    passwords = {getattr(args, kind): os.environ[name] for kind, name in PASSWORDS.items()
                 if getattr(args, kind) and os.environ.get(name)}
    secrets = [*passwords.values(), *([os.environ[ADMIN_PASSWORD]] if os.environ.get(ADMIN_PASSWORD) else [])]
    try:
        if args.print_sql:
            print(grants.plan(address, args.writer, args.reader, shown=True).printed())
            print(f"-- then the first open makes the lake: toolkit lake init '{mask_passwords(address)}' "
                  f"--data-path {data_path or 'PATH'} as this role; each role's password as a psql variable: "
                  f"psql {' '.join(f'-v {role}_password=...' for role in (args.writer, args.reader) if role)}")
            return 0
        if not data_path:
            print("toolkit lake init: name the lake's data: --data-path FOLDER or s3://... (or TOOLKIT_DATA_PATH)",
                  file=sys.stderr)
            return 2
        roles = [r for r in (args.writer, args.reader) if r]
        step = grants.plan(address, args.writer, args.reader, passwords,
                           grants.existing(address, roles, secrets))
        for line in grants.run(address, step, secrets, "server"):
            print(f"  {line}")
        if "://" not in data_path:
            Path(data_path).expanduser().mkdir(parents=True, exist_ok=True)
        with Workspace(address, data_path=data_path) as ws:  # DuckLake's tables and toolkit's own
            where = ws.where
        for line in grants.run(address, step, secrets, "database"):
            print(f"  {line}")
    except ToolkitError as error:
        return failed("lake init", error)
    print(f"the lake {where} is ready, its data in {data_path}")
    for kind in ("writer", "reader"):
        role = getattr(args, kind)
        if role and role not in passwords:
            print(f"  {role} has no password from {PASSWORDS[kind]}: a DBA sets it (ALTER ROLE {role} PASSWORD ...)")
    if "://" not in data_path:
        print(f"  the writer's machines write {data_path}, the readers' read it: give their OS users that access")
    print("  toolkit lake check --workspace 'ducklake:postgres:... user=ROLE' says what each role may do")
    return 0


def _lake_check(args: argparse.Namespace) -> int:
    """What the address's role may and may not do in the lake; exit 1 when it cannot even read it."""
    from toolkit.catalog.masking import mask_passwords
    from toolkit.errors import ToolkitError
    from toolkit.storage import grants
    if not args.workspace:
        print("toolkit lake check: name a team workspace: --workspace 'ducklake:postgres:...' (or TOOLKIT_WORKSPACE)",
              file=sys.stderr)
        return 2
    try:
        role, found = grants.abilities(args.workspace)
    except ToolkitError as error:
        return failed("lake check", error)
    print(f"role {role} on {mask_passwords(args.workspace)}:")
    for ability in found:
        print(f"  {'can   ' if ability.can else 'cannot'} {ability.what}")
        if not ability.can:
            shown = ", ".join(ability.missing[:4]) + (f" and {len(ability.missing) - 4} more" if len(ability.missing) > 4 else "")
            # a role that may not even read may be meant to write: --writer gives both, --reader reading alone
            kind = f"--writer {role}" if ability.what.startswith("write") else \
                f"--reader {role} (or --writer {role}, to write as well)"
            print(f"         missing {shown}: a DBA gives it with toolkit lake init 'ducklake:postgres:... "
                  f"user=ADMIN' --data-path PATH {kind}; --print-sql prints its SQL instead")
    return 0 if found[0].can else 1


def _lake_clean(args: argparse.Namespace) -> int:
    """Remove (or list) a team workspace's orphan data files."""
    from toolkit.errors import ToolkitError
    from toolkit.storage.lake import is_lake
    if not args.workspace or not is_lake(args.workspace):
        print("toolkit lake clean: name a team workspace: --workspace 'ducklake:...' (or TOOLKIT_WORKSPACE); "
              "a file workspace has no orphan files", file=sys.stderr)
        return 2
    try:
        with open_workspace(args, wait=args.wait) as ws:    # DuckLake lists them only through a writable attach
            found = ws.remove_orphans(older_than=args.older_than, dry_run=args.dry_run)
            where = ws.where
    except ToolkitError as error:
        return failed("lake clean", error)
    for name in found:
        print(name)
    print(f"{len(found)} orphan file(s) {'found' if args.dry_run else 'removed'} in {where}")
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    """Register this group's commands on the `toolkit` parser's subcommands."""
    lake = sub.add_parser("lake", help="a team workspace's upkeep (DuckLake)").add_subparsers(
        dest="task", required=True, metavar="TASK",
        help="init: make a lake and its roles; check: what a role may do; clean: remove orphan data files")
    init = lake.add_parser("init", help="make a team lake in a PostgreSQL server: its database, DuckLake's and "
                                        "toolkit's tables, a writer role and a read-only role with exactly what "
                                        "each needs (as a superuser or a role with CREATEDB and CREATEROLE)")
    init.add_argument("address", nargs="?", default=None, metavar="ADDRESS",  # its password: never here
                      help="'ducklake:postgres:dbname=LAKE host=... user=ADMIN' (default TOOLKIT_WORKSPACE), without its password: that comes from TOOLKIT_LAKE_ADMIN_PASSWORD, PGPASSWORD or a prompt; the "
                           "database is created when missing")
    init.add_argument("--data-path", default=None, metavar="PATH",
                      help="the lake's data folder or s3:// path (default TOOLKIT_DATA_PATH)")
    init.add_argument("--writer", metavar="ROLE", help="the role that refreshes (a cron job's): created when "
                      "missing, its password from TOOLKIT_LAKE_WRITER_PASSWORD")
    init.add_argument("--reader", metavar="ROLE", help="a role that only reads (analysts'): created when missing, "
                      "its password from TOOLKIT_LAKE_READER_PASSWORD")
    init.add_argument("--print-sql", action="store_true",
                      help="print the SQL for a DBA (passwords as psql variables) and run nothing")
    init.set_defaults(run=_lake_init)
    probe = lake.add_parser("check", help="what the role of a team workspace's address may and may not do, "
                                          "and the grant each missing thing needs")
    workspace_options(probe, "the team workspace")
    probe.set_defaults(run=_lake_check)
    clean = lake.add_parser("clean", help="remove the data files no commit names (left by commits killed "
                                          "mid-way); run it daily beside the refresh")
    workspace_options(clean, "the team workspace")
    clean.add_argument("--older-than", type=duration, default=3600.0, metavar="DURATION",
                       help="only files written longer ago than this (default 1h: a younger one may be a "
                            "commit in flight); seconds or 30m, 6h, 1d")
    clean.add_argument("--dry-run", action="store_true", help="list them, remove nothing")
    clean.add_argument("--wait", type=float, metavar="SECONDS", help=WAIT_HELP)
    clean.set_defaults(run=_lake_clean)
