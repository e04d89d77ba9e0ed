"""Routes derived from the catalog: (method, regex) per action and version, literal segments first.

`/submissions/background` is tried before `/submissions/{submission_id}` because routes are sorted
segment by segment with literals ahead of placeholders; paths are matched whole, so `/roles` and
`/roles/` stay distinct routes where the catalog has both. A path with a dot segment (`/a/../b`,
`/a/./b`, or `%2e%2e` spelled with escapes) is refused before routing (`dot_segment`): a service's
router answers it as a bad request, and resolving it would send a request meant for one endpoint to
another (`DELETE /boards/../assets/X` is not `DELETE /assets/X`).

    router = Router(SERVICE, ACTIONS); router.match("GET", "/v2/teams")
"""
from __future__ import annotations

__all__ = ["Route", "Router", "dot_segment", "version_prefix"]

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from toolkit.catalog.spec import Action, Service

_PLACEHOLDER = re.compile(r"{(\w+)}")


@dataclass(frozen=True)
class Route:
    method: str
    regex: re.Pattern[str]
    action: Action | None = None               # None for an extra route
    version: str = ""
    handler: Callable[..., Any] | None = None  # an extra route's own handler
    public: bool = False
    name: str = ""
    order: tuple[int, ...] = field(default=(), compare=False)


def _compile(path: str) -> tuple[re.Pattern[str], tuple[int, ...]]:
    """A whole-path regex with one named group per placeholder, and the route's sort key."""
    pattern, order, last = [], [], 0
    for match in _PLACEHOLDER.finditer(path):
        pattern.append(re.escape(path[last:match.start()]))
        pattern.append(f"(?P<{match.group(1)}>[^/]+)")
        last = match.end()
    pattern.append(re.escape(path[last:]))
    for segment in path.split("/"):
        order.append(1 if _PLACEHOLDER.search(segment) else 0)
    return re.compile("".join(pattern) + r"\Z"), tuple(order)


def dot_segment(path: str) -> str | None:
    """The first segment of `path` that is `.` or `..` once its escapes are decoded, or None."""
    for segment in path.split("/"):
        if segment in (".", "..") or ("%" in segment and unquote(segment) in (".", "..")):
            return segment
    return None


def version_prefix(service: Service, version: str) -> str:
    """The prefix of one version (`/api/v2`); an unversioned action takes the service's default."""
    prefix = service.version_prefix
    if "{version}" in prefix:
        prefix = prefix.replace("{version}", version or service.default_version)
    return prefix


class Router:
    """Matches a method and a path (after `/<service>`) to a route and its path params."""

    def __init__(self, service: Service, actions: Iterable[Action], extras: Iterable[Any] = ()) -> None:
        routes = []
        for action in actions:
            for version in action.versions:
                path = service.base_path + version_prefix(service, version) + action.path_for(version)
                regex, order = _compile(path)
                routes.append(Route(action.method.upper(), regex, action, version, order=order,
                                    name=action.id))
        for extra in extras:
            routes.append(Route(extra.method.upper(), re.compile(extra.pattern + r"\Z"), None, "",
                                extra.handler, extra.public, extra.name or extra.pattern,
                                order=(2,)))     # extras after the catalog's routes
        # literal segments before placeholders; a stable sort keeps the catalog's order otherwise
        self.routes = sorted(routes, key=lambda r: r.order)

    def match(self, method: str, path: str) -> tuple[Route | None, dict[str, str], list[str]]:
        """(route, path params, methods allowed on the path): route None with methods → 405, without → 404."""
        allowed: list[str] = []
        for route in self.routes:
            found = route.regex.match(path)
            if found is None:
                continue
            if route.method == method:
                return route, {k: unquote(v) for k, v in found.groupdict().items()}, []
            allowed.append(route.method)
        return None, {}, allowed
