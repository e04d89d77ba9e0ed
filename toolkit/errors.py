"""The errors toolkit raises, mapped from each service's answer in one place.

    ToolkitError
    ├── ValidationError        a param breaks a rule; nothing was sent (a ValueError too)
    │   ├── UnknownNameError   no such service, action or resource: the closest names (a KeyError too)
    │   └── CredentialsError   a credentials file that cannot be taken (not a file, too big, not JSON ...)
    ├── UnknownMethodError     a client or connection has no such method: the closest (an AttributeError too)
    ├── ModeError              the action exists only in the other translation mode; nothing was sent
    ├── VersionError           the action needs a newer system version; nothing was sent
    ├── TransportError         the service could not be reached (connection, timeout)
    ├── RedirectError          the service redirected to another origin: nothing sent there, nothing kept
    ├── AnswerError            a 2xx answer that is not the JSON its action declares (a proxy's HTML page,
    │                          an empty or cut body), still after the retries
    ├── PagingError            a walk that repeats a cursor, page or offset, or runs past its ceiling
    ├── FilterSyntaxError      a filter off the notification filter language (a ValueError too)
    ├── LimitError             an answer past one of the client's limits (bytes, time, a wait asked, nesting):
    │                          not retried; names the limit and how to raise it
    ├── ContractError          contract="freeze": an answer differs from the declared shapes; nothing written
    ├── WorkspaceError         no such load or resource in the workspace; a load written wrongly
    │   ├── UnknownTableError      a query names a table the workspace lacks (DuckDB's CatalogException too)
    │   ├── SnapshotNotFoundError  no snapshot at the path given (a FileNotFoundError too)
    │   ├── SnapshotExistsError    an export onto a path that exists, without overwrite (a FileExistsError too)
    │   ├── QueryRefusedError      an assistant's query that could write or read beyond the views (toolkit mcp)
    │   ├── WorkspaceArgumentError arguments a workspace cannot take together; nothing opened (a ValueError too)
    │   ├── LakeUnreachableError   a team workspace's catalog (PostgreSQL) cannot be reached: try again later
    │   ├── WorkspaceDamagedError  the file of a workspace or snapshot is corrupt (DuckDB's checksums say so)
    │   └── WorkspaceInUseError    the DuckDB file is open for writing in another process
    │       ├── WorkspaceBusyError      ... and stayed held longer than this one would wait (exit 75)
    │       └── WorkspaceOpenHereError  ... or open in this process the other way (read-only, read-write)
    └── ApiError               the service answered with an error status
        ├── AuthError          401, 403
        ├── NotFoundError      404
        ├── RateLimitError     429
        └── ServerError        5xx

`ApiError` carries the service, the action, the status, the service's own message and the request id.
No error message ever holds a secret: `toolkit.http.session` scrubs them before an error is built.

    UserWarning
    └── ToolkitWarning             base of toolkit's own warnings: one category to filter or to fail on
        ├── DriftWarning           a load kept answers that differ from the declared shapes (`ws.drift()`)
        └── SnapshotStorageWarning a snapshot holds types that only newer DuckDBs open (the manifest says which)

    KeyboardInterrupt
    └── Interrupted            Ctrl-C (SIGINT, SIGTERM in the command) stopped a pull: what it kept, in one line
        └── RefreshInterrupted ... stopped a refresh: the resources refreshed, what each pull stopped kept

    ImportError
    └── EmulatorImportError    a registered emulator of the sandbox does not import: it would lack a service

Every exception class of the package is defined here (tests/system/test_errors_home.py finds any other), but
the sandbox's own wire signals (`sandbox.exchange.Reject`, `sandbox.framing.Malformed`: an answer to
send, not an error to show). A module hands on what its callers catch under its own name, so that they
name the module they call (`toolkit.storage.store.UnknownTableError`, `toolkit.http.filters.FilterSyntaxError`).
"""
from __future__ import annotations

__all__ = ["AnswerError", "ApiError", "AuthError", "ContractError", "CredentialsError", "DriftWarning",
           "EmulatorImportError", "FilterSyntaxError", "Interrupted", "LakeUnreachableError", "LimitError",
           "ModeError", "NotFoundError", "PagingError", "QueryRefusedError", "RateLimitError", "RedirectError",
           "RefreshInterrupted", "ServerError", "SnapshotExistsError", "SnapshotNotFoundError",
           "SnapshotStorageWarning", "ToolkitError", "ToolkitWarning", "TransportError", "UnknownMethodError",
           "UnknownNameError", "UnknownTableError",  # noqa: F822 (made on first use, by __getattr__ below)
           "ValidationError", "VersionError", "WorkspaceArgumentError", "WorkspaceBusyError",
           "WorkspaceDamagedError", "WorkspaceError",
           "WorkspaceInUseError", "WorkspaceOpenHereError", "did_you_mean", "error_for", "printable",
           "service_message", "shortened"]

