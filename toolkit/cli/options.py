"""What every command of `toolkit` shares: the workspace and credentials options, opening a workspace,
and the one-line errors with their exit codes.

Exit codes: 0 done, 1 something failed (a resource, a check; for `refresh`: nothing was refreshed),
2 bad arguments or a toolkit error, 3 `refresh` refreshed some resources and not others, 75 the
workspace stayed held by another process past the wait (EX_TEMPFAIL: run again later), 130 interrupted.
"""
from __future__ import annotations

__all__ = ["BUSY", "CREDENTIALS_HELP", "WAIT_HELP", "credentials_file", "credentials_refused", "credentials_source",
           "duration", "failed", "in_cli_words", "missing_workspace", "open_workspace", "password_on_command_line", "read_credentials",
           "read_only_waiting", "unknown_name", "workspace_options"]

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

    from toolkit.workspace import Workspace

BUSY = 75
CREDENTIALS_HELP = ("the credentials file `toolkit sandbox` writes (or TOOLKIT_CREDENTIALS); "
                    "TOOLKIT_<SERVICE>_<FIELD> variables fill what it lacks")
WAIT_HELP = ("seconds to wait while another process holds the workspace (default TOOLKIT_WORKSPACE_WAIT, "
             "or 60); still held after that: exit 75")


def failed(command: str, error: BaseException) -> int:
    """One line for a toolkit error, and its exit code: 75 for a workspace still held after the wait.
    The line passes the mask once more: a team workspace's address may hold its catalog's password."""
    from toolkit.catalog.masking import mask_passwords
    print(f"toolkit {command}: {type(error).__name__}: {mask_passwords(in_cli_words(str(error)))}", file=sys.stderr)
    return getattr(error, "exit_code", 2)


def in_cli_words(text: str) -> str:
    """An error's advice in the command's own words: the option, not the Python argument it maps to."""
    return (text.replace("toolkit.Workspace(path, wait=300)", "--wait 300")
            .replace("pass overwrite=True", "pass --overwrite"))


def workspace_options(parser: argparse.ArgumentParser, what: str) -> None:
    """--workspace (a DuckDB file, or a team workspace's `ducklake:...` address) and --data-path; both
    also from the environment, so that a catalog's password need not be on a command line (`ps`)."""
    import os
    parser.add_argument("--workspace", default=os.environ.get("TOOLKIT_WORKSPACE"), help=(
        f"{what}, or a team workspace's DuckLake address ('ducklake:postgres:dbname=... host=... user=...'); "
        "default TOOLKIT_WORKSPACE"))
    parser.add_argument("--data-path", default=os.environ.get("TOOLKIT_DATA_PATH"), metavar="PATH",
                        help="a team workspace's data folder or s3:// path (default TOOLKIT_DATA_PATH)")


def password_on_command_line(args: argparse.Namespace) -> None:
    """Say, once, that a workspace address given with its password on the command line shows in `ps` to
    every user of the machine, and what to do instead (it is still used: the next run should not)."""
    import os

    from toolkit.storage.lake import is_lake, without_password
    given = getattr(args, "workspace", None)
    if is_lake(given) and given != os.environ.get("TOOLKIT_WORKSPACE") and without_password(given)[1] is not None:
        print("toolkit: deprecated: a password in --workspace shows in `ps` to every user of this machine; "
              "put the address in TOOLKIT_WORKSPACE, or leave the password out and set PGPASSWORD "
              "(or ~/.pgpass)", file=sys.stderr, flush=True)


def open_workspace(args: argparse.Namespace, *, read_only: bool = False, wait: float | None = None) -> Workspace:
    from toolkit.workspace import Workspace
    return Workspace(args.workspace, data_path=args.data_path or None, read_only=read_only, wait=wait)


