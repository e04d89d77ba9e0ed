"""The one way credentials are found, for Python and the `toolkit` command alike: what the caller
gives, then the file named by `--credentials` or TOOLKIT_CREDENTIALS (the JSON file `toolkit sandbox`
writes: per service, its base URL and credentials), then TOOLKIT_<SERVICE>_<FIELD> variables, each
filling only what the one before lacks.

The file is read as something an attacker could have put there: regular files only (a FIFO would
hang, /dev/zero never ends), at most MAX_BYTES, UTF-8 JSON not nested past MAX_DEPTH, text values only.
A file others can read or write is taken with a warning. Nothing of its content is ever quoted.
"""
from __future__ import annotations

import json
import os
import stat
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolkit import catalog
from toolkit.errors import CredentialsError, ToolkitWarning, printable

__all__ = ["MAX_BYTES", "MAX_DEPTH", "from_env", "named_file", "printable_name", "read_file", "resolve"]

MAX_BYTES = 1 << 20         # a sandbox's file is under 1 KiB; a megabyte is room for any real one
_READ: dict[tuple, dict] = {}   # per (file, inode, mtime, size): read and warned about once a process
MAX_DEPTH = 3               # {service: {field: value}}: anything deeper is not a credentials file


def named_file(given: str | os.PathLike[str] | None = None) -> str | None:
    """The credentials file to read: the one given, else TOOLKIT_CREDENTIALS, else None."""
    return os.fspath(given) if given else os.environ.get("TOOLKIT_CREDENTIALS") or None


def _bytes(path: Path) -> tuple[tuple, bytes | None]:
    """At most MAX_BYTES of a regular file, opened without blocking so that a FIFO cannot hang it, and
    the key it is known by; None for a file read before and not changed since."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as error:
        raise CredentialsError(path, f"cannot be read: {error.strerror}") from None
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            raise CredentialsError(path, "is not a regular file (a FIFO, a device or a folder): name the JSON "
                                         "file `toolkit sandbox --credentials FILE` writes")
        if found.st_size > MAX_BYTES:
            raise CredentialsError(path, f"is {found.st_size:,} bytes, more than a credentials file holds "
                                         f"({MAX_BYTES:,} at most)")
        key = (str(path.resolve()), found.st_ino, found.st_mtime_ns, found.st_size)
        if key in _READ:
            return key, None
        _permissions(path, found.st_mode)
        chunks, size = [], 0
        while size <= MAX_BYTES:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:
        raise CredentialsError(path, f"cannot be read: {error.strerror}") from None
    finally:
        os.close(fd)
    if size > MAX_BYTES:        # it grew while read
        raise CredentialsError(path, f"is more than a credentials file holds ({MAX_BYTES:,} bytes at most)")
    return key, b"".join(chunks)


def _permissions(path: Path, mode: int) -> None:
    """Warn, without refusing, when others may read the secrets or change them."""
    if os.name != "posix" or not mode & 0o046:
        return
    who = "anyone can change it" if mode & 0o002 else "other users can read it"
    warnings.warn(f"the credentials file {path} holds secrets and {who} (mode {stat.S_IMODE(mode):04o}): "
                  f"chmod 600 {path}", ToolkitWarning, stacklevel=_callers_level())


def _callers_level() -> int:
    """The stacklevel of the first frame outside toolkit: the analyst's line that connected."""
    import sys
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
        frame, level = frame.f_back, level + 1
    return level


def _depth(text: str) -> int:
    """How deep the JSON's brackets nest, counted outside strings: a 100,000-deep file is refused
    before the parser recurses into it."""
    depth = deepest = 0
    quoted = escaped = False
    for char in text:
        if quoted:
            escaped, quoted = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            quoted = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > MAX_DEPTH:
                break
        elif char in "]}":
            depth -= 1
    return deepest


def read_file(path: str | os.PathLike[str]) -> dict[str, dict[str, str]]:
    """Per service, the credentials in a JSON file (`{"translation": {"base_url": ..., ...}, ...}`);
    CredentialsError when it cannot be taken, saying why without quoting it."""
    path = Path(path).expanduser()
    key, raw = _bytes(path)
    if raw is None:
        return {service: dict(fields) for service, fields in _READ[key].items()}
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise CredentialsError(path, f"is not UTF-8 text (byte {error.start}): `toolkit sandbox` writes "
                                     "one") from None
    if _depth(text) > MAX_DEPTH:
        raise CredentialsError(path, f"nests deeper than {{service: {{field: value}}}} ({MAX_DEPTH} levels)")
    try:
        found = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        # the position only: the message of a JSONDecodeError quotes nothing, but its document would
        where = f" (line {error.lineno}, column {error.colno})" if isinstance(error, json.JSONDecodeError) else ""
        raise CredentialsError(path, f"is not JSON{where}: `toolkit sandbox` writes one") from None
    if not isinstance(found, dict) or not all(isinstance(v, dict) for v in found.values()):
        raise CredentialsError(path, "is not an object of services to their credentials "
                                     '({"translation": {"base_url": ..., ...}, ...})')
    for service, fields in found.items():
        for field, value in fields.items():
            if not isinstance(value, str):
                raise CredentialsError(path, f"gives {printable_name(service)}.{printable_name(field)} as "
                                             f"{_json_type(value)}: every value is a string")
    _READ[key] = found
    return {service: dict(fields) for service, fields in found.items()}


def printable_name(name: str) -> str:
    """A key of the file, shortened: it is a name, not a secret, but may be anything."""
    return printable(name if len(name) <= 40 else name[:39] + "…")


def _json_type(value: Any) -> str:
    return {bool: "true/false", int: "a number", float: "a number", list: "a list", dict: "an object",
            type(None): "null"}.get(type(value), type(value).__name__)


def from_env(service: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The credentials given, completed from TOOLKIT_<SERVICE>_<FIELD> environment variables."""
    fields = ("base_url", *catalog.SERVICES[service].credentials)
    found = {f: os.environ[f"TOOLKIT_{service.upper()}_{f.upper()}"] for f in fields
             if os.environ.get(f"TOOLKIT_{service.upper()}_{f.upper()}")}
    return {**found, **{k: v for k, v in given.items() if v is not None}}


def resolve(service: str, given: Mapping[str, Any], file: str | os.PathLike[str] | None = None,
            source: str | None = None) -> tuple[dict[str, Any], str]:
    """The credentials of `service` (what is given, then the file, then the environment) and where
    they came from, in words for the errors that ask the analyst to check them."""
    named = named_file(file)
    told = [source or "the arguments of connect()"] if any(v is not None for v in given.values()) or source else []
    filed: dict[str, Any] = {}
    if named:
        filed = read_file(named).get(service, {})
        if given.get("base_url") and filed.get("base_url") not in (None, given["base_url"]):
            filed = {}      # the file's secrets are for its own address: never sent to another one
        if filed and not source:
            told.append(f"the file {named}" + ("" if file else " (TOOLKIT_CREDENTIALS)"))
    explicit = {k: v for k, v in given.items() if v is not None}
    found = from_env(service, {**filed, **explicit})
    from_variables = [f for f in found if f not in explicit and f not in filed]
    if from_variables:
        told.append(f"the variables {', '.join(f'TOOLKIT_{service.upper()}_{f.upper()}' for f in from_variables)}")
    return found, " and ".join(told) or "the arguments of connect()"
