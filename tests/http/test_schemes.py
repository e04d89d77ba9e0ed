"""Auth schemes and error shapes are registries keyed from the catalog; a client sends through the
Transport it is handed, which sees every request its client makes, the login's too."""
from __future__ import annotations

import base64

import pytest
from stubbed_services import BASE, CREDENTIALS, Answering, reply

import toolkit
from toolkit import catalog
from toolkit.catalog.spec import Action, Service
from toolkit.errors import ApiError, AuthError, ValidationError
from toolkit.http import schemes
from toolkit.http.client import Client
from toolkit.http.origins import OneOriginSession
from toolkit.http.session import RateBudget, Transport
from toolkit.http.wire import Prepared
from toolkit.wording import ERROR_SHAPES


@pytest.mark.parametrize("service", sorted(catalog.SERVICES))
def test_every_service_names_schemes_and_an_error_shape_the_registries_hold(service):
    entry = catalog.SERVICES[service]
    assert schemes.scheme_names(entry) and set(schemes.scheme_names(entry)) <= set(schemes.SCHEMES)
    assert entry.error_shape in ERROR_SHAPES
    assert set(schemes.credential_names(entry)) <= set(entry.credentials)


class Seeing(Transport):
    """A transport that notes what it is asked to send, and with which budget."""

    def __init__(self, **options):
        super().__init__(**options)
        self.seen: list[tuple[str, str, object]] = []

    def send(self, method, url, **kwargs):
        self.seen.append((method, url, kwargs.get("budget")))
        return super().send(method, url, **kwargs)


def session_answering(answer) -> OneOriginSession:
    session = OneOriginSession()
    session.mount("http://", Answering(answer))
    return session


TOY = Service(key="toy", title="A fifth service", auth="bearer", credentials=("token",), secrets=("token",),
              base_path="", error_shape="messages")
TOY_GET = Action(id="toy.get_thing", group="things", method="GET", path="/things/1", doc="One thing.")


def test_a_new_service_with_a_known_scheme_and_shape_needs_nothing_of_the_http_floor(monkeypatch):
    monkeypatch.setattr(catalog, "SERVICES", {**catalog.SERVICES, "toy": TOY})
    answers = iter([reply(json_body={"id": 1}), reply(400, json_body={"messages": ["no such thing"]})])
    sent = []

    def answer(request):
        sent.append(request)
        return next(answers)
    client = Client("toy", base_url="http://127.0.0.1:9", token="toy-token-123456",
                    transport=Transport(session=session_answering(answer)))
    assert client.scheme == "bearer" and client.auth_headers() == {"Authorization": "Bearer ***"}
    assert client.send(Prepared(TOY_GET, "GET", "http://127.0.0.1:9/things/1")).json() == {"id": 1}
    assert sent[0].headers["Authorization"] == "Bearer toy-token-123456"
    with pytest.raises(ApiError, match="no such thing"):
        client.send(Prepared(TOY_GET, "GET", "http://127.0.0.1:9/things/1"))
    with pytest.raises(ValidationError, match="toy needs the credential token"):
        Client("toy", base_url="http://127.0.0.1:9")


def test_the_first_scheme_named_whose_credentials_are_given_is_used():
    base = BASE["audience_platform"]
    token = toolkit.connect("audience_platform", base_url=base, token="ap-token-55aa")
    basic = toolkit.connect("audience_platform", base_url=base, username="integration", password="ap-pass-77aa")
    assert (token.scheme, token.login) == ("bearer", None)
    assert (basic.scheme, basic.login) == ("basic", "integration")
    with pytest.raises(ValidationError, match="needs the credential username"):
        toolkit.connect("audience_platform", base_url=base)


def test_a_transport_handed_in_sends_every_request_the_login_too_with_the_clients_budget():
    token_url = BASE["translation"] + catalog.action(catalog.SERVICES["translation"].token_action).path

    def answer(request):
        if request.url == token_url:
            assert request.headers["Authorization"] == "Basic " + base64.b64encode(b"tm-client:tm-secret-1f4e8c").decode()
            return reply(json_body={"access_token": "access-9", "expires_in": 3600})
        assert request.headers["Authorization"] == "Bearer access-9"
        return reply(json_body=[])
    transport = Seeing(session=session_answering(answer))
    client = toolkit.connect("translation", base_url=BASE["translation"], transport=transport,
                             **CREDENTIALS["translation"])
    assert client.transport is transport and transport.budget is None
    client.call("translation.list_projects")
    assert [(m, u) for m, u, _ in transport.seen] == [("POST", token_url), ("GET", BASE["translation"] + "/rest/v0/projects")]
    assert all(budget is client.budget for *_, budget in transport.seen)     # the service's own, no other given


def test_a_transport_with_a_budget_of_its_own_paces_with_it():
    own = RateBudget(None, 1)
    transport = Seeing(session=session_answering(lambda request: reply(json_body={"id": "a1"})), budget=own)
    assets = toolkit.connect("asset_library", base_url=BASE["asset_library"], transport=transport,
                             **CREDENTIALS["asset_library"])
    assets.call("asset_library.get_asset", asset_id="a1")
    assert transport.budget is own and assets.budget is not own


def test_a_transport_is_not_given_with_the_options_it_holds():
    with pytest.raises(ValidationError, match="give it to the Transport"):
        toolkit.connect("asset_library", base_url=BASE["asset_library"], transport=Transport(), deadline=5,
                        **CREDENTIALS["asset_library"])


def test_a_401_fetches_a_new_token_once_then_says_so():
    tokens = iter(["first-1", "second-2"])

    def answer(request):
        if request.url.endswith("/oauth/token"):
            return reply(json_body={"access_token": next(tokens), "expires_in": 3600})
        return reply(401, json_body={"messages": ["token revoked"]})
    transport = Seeing(session=session_answering(answer))
    client = toolkit.connect("translation", base_url=BASE["translation"], transport=transport,
                             **CREDENTIALS["translation"])
    with pytest.raises(AuthError, match="token revoked"):
        client.call("translation.list_projects")
    assert [m for m, *_ in transport.seen] == ["POST", "GET", "POST", "GET"]
