"""How a request is authorised, per scheme (toolkit.http.schemes names them for the catalog): a bearer
token, an API key with its workspace, HTTP Basic, and the OAuth password grant whose token is fetched
before a request takes its slot, refreshed, and fetched again after a 401 (`SessionAuth`, read by
`Client.send`).
"""
from __future__ import annotations

__all__ = ["ApiKeyAuth", "BasicAuth", "BearerAuth", "OAuthPasswordAuth", "SessionAuth"]

import base64
import json
import threading
import time
from collections.abc import Callable, Mapping
from urllib.parse import urljoin

import requests

from toolkit.errors import AuthError, error_for, service_message
from toolkit.http.origins import shown_origin
from toolkit.http.redaction import Redactor, Secret


class SessionAuth(requests.auth.AuthBase):
    """A scheme's auth as its client uses it: `ready` before a request takes its rate budget's slot
    (a login takes one too), `renewed` after a 401: True when sending again may be answered otherwise."""

    def ready(self) -> None:
        """Nothing to do before sending: the credentials are at hand."""

    def renewed(self) -> bool:
        return False


class BearerAuth(SessionAuth):
    def __init__(self, token: Secret) -> None:
        self.token = token

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = f"Bearer {self.token.reveal()}"
        return request


class ApiKeyAuth(SessionAuth):
    """Credentials sent as headers of their own (the catalog's `Service.key_headers`): header → value."""

    def __init__(self, headers: Mapping[str, Secret | str]) -> None:
        self.headers = dict(headers)

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        for name, value in self.headers.items():
            request.headers[name] = value.reveal() if isinstance(value, Secret) else value
        return request


class BasicAuth(SessionAuth):
    def __init__(self, username: str, password: Secret) -> None:
        self.username, self.password = username, password

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        pair = f"{self.username}:{self.password.reveal()}".encode()
        request.headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        return request


class OAuthPasswordAuth(SessionAuth):
    """The OAuth password grant with Basic client credentials; the token is refreshed before it expires
    and once more when the service answers 401. `post` sends the token request (its client's transport,
    so that it is retried and paced like any other); `shape`, how the service's error bodies read."""

    def __init__(self, token_url: str, client_id: str, client_secret: Secret, username: str,
                 password: Secret, redactor: Redactor, timeout: tuple[float, float], *, action: str,
                 post: Callable[..., requests.Response] | None = None, shape: str = "messages") -> None:
        self.action, self.service = action, action.split(".", 1)[0]      # the catalog's token action
        self.token_url, self.client_id, self.client_secret = token_url, client_id, client_secret
        self.username, self.password, self.redactor, self.timeout = username, password, redactor, timeout
        self._access: Secret | None = None
        self._refresh: Secret | None = None
        self._expires = 0.0
        self._lock = threading.Lock()
        self.post, self.shape = post, shape
        self.fetches = 0

    def invalidate(self) -> None:
        with self._lock:
            self._expires = 0.0

    def ready(self) -> None:
        self.token()

    def renewed(self) -> bool:
        self.invalidate()            # an expired or revoked token: fetch a new one
        return True

    def client_credentials(self) -> tuple[str, str]:
        """What the token request itself is authorised with (HTTP Basic), never a bearer token."""
        return self.client_id, self.client_secret.reveal()

    def token(self) -> Secret:
        with self._lock:
            if self._access is None or time.monotonic() >= self._expires - 30:
                self._fetch()
            assert self._access is not None
            return self._access

    def _fetch(self) -> None:
        form = {"grant_type": "password", "username": self.username, "password": self.password.reveal()}
        if self._refresh is not None:
            form = {"grant_type": "refresh_token", "refresh_token": self._refresh.reveal()}
        client = (self.client_id, self.client_secret.reveal())
        # a token request never follows a redirect, even within the origin: its body is the password
        if self.post is not None:
            answer = self.post(self.token_url, data=form, auth=client, allow_redirects=False)
        else:
            answer = requests.post(self.token_url, data=form, timeout=self.timeout, auth=client,
                                   allow_redirects=False)
        if answer.is_redirect:
            raise AuthError(self.service, self.action, answer.status_code,
                            f"the token request was answered with a redirect ({answer.status_code} to "
                            f"{shown_origin(urljoin(self.token_url, answer.headers.get('Location', '')))}); "
                            f"toolkit never sends a password after one: check base_url")
        if answer.status_code in (400, 401) and self._refresh is not None:
            self._refresh = None             # the refresh token expired too: start again from the password
            return self._fetch()
        if answer.status_code != 200:
            try:        # the service's own words ("Bad credentials"), not its JSON
                body = answer.json()
            except ValueError:
                body = answer.text[:300]
            body = json.loads(self.redactor.scrub(json.dumps(body)))
            if answer.status_code == 429 or answer.status_code >= 500:   # still failing after the retries
                raise error_for(self.service, self.action, answer.status_code, self.shape, body)
            text = service_message(self.shape, body, "token request refused")
            raise AuthError(self.service, self.action, answer.status_code, text, body=body)
        try:
            body = answer.json()
        except ValueError:
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("access_token"), str) or not body["access_token"]:
            raise AuthError(self.service, self.action, answer.status_code,
                            "the token answer holds no access_token: check base_url points at the service")
        self._access = Secret(body["access_token"])
        self.redactor.add(self._access)
        if body.get("refresh_token"):
            self._refresh = Secret(body["refresh_token"])
            self.redactor.add(self._refresh)
        self._expires = time.monotonic() + float(body.get("expires_in") or 3600)
        self.fetches += 1

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        # the token was made fresh before the request took its slot (`ready`, Client.send)
        access = self._access if self._access is not None else self.token()
        request.headers["Authorization"] = f"Bearer {access.reveal()}"
        return request
