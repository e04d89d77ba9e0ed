"""Bad input over every param of every catalog action: what is refused, how, and what still goes out.

Each case is one action's example params with one param replaced by a value that is wrong for it (a
wrong type, NaN, an integer no 64-bit field holds, a dot segment in a path, a filter nested past any
reason, ...). The client's HTTP session answers every request itself and records it, so nothing leaves
the process. Prints: cases, clear ValidationErrors (naming the param, a secret's value masked), other
ValidationErrors, other exception types by type, and the cases whose request went out anyway.

    .venv/bin/python benchmarks/bad_input_sweep.py [--show 5]

It needs nothing of the project but the public client, so that it runs on an older checkout too
(PYTHONPATH=<worktree>) and gives the before figures; tests/http/test_bad_input.py keeps its own recorder
for the same reason the other way round: a test does not import a benchmark.
"""
from __future__ import annotations

import argparse
import io
import math
import time
from collections import Counter, defaultdict
from typing import Any

import orjson
import requests
import urllib3
from requests.adapters import BaseAdapter, HTTPAdapter

import toolkit
from toolkit import catalog
from toolkit.catalog.audience_platform_checks import notification_filter
from toolkit.catalog.spec import Action, Param
from toolkit.errors import ModeError, ValidationError, VersionError
from toolkit.http.session import OAuthPasswordAuth, RateBudget

BASE_URL = "http://127.0.0.1:9"
CREDENTIALS = {
    "media_review": {"token": "sweep-mr-token-5f2e9a"},
    "asset_library": {"api_key": "sweep-al-key-8c1d4b", "workspace_id": "ws-1"},
    "audience_platform": {"token": "sweep-ap-token-3e7f0c"},
    "translation": {"username": "pm.user", "password": "sweep-tm-pass-6a9b2d", "client_id": "tm-client",
                    "client_secret": "sweep-tm-secret-1f4e8c"},
}
SECRET_VALUE = "sweep-secret-value-7c31"     # a wrong-shaped secret still must not show in an error


