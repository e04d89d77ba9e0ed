"""What the client says when a request got no answer or was refused: which service, at which address,
where the address and credentials came from and what to check; and every secret the client knows
scrubbed from an error before it is raised.

`Failures` is the collaborator of `toolkit.http.client.Client` that words them, from what the client
was made with: its service, its address and where that came from.
"""
from __future__ import annotations

__all__ = ["Failures", "scrubbed"]

from typing import Any

from toolkit.catalog.spec import Action, Service
from toolkit.errors import ApiError, AuthError, ToolkitError, TransportError
from toolkit.http.redaction import Redactor
from toolkit.http.schemes import credential_names


class Failures:
    """An unanswered or refused request told to the analyst (the module docstring)."""

    def __init__(self, service: Service, base_url: str, source: str) -> None:
        self.service, self.base_url, self.source = service, base_url, source

    def unreached(self, entry: Action, error: TransportError) -> TransportError:
        """What an analyst needs when the service gave no answer: which service, at which address,
        where that address came from, and what to check (a sandbox's port changes at each start)."""
        how = ("did not answer in time" if "Timeout" in error.failure else
               "refused or dropped the connection" if error.failure else "could not be reached")
        told = TransportError(
            f"{entry.id}: no answer from {self.service.key} at {self.base_url}: it {how} "
            f"({error.tries} tries in {error.seconds:.1f} s). Check that the service runs at that address; "
            f"the address came from {self.source}. A sandbox serves on a new port each time it starts: "
            f"start it (tk.sandbox.start(), or `toolkit sandbox`) and connect with its credentials")
        told.failure, told.tries, told.seconds = error.failure, error.tries, error.seconds
        return told

    def refused(self, error: AuthError) -> AuthError:
        """The service's refusal, with which credentials to check and where they came from; its own
        message stays `error.message`, the advice is `error.hint` and part of the text."""
        names = ", ".join(credential_names(self.service))
        if error.status == 403:
            error.hint = (f"{self.service.key} at {self.base_url} knows these credentials but does not allow "
                          f"this: check the account's role or the token's scopes ({self.source} gave them)")
        else:
            error.hint = (f"{self.service.key} at {self.base_url} refused the credentials ({names}), "
                          f"which came from {self.source}: check them")
        rid = f" [request {error.request_id}]" if error.request_id else ""
        error.args = (f"{error.action}: {error.status} {error.message}{rid}. {error.hint}",)
        return error


def scrubbed(error: ToolkitError, redactor: Redactor) -> ToolkitError:
    error.args = tuple(redactor.scrub(a) for a in error.args)
    if hasattr(error, "message"):
        error.message = redactor.scrub(error.message)
    if isinstance(error, ApiError) and error.body is not None:
        error.body = _scrub_json(error.body, redactor)
    return error


def _scrub_json(value: Any, redactor: Redactor) -> Any:
    if isinstance(value, dict):
        return {k: _scrub_json(v, redactor) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub_json(v, redactor) for v in value]
    return redactor.scrub(value) if isinstance(value, str) else value