import os
import threading
import traceback
from typing import Any

from toolkit.wording import bounded_repr, did_you_mean, printable, service_message, shortened


class ToolkitError(Exception):
    """Base of every error toolkit raises. Its text never holds a control character: what a service
    sent (a message, a field name, a cursor) is shown escaped (`printable`)."""

    def __str__(self) -> str:
        return printable(super().__str__(), keep_lines=True)

    def _render_traceback_(self) -> list[str]:
        """What IPython and Jupyter show instead of the whole traceback: the line of the analyst's own
        code that called, and the message, which says what happened and what to do: the frames
        inside toolkit (a fetch's threads, concurrent.futures) run to a hundred lines and bury both.
        TOOLKIT_TRACEBACKS=full shows every frame (IPython's own display, when this raises)."""
        if os.environ.get("TOOLKIT_TRACEBACKS", "").lower() == "full":
            raise NotImplementedError("TOOLKIT_TRACEBACKS=full: IPython shows the whole traceback")
        # the analyst's line: the outermost frame that is neither toolkit's own nor an installed
        # library's (IPython runs the cell, a fetch's threads raise inside concurrent.futures)
        frames = traceback.extract_tb(self.__traceback__) if self.__traceback__ else []
        libraries = {os.path.dirname(os.__file__), os.path.dirname(__file__) + os.sep}
        mine = [f for f in frames if not any(f.filename.startswith(place) for place in libraries)
                and "site-packages" not in f.filename] or frames[:1]
        shown = [f"{type(self).__name__}: {self}"]
        if mine:
            shown.insert(0, f"line {mine[0].lineno}: {(mine[0].line or '').strip()}")
        shown.append("(TOOLKIT_TRACEBACKS=full shows every frame)")
        return shown


class ValidationError(ToolkitError, ValueError):
    """A param breaks a rule of the documents; the request was not sent."""

    def __init__(self, param: str, value: Any, rule: str, action: str = "") -> None:
        self.param, self.value, self.rule, self.action = param, value, rule, action
        self.problems: list[ValidationError] = [self]      # every rule the call broke, this one first
        where = f" ({action})" if action else ""
        super().__init__(f"{param}={bounded_repr(value)}: {rule}{where}")


class UnknownNameError(ValidationError, KeyError):
    """A service, action or resource the catalog does not hold: says the closest names it does hold
    ("did you mean `targets`?"). A KeyError too, as a lookup that finds nothing."""

    def __init__(self, what: str, name: Any, known: list[str] | tuple[str, ...], where: str = "",
                 lister: str = "") -> None:
        hint = did_you_mean(name, known)
        listed = (f"{len(known)} of them: {lister} lists them" if lister and len(known) > 20 else
                  f"there are {', '.join(map(str, known))}" if known else "there are none")
        message = f"no {what} {name!r}{where}{hint} ({listed})"
        self.param, self.value, self.rule, self.action, self.known = what, name, message, "", list(known)
        Exception.__init__(self, message)

    def __str__(self) -> str:   # KeyError's own would quote the whole message
        return printable(self.args[0], keep_lines=True)


class CredentialsError(ValidationError):
    """A credentials file (TOOLKIT_CREDENTIALS, --credentials) that cannot be taken: not a regular file,
    too big, not UTF-8 JSON, nested too deep, or a value of the wrong type. Nothing of its content is
    ever quoted: it holds secrets."""

    def __init__(self, path: Any, problem: str) -> None:
        self.param, self.value, self.rule, self.action, self.path = "credentials", None, problem, "", path
        Exception.__init__(self, f"the credentials file {path} {problem}")


class UnknownMethodError(ToolkitError, AttributeError):
    """A method a client or connection lacks (`tm.get_submision(...)`): the closest names it has, as
    `tm.call("translation.get_submision")` says them. An AttributeError too, so `hasattr` and
    `getattr(obj, name, default)` work as ever."""

    def __init__(self, owner: str, name: str, known: list[str]) -> None:
        self.known = list(known)
        AttributeError.__init__(self, f"{owner} has no method or attribute {name!r}{did_you_mean(name, known)} "
                                      f"(dir() or Tab lists them; toolkit.actions() the catalog's actions)")
        self.name = name