class Recorder(BaseAdapter):
    """Answers every request with 200 and `{}` (a token for the token URL), and keeps what was sent."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[requests.PreparedRequest] = []

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        self.sent.append(request)
        token = request.url.split("?")[0].endswith("/oauth/token")
        body = {"access_token": "sweep-access", "token_type": "bearer", "expires_in": 3600} if token else {}
        raw = urllib3.HTTPResponse(body=io.BytesIO(orjson.dumps(body)), status=200, preload_content=False,
                                   headers={"Content-Type": "application/json"})
        return HTTPAdapter().build_response(request, raw)

    def close(self) -> None:
        pass


def deep_list(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def bad_values(action: Action, param: Param) -> list[tuple[str, Any]]:
    """(label, value) pairs, every one wrong for this param."""
    kind, where = param.kind, param.where
    cases: list[tuple[str, Any]] = [
        ("nan", math.nan), ("inf", math.inf), ("-inf", -math.inf), ("int 2**70", 2**70), ("int -2**70", -2**70),
        ("object()", object()), ("deep list 3000", deep_list(3000)),
    ]
    if kind != "object":
        cases += [("dict", {"a": 1})]
    if kind not in ("list", "int_list", "object"):
        # a filter or sort read as a comma-separated list takes a Python list of its items too
        list_ok = param.listed
        cases += [("set", {"a"})] + ([("list", ["a", "b"])] if not list_ok else [("list of dict", [{"a": 1}])])
    if kind != "file":
        cases += [("bytes", b"abc"), ("bytearray", bytearray(b"abc"))]
    if kind != "boolean":
        cases += [("bool", True)]
    if param.required:
        cases += [("None", None)]
    if where == "path":
        cases += [("'.'", "."), ("'..'", ".."), ("''", ""), ("' '", " "), ("1 MB string", "x" * 1_000_000)]
    if kind in ("integer", "int_list", "epoch_ms"):
        cases += [("str '12'" if kind != "int_list" else "['12']", "12" if kind != "int_list" else ["12"]),
                  ("float 1.5", 1.5 if kind != "int_list" else [1.5])]
    if kind == "int_list":
        cases += [("[True]", [True]), ("[2**70]", [2**70])]
    if kind == "id":
        cases += [("float 1.5", 1.5)]
    if kind == "number":
        cases += [("str '1.5'", "1.5")]
    if kind == "boolean":
        cases += [("str 'yes'", "yes"), ("int 2", 2)]
    if kind == "url":
        cases += [("'http://[::1'", "http://[::1"), ("'example.com'", "example.com")]
    if kind == "email":
        cases += [("'nobody'", "nobody")]
    if kind == "datetime":
        cases += [("'yesterday'", "yesterday")]
    if kind == "duration":
        cases += [("P99999999999D", "P99999999999D"), ("P1W", "P1W"), ("P1M", "P1M"), ("P1Y", "P1Y"),
                  ("PT59M59S", "PT59M59S"), ("P30DT1S", "P30DT1S")]
    if kind == "secret":
        cases += [("int 7", 7)]
    if kind == "file":
        cases += [("int 7", 7)]
    if kind == "list":
        cases += [("int 5", 5), ("[dict]", [{"a": 1}]), ("[bytes]", [b"x"]), ("[None]", [None]), ("[nan]", [math.nan]),
                  ("[[str]]", [["a"]])]
    if kind == "object":
        cases += [("str", "text"), ("int 5", 5), ("{a: nan}", {"a": math.nan}), ("[inf]", [math.inf]),
                  ("{a: 2**70}", {"a": 2**70}), ("{a: bytes}", {"a": b"x"}), ("{1: a}", {1: "a"}),
                  ("{a: set}", {"a": {1}}), ("{a: object()}", {"a": object()}),
                  ("deep dict 3000", _deep_dict(3000))]
    if param.check is notification_filter:
        cases += [("3000 '('", "(" * 3000 + "a:1" + ")" * 3000), ("3000 NOT", "NOT " * 3000 + "a:1"),
                  ("'a:1 OR OR x:1'", "a:1 OR OR x:1"), ("'foo AND type:alert'", "foo AND type:alert")]
    if param.secret and kind == "secret":
        cases += [("list of secret", [SECRET_VALUE]), ("dict of secret", {"value": SECRET_VALUE})]
    return cases


def _deep_dict(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def clients() -> dict[tuple[str, str], tuple[toolkit.Client, Recorder]]:
    made = {}
    for service in catalog.SERVICES:
        for mode in ("client", "hosted") if service == "translation" else ("client",):
            client = toolkit.connect(service, base_url=BASE_URL + catalog.SERVICES[service].base_path,
                                     mode=mode, **CREDENTIALS[service])
            client.transport.sleep = lambda seconds: None
            client.transport.budget = RateBudget(None, None)     # the cases are counted, not paced
            recorder = Recorder()
            client.transport.session.mount("http://", recorder)
            if isinstance(client.auth, OAuthPasswordAuth):
                client.auth.token()      # the login, once, before the cases count requests
            recorder.sent.clear()
            made[(service, mode)] = (client, recorder)
    return made


def shows_secret(error: BaseException, value: Any) -> bool:
    text = str(error)
    return SECRET_VALUE in text or (isinstance(value, str) and len(value) > 3 and value[:40] in text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--show", type=int, default=3, help="examples to print per kind of failure")
    args = parser.parse_args()
    made = clients()
    cases = clear = other_validation = leaked = 0
    raised: Counter[str] = Counter()
    went_out: list[str] = []
    examples: dict[str, list[str]] = defaultdict(list)
    started = time.perf_counter()
    for action in catalog.ACTIONS.values():
        mode = "client" if "client" in action.modes else action.modes[0]
        client, recorder = made[(action.service, mode if action.service == "translation" else "client")]
        for param in action.params:
            for label, value in bad_values(action, param):
                cases += 1
                params = {**action.example, param.name: value}
                before = len(recorder.sent)
                case = f"{action.id} {param.name}={label}"
                try:
                    client.call(action, **params)
                except ValidationError as error:
                    named = param.name in {p.param for p in (getattr(error, "problems", None) or [error])}
                    if param.secret and shows_secret(error, value):
                        leaked += 1
                        examples["secret shown"].append(case)
                    elif named:
                        clear += 1
                    else:
                        other_validation += 1
                        examples["ValidationError naming another param"].append(f"{case}: {error}"[:160])
                except (ModeError, VersionError) as error:
                    raised[type(error).__name__] += 1
                    examples[type(error).__name__].append(case)
                except BaseException as error:          # the sweep counts whatever escapes
                    if isinstance(error, KeyboardInterrupt):
                        raise
                    raised[type(error).__name__] += 1
                    examples[type(error).__name__].append(f"{case}: {str(error)[:100]}")
                if len(recorder.sent) > before:
                    went_out.append(case)
                    examples["went out"].append(f"{case}: {recorder.sent[-1].method} {recorder.sent[-1].url[:100]}")
    took = time.perf_counter() - started
    print(f"actions {len(catalog.ACTIONS)}, params {sum(len(a.params) for a in catalog.ACTIONS.values())}")
    print(f"cases {cases} in {took:.1f} s")
    print(f"clear ValidationErrors {clear}")
    print(f"ValidationErrors naming another param {other_validation}")
    print(f"ValidationErrors showing a secret {leaked}")
    print(f"other exceptions {sum(raised.values())}: "
          + (", ".join(f"{name} {n}" for name, n in raised.most_common()) or "none"))
    print(f"requests that went out {len(went_out)}")
    for kind, lines in examples.items():
        print(f"\n{kind} ({len(lines)}), e.g.:")
        for line in lines[:args.show]:
            print("   ", line)


if __name__ == "__main__":
    main()