def missing_workspace(args: argparse.Namespace, command: str) -> bool:
    """Say so, in one line, when the workspace named is neither given nor there."""
    from toolkit.storage.lake import is_lake
    if not args.workspace:
        print(f"toolkit {command}: name the workspace: --workspace FILE (or TOOLKIT_WORKSPACE)", file=sys.stderr)
        return True
    if not is_lake(args.workspace) and not Path(args.workspace).exists():
        from toolkit.storage.file import not_there
        print(f"toolkit {command}: {not_there(Path(args.workspace), 'workspace')}", file=sys.stderr)
        return True
    return False


def credentials_source(args: argparse.Namespace) -> str | None:
    """Where `read_credentials` found them, for the errors that ask the analyst to check them."""
    from toolkit.http.credentials import named_file
    if getattr(args, "credentials", None):
        return f"the file {args.credentials} (--credentials)"
    named = named_file()
    return f"the file {named} (TOOLKIT_CREDENTIALS)" if named else None


def credentials_file(args: argparse.Namespace) -> str | None:
    """The credentials file named: --credentials, else TOOLKIT_CREDENTIALS."""
    from toolkit.http.credentials import named_file
    return named_file(getattr(args, "credentials", None))


def read_credentials(args: argparse.Namespace) -> dict[str, dict]:
    """Per service, the credentials in `--credentials FILE` or TOOLKIT_CREDENTIALS; {} without either.
    toolkit.http.credentials reads it (bounded, regular files only) as `toolkit.connect` does, and the
    environment's TOOLKIT_<SERVICE>_<FIELD> fill what it lacks there. Nothing of it is ever printed."""
    from toolkit.http.credentials import read_file
    given = credentials_file(args)
    return read_file(given) if given else {}


def credentials_refused(args: argparse.Namespace, command: str) -> bool:
    """Say, in one line, why a credentials file named cannot be taken, before anything is opened or sent."""
    from toolkit.errors import ToolkitError
    try:
        read_credentials(args)
    except ToolkitError as error:
        print(f"toolkit {command}: {error}", file=sys.stderr)
        return True
    return False


def unknown_name(command: str, what: str, names: Sequence[str], known: Sequence[str], where: str = "") -> bool:
    """Say, in one line, the first of `names` not in `known` and the closest it has (exit 2)."""
    from toolkit.errors import UnknownNameError
    for name in names:
        if name not in known:
            refused = UnknownNameError(what, name, list(known), where=where, lister=f"`toolkit {what}s`")
            print(f"toolkit {command}: {refused}", file=sys.stderr)
            return True
    return False


def duration(text: str) -> float:
    """A duration for --max-age or --older-than, read as `max_age=` is in Python (toolkit.http.durations)."""
    from toolkit.errors import ValidationError
    from toolkit.http.durations import span_seconds
    try:
        return span_seconds(text, "--max-age")
    except ValidationError as error:
        if "negative" in error.rule:
            raise argparse.ArgumentTypeError(f"{text!r}: a duration is not negative") from None
        raise argparse.ArgumentTypeError(f"{text!r} is no duration: give seconds, or e.g. 30m, 6h, 1d") from None


def read_only_waiting(path: Path, wait: float | None) -> duckdb.DuckDBPyConnection:
    """The file opened read-only, waiting up to `wait` (else TOOLKIT_WORKSPACE_WAIT) while another
    process writes to it; WorkspaceBusyError after that."""
    import time

    from toolkit.errors import WorkspaceBusyError, WorkspaceInUseError
    from toolkit.storage.file import open_duckdb
    from toolkit.storage.handle import wait_seconds
    patience, started = wait_seconds(wait), time.monotonic()
    while True:
        try:
            return open_duckdb(path, read_only=True)
        except WorkspaceInUseError as error:
            if time.monotonic() - started >= patience:
                raise WorkspaceBusyError(path, time.monotonic() - started, pid=error.pid,
                                         holder=f"process {error.pid}" if error.pid else "another process") from None
            time.sleep(0.1)
