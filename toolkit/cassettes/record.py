"""Recording cassettes from the sandbox or a real service, replaying one, checking re-recording is stable.

From the sandbox every catalog row gets its own fresh sandbox (seed 0, the clock at its fixed start):
a start costs 5-50 ms, and a delete or a state change then never reaches another row's recording, so
re-recording one cassette gives the bytes that re-recording all of them gives. Each cassette is
replayed once right after it is written, and the replay's summary is stored with it
(`toolkit.expect`, a top-level key of the file), so the replay test compares like with like.

Against a real service (`base_url` and credentials, or TOOLKIT_<SERVICE>_<FIELD>) only read-only rows
are recorded unless `writes=True`; an error answer is recorded as the outcome to expect.
"""
from __future__ import annotations

__all__ = ["BOUNDARY", "FOLDER", "MATCH_ON", "REAL_FOLDER", "REAL_ORIGIN", "Recorded", "SANDBOX_ORIGIN",
           "cassette_path", "check_stable", "metadata", "record", "record_command", "record_real",
           "record_sandbox", "replay", "replay_client", "rows", "use_cassette", "vcr", "vcr_config"]

import contextlib
import filecmp
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import vcr as vcrpy
from vcr.serializers import yamlserializer

from toolkit import catalog
from toolkit.cassettes.calls import example_params, exercise, summary, walk_params
from toolkit.cassettes.scrub import FORM_SECRET_FIELDS, MASK, Scrubber, json_body, norm
from toolkit.catalog.spec import Action
from toolkit.errors import ValidationError
from toolkit.http.budget import RateBudget
from toolkit.http.client import Client, connect, credentials_from_env
from toolkit.http.rules import version_tuple
from toolkit.http.session import Transport

FOLDER = "cassettes"
REAL_FOLDER = "cassettes-real"
SANDBOX_ORIGIN = "http://sandbox"
REAL_ORIGIN = "https://real"
BOUNDARY = "toolkit-cassette-boundary"       # multipart boundary: requests draws a random one
MATCH_ON = ("method", "path", "query", "json_body")


def vcr_config(scrubber: Scrubber | None = None) -> dict[str, Any]:
    """The one vcrpy configuration (pytest-recording's `vcr_config` returns it too): replay only,
    matched on method, path, query and JSON body, never host or port; paged requests in order."""
    scrubber = scrubber or Scrubber()
    return {"record_mode": "none", "decode_compressed_response": True, "match_on": MATCH_ON,
            "before_record_request": scrubber.request, "before_record_response": scrubber.response,
            "allow_playback_repeats": False, "serializer": "yaml"}


def vcr() -> vcrpy.VCR:
    """A VCR with the `json_body` matcher registered; `use_cassette(path, **vcr_config())`."""
    recorder = vcrpy.VCR()
    recorder.register_matcher("json_body", json_body)
    return recorder


def use_cassette(path: Path | str, scrubber: Scrubber | None = None, **options: Any) -> Any:
    return vcr().use_cassette(str(path), **{**vcr_config(scrubber), **options})


def cassette_path(folder: Path | str, action: Action, version: str = "") -> Path:
    """`<folder>/<service>/<name>[__v1|__v2].yaml`: one file per row of toolkit.actions()."""
    suffix = f"__{version}" if version else ""
    return Path(folder) / action.service / f"{action.name}{suffix}.yaml"


def record_command(action: Action, version: str = "", folder: str = FOLDER) -> str:
    """The command that records one cassette (what a missing cassette's failure tells)."""
    out = "" if folder == FOLDER else f" --out {folder}"
    return f"toolkit cassettes record --service {action.service} --action {action.name}{out}"


def rows(service: str | None = None, actions: list[str] | None = None) -> list[tuple[Action, str]]:
    """(action, version) per row of toolkit.actions(), optionally only the named actions."""
    wanted = {catalog.action(a, service).id for a in actions} if actions else None
    return [(a, v) for a in catalog.ACTIONS.values() for v in a.versions
            if (service is None or a.service == service) and (wanted is None or a.id in wanted)]


# --- replay ---------------------------------------------------------------------------------------

def metadata(path: Path | str) -> dict[str, Any]:
    """What the cassette says about its call: action, version, params, walk, client options, expect."""
    data = yamlserializer.deserialize(Path(path).read_text())
    return data.get("toolkit") or {}


def replay_client(service: str, options: Mapping[str, Any] | None = None) -> Client:
    """A client that can only replay: a canonical base URL, placeholder credentials, no rate budget."""
    svc = catalog.SERVICES[service]
    options = dict(options or {})
    credentials = {k: options.pop(k, "replay-" + k) for k in svc.credentials}
    # no proxy lookup: nothing leaves the process
    transport = Transport(budget=RateBudget(None, None), trust_env=False, sleep=lambda seconds: None)
    return connect(service, base_url=f"{SANDBOX_ORIGIN}/{service}{svc.base_path}", transport=transport, **credentials)