class ModeError(ToolkitError):
    """The action is offered only in the other mode (client or hosted) of the translation service."""


class VersionError(ToolkitError):
    """The action or param needs a newer system version than the one configured."""

    def __init__(self, action: str, needed: str, configured: str) -> None:
        self.action, self.needed, self.configured = action, needed, configured
        super().__init__(f"{action} needs system version {needed} or newer; configured {configured}")


class TransportError(ToolkitError):
    """The service could not be reached: connection refused or dropped, or a timeout. `failure` names
    requests' exception (ConnectionError, ReadTimeout, ...) and `tries` how many were made."""

    failure: str = ""
    tries: int = 0
    seconds: float = 0.0


class RedirectError(ToolkitError):
    """The service answered a redirect to another origin (scheme, host, port). Requests would follow it
    with every header but Authorization (an API key, a workspace id) and a 307's body (a token
    request's password), so toolkit follows none: nothing is sent there and nothing it answers is kept.
    `origin` is where it pointed."""

    def __init__(self, message: str, origin: str = "") -> None:
        self.origin = origin
        super().__init__(message)


class PagingError(ToolkitError):
    """A walk that cannot be trusted to end: the service gave a cursor, page or offset seen before in
    the same walk, a full page of rows already seen, or more pages than the walk's ceiling."""


class LimitError(ToolkitError):
    """An answer past one of the client's limits (toolkit.http.limits): larger than `max_answer_bytes`
    once decoded, not whole within `deadline`, a Retry-After longer than `max_retry_after`, JSON nested
    deeper than `max_depth`. Nothing was kept from it and it is not asked again. `limit` names the
    limit, `value` is its setting."""

    def __init__(self, message: str, limit: str = "", value: float = 0) -> None:
        self.limit, self.value = limit, value
        super().__init__(message)


class AnswerError(ToolkitError):
    """A 2xx answer whose body is not the JSON its action declares: an HTML error page a proxy served
    with 200, an empty body, a body cut short. Retried like a 5xx; this is what persisted."""

    def __init__(self, action: str, status: int, content_type: str | None, head: bytes, problem: str,
                 tries: int = 1) -> None:
        self.action, self.status, self.content_type, self.head = action, status, content_type, head
        self.problem, self.tries = problem, tries
        after = f" after {tries} tries" if tries > 1 else ""
        shown = head[:60].decode("utf-8", "replace")
        shown = "".join(c if c.isprintable() else " " for c in shown)   # an HTML page's newlines
        super().__init__(f"{action}: {status} answer ({content_type or 'no content type'}) is {problem}, "
                         f"not JSON{after}: {shown!r}. Nothing was kept from it; try again later, or ask "
                         f"who runs the service (a proxy or gateway page?)")


class ContractError(ToolkitError):
    """`contract="freeze"`: an answer differs from the Resource's declared shapes, so the load was
    refused and nothing written. Names the resource, the field, the kind of drift and the first
    offending record (secrets masked)."""

    def __init__(self, resource: str, field: str, kind: str, record: str, detail: str = "") -> None:
        self.resource, self.field, self.kind, self.record = resource, field, kind, record
        about = f" ({detail})" if detail else ""
        super().__init__(f"{resource}: {field}: {kind}{about}; the first offending record: {record}. "
                         f"contract='freeze' refused the load and nothing was written; "
                         f"contract='evolve' keeps such answers and reports them (ws.drift())")


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a pull (SIGINT or SIGTERM in the `toolkit` command): one line says what was kept
    ("120 of 300 parents of asset_library.versions checkpointed") and what to run to go on. A
    KeyboardInterrupt still, never an Exception: whatever stops on Ctrl-C stops, and no `except
    Exception` swallows it. `kept` and `total` are the parents checkpointed and planned (0 and None
    for a paged walk, which starts again); `what` the kept part of the line, for the command's own."""

    def __init__(self, resource: str, kept: int = 0, total: int | None = None) -> None:
        self.resource, self.kept, self.total = resource, kept, total
        self.what = (f"{kept:,} of {total:,} parents of {resource} checkpointed" if total is not None else
                     f"nothing of {resource} kept (a paged walk is not checkpointed)")
        again = (f"run the same pull again to go on (it asks only for the other {total - kept:,})"
                 if total is not None else "run the same pull again to start it over")
        super().__init__(f"interrupted: {self.what}; {again}")

    def __str__(self) -> str:
        return printable(self.args[0])

    def _render_traceback_(self) -> list[str]:
        """One line in a notebook, not the 64 of toolkit's, concurrent.futures' and threading's frames."""
        return [str(self)]


