"""`toolkit demo` and `toolkit sandbox` (and `sandbox advance`, which moves a running sandbox's clock)."""
from __future__ import annotations

__all__ = ["add"]

import argparse
import errno
import sys

from toolkit.cli.options import (
    duration,
    read_credentials,
)


def _demo(args: argparse.Namespace) -> int:
    from toolkit import demo
    return demo.run(out=args.out, scale=args.scale)


def _sandbox(args: argparse.Namespace) -> int:
    from toolkit import sandbox
    if args.task == "advance":
        return _advance(args)
    if args.task is not None or args.duration is not None:
        print("toolkit sandbox: the one task is `advance DURATION` (e.g. toolkit sandbox advance 3h)", file=sys.stderr)
        return 2
    try:
        sandbox.serve(port=args.port, scale=args.scale, seed=args.seed, drift=args.drift,
                      credentials_file=args.credentials)
    except OSError as error:    # one line, not the server's 24 frames; the running sandbox's file stays
        if error.errno == errno.EADDRINUSE:
            print(f"toolkit sandbox: port {args.port} on 127.0.0.1 is taken (a sandbox already running? `jobs` "
                  f"lists it, `kill %1` stops it); or serve on another: --port {args.port + 1}, or --port 0 for "
                  "any free one", file=sys.stderr)
        else:
            what = f"cannot write the credentials file {args.credentials}" if args.credentials else "cannot start"
            print(f"toolkit sandbox: {what}: {error.strerror or error}", file=sys.stderr)
        return 2
    return 0


def _advance(args: argparse.Namespace) -> int:
    """Move the clock of the sandbox `toolkit sandbox` serves, from another shell, through its control
    route and the token its credentials file holds."""
    import requests

    from toolkit.errors import ToolkitError
    from toolkit.sandbox.control import CONTROL
    try:
        seconds = duration(args.duration or "")
    except argparse.ArgumentTypeError as error:
        print(f"toolkit sandbox advance: {error}", file=sys.stderr)
        return 2
    try:
        control = read_credentials(args).get(CONTROL)
    except ToolkitError as error:
        print(f"toolkit sandbox advance: {error}", file=sys.stderr)
        return 2
    if not control:
        print("toolkit sandbox advance: name the file the running `toolkit sandbox` printed: --credentials FILE "
              "(or TOOLKIT_CREDENTIALS)", file=sys.stderr)
        return 2
    with requests.Session() as session:
        session.trust_env = False       # loopback only: no proxy from the environment
        try:
            answer = session.post(f"{control['base_url']}/clock", json={"seconds": seconds}, timeout=10,
                                  headers={"Authorization": f"Bearer {control['token']}"}, allow_redirects=False)
        except requests.RequestException as error:
            print(f"toolkit sandbox advance: no sandbox answers at {control['base_url']} "
                  f"({type(error).__name__}): is `toolkit sandbox` still running?", file=sys.stderr)
            return 2
    if answer.status_code != 200:
        print(f"toolkit sandbox advance: the sandbox said {answer.status_code}", file=sys.stderr)
        return 2
    print(f"sandbox clock advanced {args.duration}: now {answer.json()['now']}")
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    """Register this group's commands on the `toolkit` parser's subcommands."""
    demo = sub.add_parser("demo", help="start the sandbox, pull every resource, write a DuckDB file and a report")
    demo.add_argument("--out", default="demo-output", help="folder for the DuckDB file and the report")
    demo.add_argument("--scale", type=float, default=1, help="size of the sandbox's seed data")
    demo.set_defaults(run=_demo)
    box = sub.add_parser("sandbox", help="serve the four emulated services on 127.0.0.1 until interrupted; "
                                         "`toolkit sandbox advance 3h` moves its clock from another shell")
    box.add_argument("task", nargs="?", choices=("advance",),
                     help="advance: move the running sandbox's clock (it reads --credentials or TOOLKIT_CREDENTIALS)")
    box.add_argument("duration", nargs="?", help="how far to advance: seconds, or 30m, 6h, 1d")
    box.add_argument("--port", type=int, default=8765, help="the port on 127.0.0.1 (default 8765)")
    box.add_argument("--scale", type=float, default=1, help="size of the seed data (1: the demo's; 0.25 smaller)")
    box.add_argument("--seed", type=int, default=0, help="the seed: the same seed gives the same data")
    box.add_argument("--drift", nargs="?", const=True, default=None, metavar="KINDS",
                     help="answers that differ from the catalog, to try `toolkit doctor` or a pull on: every "
                          "kind, or some by name (extra_field,number_as_string,...)")
    box.add_argument("--credentials", metavar="FILE",
                     help="where to write the credentials file (readable by you alone) that the other commands' "
                          "--credentials read; default: a new private folder, printed")
    box.set_defaults(run=_sandbox)