def replay(path: Path | str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Replay one cassette (record mode none): (metadata, outcome, summary of the outcome)."""
    meta = metadata(path)
    action = catalog.ACTIONS[meta["action"]]
    client = replay_client(action.service, meta.get("client"))
    with _fixed_boundary(), use_cassette(path, allow_playback_repeats=False) as cassette:
        outcome = exercise(client, action, meta.get("version") or "", meta.get("params") or {}, meta.get("walk"))
        unplayed = len(cassette) - cassette.play_count
    outcome["unplayed"] = unplayed
    return meta, outcome, summary(action, outcome)


# --- recording ------------------------------------------------------------------------------------

@dataclass
class Recorded:
    action: str
    version: str
    path: Path
    ok: bool
    note: str = ""
    skipped: bool = False


@contextlib.contextmanager
def _fixed_boundary() -> Iterator[None]:
    with mock.patch("urllib3.filepost.choose_boundary", lambda: BOUNDARY):
        yield


def _masked_params(action: Action, params: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for name, value in params.items():
        param = action.param(name)
        login = param.where == "form" and norm(param.wire) in FORM_SECRET_FIELDS
        if (param.secret or login) and value:
            value = MASK
        elif isinstance(value, tuple):
            value = list(value)
        out[name] = value
    return out


def _write(path: Path, action: Action, version: str, source: str, client_options: Mapping[str, Any],
           params: Mapping[str, Any], walk: Mapping[str, Any] | None, outcome_of_record: dict) -> Recorded:
    """Add the metadata, then replay the cassette and store what the replay saw as `expect`."""
    meta = {"action": action.id, "version": version, "source": source, "params": _masked_params(action, params),
            "walk": walk, "client": dict(client_options), "command": record_command(action, version)}
    _set_metadata(path, meta)
    try:
        _, outcome, seen = replay(path)
    except Exception as error:  # a cassette that does not replay is worse than none
        return Recorded(action.id, version, path, False, f"does not replay: {type(error).__name__}: {error}")
    if outcome["unplayed"]:
        return Recorded(action.id, version, path, False, f"{outcome['unplayed']} exchanges not replayed")
    recorded = summary(action, outcome_of_record)
    if {k: v.get("error") for k, v in recorded.items()} != {k: v.get("error") for k, v in seen.items()}:
        return Recorded(action.id, version, path, False, f"replay differs: {recorded} vs {seen}")
    _set_metadata(path, {**meta, "expect": seen})
    errors = [f"{k}: {v['error']} {v['status']}" for k, v in seen.items() if "error" in v]
    return Recorded(action.id, version, path, True, "; ".join(errors))


def _set_metadata(path: Path, meta: dict[str, Any]) -> None:
    # a top-level key of its own, which vcrpy and pytest-recording read past (vcrpy 9's own
    # `metadata` breaks pytest-recording 0.14's persister, and older vcrpy has none)
    data = yamlserializer.deserialize(path.read_text())
    data["toolkit"] = meta
    path.write_text(yamlserializer.serialize(data))


def _record_one(path: Path, action: Action, version: str, client: Client, scrubber: Scrubber,
                params: Mapping[str, Any], source: str, client_options: Mapping[str, Any],
                errors_expected: bool) -> Recorded:
    """Record into `<path>.part`, check it replays, then put it in place; a failed recording (or, from
    the sandbox, an error answer) leaves the cassette that was there."""
    walk = walk_params(action, params)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    part.unlink(missing_ok=True)
    try:
        with _fixed_boundary(), use_cassette(part, scrubber, record_mode="all"):
            try:
                outcome = exercise(client, action, version, params, walk)
            except Exception as error:
                return Recorded(action.id, version, path, False, f"{type(error).__name__}: {error}")
        if not part.exists():
            return Recorded(action.id, version, path, False, "no request was made")
        result = _write(part, action, version, source, client_options, params, walk, outcome)
        result.path = path
        if result.ok and result.note and not errors_expected:
            result.ok, result.note = False, f"the service answered an error: {result.note}"
        if result.ok:
            part.replace(path)
        return result
    finally:
        part.unlink(missing_ok=True)


def record_sandbox(service: str | None = None, *, folder: Path | str = FOLDER,
                   actions: list[str] | None = None, seed: int = 0) -> list[Recorded]:
    """One cassette per catalog row of the services the sandbox serves, each from a fresh sandbox."""
    from toolkit import sandbox
    emulators = sandbox.available()
    done = []
    for action, version in rows(service, actions):
        mode = action.modes[0]          # the sandbox runs in a mode the action is offered in
        with sandbox.start(seed=seed, mode=mode, emulators={action.service: emulators[action.service]}) as box:
            credentials: dict[str, Any] = box.credentials(action.service)   # connect's keywords
            client = connect(action.service, **credentials)
            scrubber = Scrubber({f"http://127.0.0.1:{box.port}": SANDBOX_ORIGIN}, box.secrets,
                                client.redactor.scrub)
            params = example_params(action, version, box.examples(action.service), credentials)
            options: dict[str, Any] = {k: credentials[k] for k in ("mode", "system_version") if k in credentials}
            done.append(_record_one(cassette_path(folder, action, version), action, version, client, scrubber,
                                    params, f"sandbox seed {seed}", options, errors_expected=False))
    return done


def record_real(service: str, *, base_url: str | None = None, credentials: Mapping[str, Any] | None = None,
                folder: Path | str = REAL_FOLDER, writes: bool = False, actions: list[str] | None = None,
                examples: Mapping[str, Any] | None = None) -> list[Recorded]:
    """The read-only rows (all with `writes`) of one real service, credentials from the environment.

    Ids for path params come from `examples` (`{"asset_id": ...}`), else the catalog's examples; an
    error answer (a 404 for an id the account lacks) is recorded as what to expect.
    """
    given = credentials_from_env(service, {**(credentials or {}), "base_url": base_url})
    svc = catalog.SERVICES[service]
    options = {k: given[k] for k in ("mode", "system_version") if given.get(k)}
    done = []
    for action, version in rows(service, actions):
        if action.writes and not writes:
            continue
        path = cassette_path(folder, action, version)
        why = _not_offered(action, options)
        if why:
            done.append(Recorded(action.id, version, path, True, why, skipped=True))
            continue
        client = connect(service, **given)      # its own client: each cassette holds its own token exchange
        origin = "/".join(client.base_url.split("/")[:3])
        scrubber = Scrubber({client.base_url: f"{REAL_ORIGIN}/{service}{svc.base_path}", origin: REAL_ORIGIN},
                            redact=client.redactor.scrub)
        params = example_params(action, version, examples or {}, given)
        done.append(_record_one(path, action, version, client, scrubber, params, "real", options,
                                errors_expected=True))
    return done


def _not_offered(action: Action, options: Mapping[str, Any]) -> str:
    """Why the connection's mode or system version does not offer the action ("" when it does)."""
    mode, system = options.get("mode") or "client", options.get("system_version")
    if mode not in action.modes:
        return f"offered only in {' and '.join(action.modes)} mode"
    if system and action.min_version and version_tuple(system) < version_tuple(action.min_version):
        return f"needs system version {action.min_version}"
    return ""


def record(service: str | None = None, *, folder: Path | str | None = None, base_url: str | None = None,
           credentials: Mapping[str, Any] | None = None, writes: bool = False,
           actions: list[str] | None = None, examples: Mapping[str, Any] | None = None) -> list[Recorded]:
    """Record cassettes: from the sandbox (no base_url), else from the real service at base_url.

        toolkit.cassettes.record("media_review")                                   # cassettes/media_review/
        toolkit.cassettes.record("asset_library", base_url="https://api.example.com/v1")  # cassettes-real/
    """
    real = base_url or (service and credentials_from_env(service, credentials or {}).get("base_url"))
    if real:
        if not service:
            raise ValidationError("service", service, "recording from a real service needs the service: "
                                  f"one of {', '.join(catalog.SERVICES)}")
        return record_real(service, base_url=base_url, credentials=credentials, folder=folder or REAL_FOLDER,
                           writes=writes, actions=actions, examples=examples)
    return record_sandbox(service, folder=folder or FOLDER, actions=actions)


def check_stable(service: str | None = None, *, folder: Path | str = FOLDER,
                 actions: list[str] | None = None) -> list[str]:
    """Re-record into a temporary folder and list every file that differs from `folder` (empty: stable)."""
    with tempfile.TemporaryDirectory() as tmp:
        results = record_sandbox(service, folder=tmp, actions=actions)
        differ = [f"{r.action} {r.version}: not recorded ({r.note})".strip() for r in results if not r.ok]
        for result in results:
            if not result.ok:
                continue
            committed = Path(folder) / result.path.relative_to(tmp)
            if not committed.exists():
                differ.append(f"{committed}: missing")
            elif not filecmp.cmp(committed, result.path, shallow=False):
                differ.append(f"{committed}: differs")
        return differ
