"""The `toolkit` command: demo, sandbox, actions, resources, call, pull, refresh, show, export, migrate, mcp,
doctor, lake, cassettes.

One module per group of commands (`*_commands.py`), each registering its commands with `add(sub)`;
what they share (the workspace and credentials options, the one-line errors and exit codes) is in
`toolkit.cli.options`. This module assembles the parser and runs a command, an interrupt included.
"""
from __future__ import annotations

__all__ = ["BUSY", "CREDENTIALS_HELP", "LISTED", "WAIT_HELP", "main", "parser"]

import argparse
import contextlib
import sys
from collections.abc import Iterator, Sequence

from toolkit.cli import (
    cassette_commands,
    catalog_commands,
    lake_commands,
    pull_commands,
    sandbox_commands,
    workspace_commands,
)
from toolkit.cli.catalog_commands import LISTED
from toolkit.cli.options import BUSY, CREDENTIALS_HELP, WAIT_HELP

# in the order `toolkit --help` lists them
GROUPS = (sandbox_commands, catalog_commands, pull_commands, workspace_commands, lake_commands, cassette_commands)


def _version() -> str:
    import importlib.metadata
    try:
        return importlib.metadata.version("toolkit")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="toolkit", description=__doc__.split("\n\n")[0])
    top.add_argument("--version", action="version", version=f"toolkit {_version()}")
    sub = top.add_subparsers(dest="command", required=True)
    for group in GROUPS:
        group.add(sub)
    return top


@contextlib.contextmanager
def _terminated_as_interrupted(wanted: bool = True) -> Iterator[None]:
    """SIGTERM (a cron job's timeout, `kill`) stops a command as Ctrl-C does: the pull it interrupts
    checkpoints what it walked and says so. Only the main thread may set handlers."""
    import signal
    import threading
    if not wanted or threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    import warnings
    # a warning (a credentials file others can read, drift) is one line on stderr, not a file:line and a frame
    warnings.formatwarning = lambda message, category, *_, **__: f"toolkit: {category.__name__}: {message}\n"
    args = parser().parse_args(argv)
    from toolkit.cli.options import password_on_command_line
    password_on_command_line(args)
    from toolkit.errors import Interrupted
    try:
        with _terminated_as_interrupted(args.command != "sandbox"):   # the sandbox stops on SIGTERM its own way
            return args.run(args)
    except Interrupted as stopped:
        # 130 as for any Ctrl-C, with the line that says what was kept and what to run to go on
        print(f"toolkit {args.command}: interrupted: {stopped.what}; run the same command again to go on",
              file=sys.stderr, flush=True)
        return 130
    except KeyboardInterrupt:
        print(f"toolkit {args.command}: interrupted", file=sys.stderr, flush=True)
        return 130
    except BrokenPipeError:         # `toolkit actions | head`: the reader has what it wanted
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