class RefreshInterrupted(Interrupted):
    """Ctrl-C stopped a refresh (SIGINT or SIGTERM in the `toolkit` command): every service's worker
    stopped at its next safe point, and one line says so ("3 of 7 resources refreshed;
    translation.documents: 120 of 300 parents checkpointed"). `kept` and `total` count resources here;
    `pulls` are the pulls it stopped, each with what it kept."""

    def __init__(self, kept: int, total: int, pulls: list[Interrupted]) -> None:
        self.resource, self.kept, self.total, self.pulls = "", kept, total, list(pulls)
        stopped = [f"{pull.resource}: {pull.kept:,} of {pull.total:,} parents checkpointed" if pull.total is not None
                   else f"{pull.resource}: nothing kept (a paged walk is not checkpointed)" for pull in self.pulls]
        self.what = "; ".join([f"{kept:,} of {total:,} resources refreshed", *stopped])
        KeyboardInterrupt.__init__(self, f"interrupted: {self.what}; run the same refresh again to go on "
                                         f"(it asks only for what is left)")


class ToolkitWarning(UserWarning):
    """Base of toolkit's own warnings: `warnings.simplefilter("error", ToolkitWarning)` makes them fail."""


class DriftWarning(ToolkitWarning):
    """A load kept answers that differ from the Resource's declared shapes: `ws.drift()` lists how."""


class SnapshotStorageWarning(ToolkitWarning):
    """A snapshot holds a type only the DuckDB its manifest names opens; its Parquet export opens anywhere."""


class WorkspaceError(ToolkitError):
    """The workspace has no such load or resource, or was asked for something its state does not allow."""


# UnknownTableError is DuckDB's CatalogException too, so that code that caught DuckDB's error goes on
# working; errors.py is imported by the HTTP client, which must stand without DuckDB, so the class is
# made on first use (`from toolkit.errors import UnknownTableError` makes it).
_LAZY_LOCK = threading.Lock()


def _unknown_table_error() -> type[WorkspaceError]:
    import duckdb

    class UnknownTableError(WorkspaceError, duckdb.CatalogException):
        """A query names a table the workspace does not hold; says what it holds."""

    UnknownTableError.__module__, UnknownTableError.__qualname__ = __name__, "UnknownTableError"
    return UnknownTableError


