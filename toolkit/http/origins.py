"""Where a request may go: origins compared as browsers and requests compare them, and the two Sessions
that follow redirects only as far as is safe (a client's, within the origin; a download's, anywhere
but with its private headers kept home).
"""
from __future__ import annotations

__all__ = ["HeadersStayHome", "OneOriginSession", "origin", "same_origin", "shown_origin"]

from collections.abc import Iterable
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests

from toolkit.errors import RedirectError


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of a URL, the port spelled out where the scheme implies it."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(scheme)


def same_origin(sent: str, target: str) -> bool:
    """Whether a redirect from `sent` to `target` stays with the party it was sent to: the same origin,
    or the same host moved from http to https on the default ports (requests' own rule for keeping
    Authorization, which only makes the request safer)."""
    before, after = origin(sent), origin(target)
    return before == after or (before[:2] == ("http", after[1]) and after[0] == "https"
                               and before[2] == 80 and after[2] == 443)


def shown_origin(url: str) -> str:
    scheme, host, port = origin(url)
    return f"{scheme}://{host}:{port}" if port else f"{scheme}://{host}"


class OneOriginSession(requests.Session):
    """A Session that follows redirects only within the origin a request was sent to.

    requests drops Authorization when a redirect leaves the host, but keeps every other header (the
    asset library's x-api-key and workspace id) and sends a 307/308's body again (a token request's
    password): so a redirect to another origin is refused with RedirectError before anything goes
    there, and nothing it answers reaches a load."""

    def get_redirect_target(self, resp: requests.Response) -> str | None:
        target = super().get_redirect_target(resp)
        if target is not None and not same_origin(resp.url, urljoin(resp.url, target)):
            where = shown_origin(urljoin(resp.url, target))
            raise RedirectError(f"{resp.request.method} {shown_origin(resp.url)}: the service answered "
                                f"{resp.status_code}, a redirect to another origin ({where}); toolkit sends "
                                f"no credentials there and keeps nothing from it. If the service has moved, "
                                f"connect with base_url set to its new address.", where)
        return target

    def resolve_redirects(self, resp: requests.Response, req: requests.PreparedRequest, *args: Any,
                          yield_requests: bool = False, **kwargs: Any) -> Any:
        try:
            yield from super().resolve_redirects(resp, req, *args, yield_requests=yield_requests, **kwargs)
        except RedirectError:
            if not yield_requests:   # requests only peeks at the next hop of one it does not follow
                raise


class HeadersStayHome(requests.Session):
    """A Session that follows redirects anywhere (a download's signed URL moves to a file host) but
    sends the headers named in `private` only to the origin they were first sent to: requests keeps
    every header but Authorization when a redirect leaves the host."""

    def __init__(self, private: Iterable[str] = ()) -> None:
        super().__init__()
        self.private = {name.lower() for name in private}

    def rebuild_auth(self, prepared_request: requests.PreparedRequest, response: requests.Response) -> None:
        super().rebuild_auth(prepared_request, response)
        # each hop copies the one before: a header dropped where the origin changed stays dropped
        if not same_origin(response.url, prepared_request.url):
            for name in [n for n in prepared_request.headers if n.lower() in self.private]:
                del prepared_request.headers[name]
