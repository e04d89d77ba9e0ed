"""What the doctor found (toolkit.checkup.doctor runs it): per service and resource, names, JSON types,
statuses and timings, never a record's value nor a secret, so that a report can be attached to a bug
report as it is (`report.to_json("doctor.json")`), shown as text, or as tables in Jupyter.
"""
from __future__ import annotations

import html
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from toolkit.errors import printable
from toolkit.pull.decoding import WIRE_KINDS, id_kind

__all__ = ["CallSeen", "Report", "ResourceCheck", "ServiceCheck", "declared_types", "json_type"]

PYTHON_TO_JSON = {str: "string", int: "integer", float: "number", bool: "boolean"}


# a cell of the HTML table: ruled and padded, so that neighbouring cells never read as one text
CELL = 'style="border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top"'


def json_type(value: Any) -> str:
    """The JSON type of a parsed value: string, integer, number, boolean, null, array or object."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def declared_types(dtype: str, service: str) -> set[str] | None:
    """The JSON types a column of `dtype` may arrive as, as toolkit.pull.decoding reads them (None: any);
    null stands for no value in every type."""
    if dtype == "list":             # null where a list is declared is drift (an empty list is not)
        return {"array"}
    kind = id_kind(service) if dtype == "id" else WIRE_KINDS.get(dtype)
    if kind is None:
        return None
    kinds = set(getattr(kind, "__args__", (kind,)))
    found = {PYTHON_TO_JSON[k] for k in kinds if k in PYTHON_TO_JSON} | {"null"}
    return found | {"integer"} if "number" in found else found       # 3 is a fine number


# --- what the report holds --------------------------------------------------------------------------

@dataclass
class CallSeen:
    """One request as the doctor saw it: method, the catalog's path (never the URL, which holds ids),
    status (or the error class when nothing came back) and milliseconds."""
    method: str
    path: str
    status: int | str
    ms: float


@dataclass
class ResourceCheck:
    """One resource's first page against its declaration; `skipped` says why it was not asked for."""
    resource: str
    action: str
    path: str = ""
    status: int | None = None
    error: str | None = None
    skipped: str | None = None
    ms: float | None = None
    rows: int = 0
    paging_declared: str = ""
    paging_seen: str = ""
    paging_differs: list[str] = field(default_factory=list)
    envelope: list[str] = field(default_factory=list)       # the top keys of an answer that is an object
    declared: list[str] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    types: dict[str, list[str]] = field(default_factory=dict)
    types_differ: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Answered as declared (or skipped, which the report says). Undeclared fields are shown but do
        not count: a pull keeps them in the `extra` column, and the catalog declares only what it types."""
        return self.skipped is not None or not (self.error or self.missing or self.types_differ
                                                or self.paging_differs)

    def line(self) -> str:
        if self.skipped is not None:
            return f"  skip {self.resource}: {self.skipped}"
        if self.error:
            return f"  FAIL {self.resource:<26} {self.error}  ({self.action}, {self.ms or 0:.0f} ms)"
        flag = "ok  " if self.ok else "DIFF"
        head = (f"  {flag} {self.resource:<26} {self.status} {self.paging_seen or '-':<12} {self.ms or 0:>6.0f} ms"
                f"  {len(self.seen)} of {len(self.declared)} declared fields seen, {self.rows} rows"
                + ("" if self.rows else " (no record to check)"))
        notes = []
        if self.missing:
            notes.append("missing: " + ", ".join(self.missing))
        if self.extra:
            notes.append("undeclared (kept in extra): " + ", ".join(f"{name} ({'/'.join(self.types.get(name, []))})"
                                               for name in self.extra))
        notes += [f"type of {name}: {why}" for name, why in self.types_differ.items()]
        notes += [f"paging: {why}" for why in self.paging_differs]
        # a field name is the service's text: a newline or an escape in it never forges a line
        return "\n".join(printable(line) for line in [head, *(f"         {note}" for note in notes)])


@dataclass
class ServiceCheck:
    """One service: auth, its resources, what the wire said of limits, clock and version."""
    service: str
    base_url: str
    auth: str = ""
    auth_ok: bool = False
    resources: list[ResourceCheck] = field(default_factory=list)
    declared_rate: str = ""
    rate_limit_headers: dict[str, str] = field(default_factory=dict)
    clock_skew_s: float | None = None
    version: dict[str, Any] = field(default_factory=dict)
    calls: list[CallSeen] = field(default_factory=list)
    on_this_machine: bool = False       # its base URL's host is loopback: the sandbox

    @property
    def ok(self) -> bool:
        return self.auth_ok and all(r.ok for r in self.resources)

    def skew_said(self) -> str:
        """The clock skew, and what it means: a service on this machine is the sandbox, whose clock is
        virtual (its seed's date, moved by `toolkit sandbox advance`), so its skew says nothing."""
        if self.clock_skew_s is None:
            return "no Date header"
        said = f"{self.clock_skew_s:+.0f} s (the service's Date minus this machine's time)"
        if self.on_this_machine:
            said += ("; a service on this machine, the sandbox: its clock is virtual (its seed's date, moved by "
                     "`toolkit sandbox advance`), so this skew says nothing of a real service's")
        return said

    def text(self) -> str:
        lines = [f"{self.service}  {self.base_url}  {'ok' if self.ok else 'DIFFERS'}",
                 f"  auth: {self.auth}"]
        if self.version:
            lines.append("  version: " + "; ".join(f"{k} {v}" for k, v in self.version.items()))
        headers = ", ".join(f"{k}: {v}" for k, v in self.rate_limit_headers.items()) or "none seen"
        lines.append(f"  rate limit: declared {self.declared_rate}; headers {headers}")
        lines.append(f"  clock skew: {self.skew_said()}")
        lines = [printable(line) for line in lines] + [r.line() for r in self.resources]
        total = sum(c.ms for c in self.calls)
        lines.append(f"  {len(self.calls)} requests ({', '.join(sorted({c.method for c in self.calls})) or 'none'}), "
                     f"{total:.0f} ms in all")
        return "\n".join(lines)


@dataclass
class Report:
    """What the doctor found: `.ok`, `.to_dict()`, `.to_json(path)`; shown as text, or a table in Jupyter."""
    services: list[ServiceCheck]
    started: str
    toolkit_version: str = ""

    @property
    def ok(self) -> bool:
        """Every service answered as the catalog declares."""
        return all(s.ok for s in self.services)

    def service(self, name: str) -> ServiceCheck:
        return next(s for s in self.services if s.service == name)

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data: names, types, statuses and timings; no value, no secret."""
        return {"toolkit_version": self.toolkit_version, "started": self.started, "ok": self.ok,
                "services": [{**asdict(s), "ok": s.ok,
                              "resources": [{**asdict(r), "ok": r.ok} for r in s.resources]}
                             for s in self.services]}

    def to_json(self, path: str | Path) -> Path:
        """Write the report as JSON, to attach to a bug report."""
        path = Path(path)
        path.write_text(json.dumps(self.to_dict(), indent=2) + "\n")
        return path

    def text(self) -> str:
        differ = [s.service for s in self.services if not s.ok]
        head = (f"toolkit doctor {self.toolkit_version} at {self.started}: {len(self.services)} services, "
                + (f"differs or failed: {', '.join(differ)}" if differ else "everything answered as declared"))
        return "\n\n".join([head, *(s.text() for s in self.services)])

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        e = html.escape
        parts = [f"<p><b>toolkit doctor</b> {e(self.started)}: "
                 f"{'everything answered as declared' if self.ok else 'something differs or failed'}</p>"]
        for s in self.services:
            version = "; ".join(f"{k} {v}" for k, v in s.version.items())
            parts.append(f"<h4>{e(s.service)} {'✓' if s.ok else '✗'}</h4><p>{e(s.base_url)}<br>auth: {e(s.auth)}"
                         f"<br>rate limit: declared {e(s.declared_rate)}; headers "
                         f"{e(', '.join(f'{k}: {v}' for k, v in s.rate_limit_headers.items()) or 'none seen')}"
                         f"<br>clock skew: {e(s.skew_said())}"
                         + (f"<br>version: {e(version)}" if version else "") + "</p>")
            rows = "".join(
                "<tr>" + "".join(f"<td {CELL}>{e(str(cell))}</td>" for cell in (
                    r.resource, "skip" if r.skipped is not None else r.error or r.status,
                    r.skipped or f"{r.paging_seen} (declared {r.paging_declared})",
                    "" if r.ms is None else f"{r.ms:.0f}", f"{len(r.seen)}/{len(r.declared)}",
                    ", ".join(r.missing), ", ".join(r.extra),
                    "; ".join([*(f"{k}: {v}" for k, v in r.types_differ.items()), *r.paging_differs])))
                + "</tr>" for r in s.resources)
            head = "".join(f"<th {CELL}>{h}</th>" for h in ("resource", "status", "paging", "ms", "fields seen",
                                                    "missing", "extra", "differs"))
            parts.append(f'<table style="border-collapse:collapse"><thead><tr>{head}</tr></thead>'
                         f"<tbody>{rows}</tbody></table>")
        return "\n".join(parts)