def __getattr__(name: str) -> Any:
    if name == "UnknownTableError":
        with _LAZY_LOCK:
            if "UnknownTableError" not in globals():
                globals()["UnknownTableError"] = _unknown_table_error()
        return globals()["UnknownTableError"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class SnapshotNotFoundError(WorkspaceError, FileNotFoundError):
    """No snapshot at the path given: a ToolkitError (three lines in a notebook) and a FileNotFoundError."""


class SnapshotExistsError(WorkspaceError, FileExistsError):
    """An export onto a path that exists, without `overwrite=True`: a ToolkitError and a FileExistsError."""


class QueryRefusedError(WorkspaceError):
    """A query an assistant sent (`toolkit mcp`) that could write or read beyond the workspace's views:
    refused before it ran, nothing changed."""


class WorkspaceArgumentError(WorkspaceError, ValueError):
    """A workspace was handed arguments it cannot take together; nothing opened, the message says what to give."""


class LakeUnreachableError(WorkspaceError):
    """A team workspace's catalog database cannot be reached (PostgreSQL down, restarting, or the
    connection dropped), still after reconnecting for a while. Nothing half-written is visible: a load
    that was committing did not commit. The `toolkit` command exits with 75 (EX_TEMPFAIL), as for a busy
    file: a cron job may simply run again."""

    exit_code = 75


class WorkspaceDamagedError(WorkspaceError):
    """The DuckDB file of a workspace or snapshot is damaged: DuckDB found a block whose checksum does not
    match, or a structure it cannot read back. Nothing was changed; what it held comes back from a copy
    (an exported snapshot, a backup) or a new pull."""

    def __init__(self, path: Any, detail: str) -> None:
        self.path, self.detail = path, detail
        super().__init__(f"{path} is damaged ({detail}); nothing was changed. Open a copy (an exported "
                         "snapshot, a backup) instead, or pull again into a new workspace file")


class WorkspaceInUseError(WorkspaceError):
    """The DuckDB file is locked by another process (DuckDB allows one writer, or many readers)."""

    def __init__(self, path: Any, pid: int | None = None, read_only: bool = False) -> None:
        self.path, self.pid = path, pid
        holder = f"process {pid}" if pid else "another process"
        if read_only:
            text = (f"{path} is open for writing in {holder}: close it there (ws.close(), or restart that "
                    "kernel), or read an exported snapshot of it instead")
        else:
            text = (f"{path} is in use by {holder} (DuckDB lets one process write a file, or several only "
                    "read it): close it there (ws.close(), or restart that kernel), or open it here with "
                    "toolkit.Workspace(path, read_only=True) while nobody writes to it")
        super().__init__(text)


class WorkspaceBusyError(WorkspaceInUseError):
    """The workspace stayed held by another process for longer than this one would wait (`wait=`,
    TOOLKIT_WORKSPACE_WAIT; 60 s by default). A file is held only while a process reads or commits,
    so this is a long commit or a process that keeps it (a `duckdb.connect` of its own): try again
    later. The `toolkit` command exits with 75 (EX_TEMPFAIL: a cron job may simply run again)."""

    exit_code = 75

    def __init__(self, path: Any, waited: float, holder: str = "another process", pid: int | None = None) -> None:
        self.path, self.waited, self.holder, self.pid = path, waited, holder, pid
        WorkspaceError.__init__(self, (
            f"{path} is still held by {holder} after waiting {waited:.0f} s; try again later, or wait "
            f"longer: toolkit.Workspace(path, wait=300), or TOOLKIT_WORKSPACE_WAIT=300"))


class WorkspaceOpenHereError(WorkspaceInUseError):
    """The DuckDB file is open in this process already, the other way: DuckDB opens a file one way per
    process (read-write, or read-only), however many connections share it."""

    def __init__(self, path: Any, read_only: bool = False) -> None:
        self.path, self.pid, self.read_only = path, os.getpid(), read_only
        if read_only:
            text = (f"{path} is open read-write in this process (a toolkit.Workspace, or duckdb.connect): "
                    "read through that workspace, which sees every load, or close it (ws.close()) before "
                    "opening the file with read_only=True")
        else:
            text = (f"{path} is open read-only in this process (a toolkit.Workspace with read_only=True, "
                    "a snapshot, or duckdb.connect): close it there (.close()) before opening the file "
                    "to write")
        WorkspaceError.__init__(self, text)


class FilterSyntaxError(ToolkitError, ValueError):
    """The expression does not follow the filter language; `position` is where reading stopped."""

    def __init__(self, message: str, position: int) -> None:
        self.position = position
        super().__init__(f"{message} at position {position}")


class EmulatorImportError(ImportError):
    """A registered emulator's module is missing or fails to import: the sandbox would lack a service."""


class ApiError(ToolkitError):
    """The service answered with an error status. `hint` says what to check, where toolkit knows
    (the credentials of an AuthError and where they came from); `message` is the service's own."""

    hint: str = ""

    def __init__(self, service: str, action: str, status: int, message: str,
                 request_id: str | None = None, body: Any = None) -> None:
        self.service, self.action, self.status = service, action, status
        self.message, self.request_id, self.body = message, request_id, body
        rid = f" [request {request_id}]" if request_id else ""
        super().__init__(f"{action}: {status} {message}{rid}")


class AuthError(ApiError):
    """401 or 403: missing, wrong or expired credentials, or a scope the token lacks."""


class NotFoundError(ApiError):
    """404: the record or route does not exist."""


class RateLimitError(ApiError):
    """429: too many requests, still after the retries."""


class ServerError(ApiError):
    """5xx: the service failed, still after the retries."""




def error_for(service: str, action: str, status: int, shape: str, body: Any,
              reason: str = "", request_id: str | None = None) -> ApiError:
    """The one mapping from (service, status, body) to an error class."""
    cls: type[ApiError] = ApiError
    if status in (401, 403):
        cls = AuthError
    elif status == 404:
        cls = NotFoundError
    elif status == 429:
        cls = RateLimitError
    elif status >= 500:
        cls = ServerError
    return cls(service, action, status, service_message(shape, body, reason or "error"), request_id, body)
