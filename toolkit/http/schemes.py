"""Auth schemes by the names a service's catalog entry gives them (`Service.auth`: one name, or several
tried in order): for each, the credentials it needs, how a session is authorised with them, the
headers a preview shows and whom it logs in as. A new service with a scheme named here touches nothing
of this floor; a new scheme is one entry of `SCHEMES`.

    scheme, auth = authorise(Given(service, base_url, secrets, plain, redactor, timeout, post))
"""
from __future__ import annotations

__all__ = ["SCHEMES", "Given", "Scheme", "authorise", "chosen", "credential_names", "scheme_names"]

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import requests

from toolkit import catalog
from toolkit.catalog.masking import MASK
from toolkit.catalog.spec import Service
from toolkit.errors import ValidationError
from toolkit.http.auth import ApiKeyAuth, BasicAuth, BearerAuth, OAuthPasswordAuth, SessionAuth
from toolkit.http.redaction import Redactor, Secret


@dataclass(frozen=True)
class Given:
    """What a client hands a scheme: its service and address, the credentials it was given (secrets
    apart), its redactor and timeout, and how to send the token request of a login (`post`)."""
    service: Service
    base_url: str
    secrets: Mapping[str, Secret]
    plain: Mapping[str, Any]
    redactor: Redactor
    timeout: tuple[float, float] = (10.0, 60.0)
    post: Callable[..., requests.Response] | None = None

    def has(self, name: str) -> bool:
        return bool(self.secrets.get(name) or self.plain.get(name))

    def need(self, name: str) -> Any:
        """The credential, or the ValidationError that names it and its environment variable."""
        value = self.secrets.get(name) if name in self.secrets else self.plain.get(name)
        if not value:
            raise ValidationError(name, None, f"{self.service.key} needs the credential {name} "
                                  f"(or TOOLKIT_{self.service.key.upper()}_{name.upper()})")
        return value


@dataclass(frozen=True)
class Scheme:
    """One way of authorising: `needs` the credentials (given the service), `authorise` the auth a
    session sends with, `shown` the auth headers as a preview shows them (names real, secrets masked),
    `login` the credential naming whom the client logs in as, where the scheme says it."""
    needs: Callable[[Service], tuple[str, ...]]
    authorise: Callable[[Given], SessionAuth]
    shown: Callable[[Given], dict[str, str]]
    login: str | None = None


def _oauth_password(given: Given) -> OAuthPasswordAuth:
    token = catalog.action(given.service.token_action)
    return OAuthPasswordAuth(given.base_url + token.path, given.need("client_id"), given.need("client_secret"),
                             given.need("username"), given.need("password"), given.redactor, given.timeout,
                             action=token.id, post=given.post, shape=given.service.error_shape)


def _key_headers_shown(given: Given) -> dict[str, str]:
    return {header: MASK if name in given.service.secrets else str(given.plain.get(name))
            for name, header in given.service.key_headers.items()}


SCHEMES: dict[str, Scheme] = {
    "bearer": Scheme(lambda service: ("token",), lambda given: BearerAuth(given.need("token")),
                     lambda given: {"Authorization": "Bearer " + MASK}),
    "basic": Scheme(lambda service: ("username", "password"),
                    lambda given: BasicAuth(given.need("username"), given.need("password")),
                    lambda given: {"Authorization": "Basic " + MASK}, login="username"),
    "api_key": Scheme(lambda service: tuple(service.key_headers),
                      lambda given: ApiKeyAuth({header: given.need(name)
                                                for name, header in given.service.key_headers.items()}),
                      _key_headers_shown),
    "oauth_password": Scheme(lambda service: ("client_id", "client_secret", "username", "password"),
                             _oauth_password, lambda given: {"Authorization": "Bearer " + MASK}),
}


def scheme_names(service: Service) -> tuple[str, ...]:
    """The schemes the service's catalog entry names, in the order they are tried."""
    return (service.auth,) if isinstance(service.auth, str) else tuple(service.auth)


def chosen(given: Given) -> str:
    """The first scheme named whose credentials are all given; else the last, whose authorising then
    says which credential is missing."""
    names = scheme_names(given.service)
    return next((name for name in names if all(given.has(c) for c in SCHEMES[name].needs(given.service))),
                names[-1])


def authorise(given: Given) -> tuple[str, SessionAuth]:
    """The scheme chosen for what is given, and the auth a session sends with."""
    name = chosen(given)
    return name, SCHEMES[name].authorise(given)


def credential_names(service: Service) -> tuple[str, ...]:
    """The credentials the service's schemes read, in the catalog's order (not its settings: a mode,
    a system version)."""
    used = {c for name in scheme_names(service) for c in SCHEMES[name].needs(service)}
    return tuple(c for c in service.credentials if c in used)
