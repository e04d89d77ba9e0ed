"""Status → error class for each service's error body, through Client.call against answers the test
gives: each client here is handed a Session that answers from the test (`answered`), and a request other
than the one the test expects fails it."""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from stubbed_services import BASE, answered, reply

import toolkit
from toolkit import catalog, errors
from toolkit.errors import (
    ApiError,
    AuthError,
    ModeError,
    NotFoundError,
    PagingError,
    RateLimitError,
    ServerError,
    ToolkitError,
    TransportError,
    ValidationError,
    VersionError,
    error_for,
    service_message,
)
from toolkit.http.session import RetryPolicy

STATUS_CLASSES = [(400, ApiError), (401, AuthError), (402, ApiError), (403, AuthError), (404, NotFoundError),
                  (409, ApiError), (422, ApiError), (429, RateLimitError), (500, ServerError),
                  (502, ServerError), (503, ServerError), (504, ServerError)]


def test_the_tree():
    for cls in (ValidationError, ModeError, VersionError, TransportError, PagingError, ApiError):
        assert issubclass(cls, ToolkitError)
    for cls in (AuthError, NotFoundError, RateLimitError, ServerError):
        assert issubclass(cls, ApiError)
    assert not issubclass(ValidationError, ApiError) and not issubclass(TransportError, ApiError)
    for name in ("ToolkitError", "ValidationError", "ApiError", "AuthError", "NotFoundError", "RateLimitError",
                 "ServerError", "ModeError", "VersionError", "TransportError", "PagingError"):
        assert name in errors.__doc__


@pytest.mark.parametrize(("status", "cls"), STATUS_CLASSES)
def test_error_for_maps_status_to_class(status, cls):
    error = error_for("asset_library", "asset_library.get_asset", status, "message", {"message": "nope"})
    assert type(error) is cls
    assert (error.service, error.action, error.status, error.message) == (
        "asset_library", "asset_library.get_asset", status, "nope")


# --- each service's error body ---------------------------------------------------------------------------

def answering(service: str, method: str, path: str, answer, **extra) -> toolkit.Client:
    """A client of `service` whose requests must be `method path` (below its base URL), each answered
    by `answer()`; a translation client's token requests are answered with a token."""
    where = urlsplit(BASE[service]).path + path

    def checked(request):
        assert (request.method, urlsplit(request.url).path) == (method, where)
        return answer()
    return answered(service, checked, **extra)


def refusing(service: str, method: str, path: str, status: int, body, request_id: str | None = "req-7f3a"):
    """A client whose every answer to `method path` is `status` with the service's error `body`."""
    headers = {"x-request-id": request_id} if request_id else {}
    return answering(service, method, path, lambda: reply(status, headers=headers, json_body=body))


@pytest.mark.parametrize(("status", "cls"), STATUS_CLASSES)
def test_media_review_errors(status, cls):
    body = {"code": status, "message": "Request failed",
            "errors": [{"code": status, "detail": "page_size must be at most 100", "status": status,
                        "title": "Invalid"}]}
    media = refusing("media_review", "GET", "/teams", status, body)
    with pytest.raises(cls) as info:
        media.call("media_review.list_teams")
    error = info.value
    assert type(error) is cls
    assert (error.service, error.action, error.status) == ("media_review", "media_review.list_teams", status)
    assert error.message == "Request failed; page_size must be at most 100"
    assert error.request_id == "req-7f3a"
    assert error.body == body
    assert str(error) == f"media_review.list_teams: {status} Request failed; page_size must be at most 100 " \
                         "[request req-7f3a]" + (f". {error.hint}" if cls is AuthError else "")


@pytest.mark.parametrize(("status", "cls"), STATUS_CLASSES)
def test_asset_library_errors(status, cls):
    assets = refusing("asset_library", "GET", "/assets/a1", status, {"message": "Asset not available"})
    with pytest.raises(cls) as info:
        assets.call("asset_library.get_asset", asset_id="a1")
    error = info.value
    assert (error.service, error.action, error.status) == ("asset_library", "asset_library.get_asset", status)
    assert error.message == "Asset not available" and error.request_id == "req-7f3a"


@pytest.mark.parametrize(("status", "cls"), STATUS_CLASSES)
def test_audience_platform_errors(status, cls):
    body = {"message": "Validation failed", "errors": ["itemId must not be blank", "properties.email: not an email"]}
    audience = refusing("audience_platform", "POST", "/api/v2/profiles", status, body)
    with pytest.raises(cls) as info:
        audience.call("audience_platform.create_profile", item_id="p1")
    error = info.value
    assert (error.service, error.action, error.status) == (
        "audience_platform", "audience_platform.create_profile", status)
    assert error.message == "Validation failed; itemId must not be blank; properties.email: not an email"


@pytest.mark.parametrize(("status", "cls"), STATUS_CLASSES)
def test_translation_errors(status, cls):
    body = {"messages": ["Submission 1234 not found", "Check the submission id"]}
    tms = refusing("translation", "GET", "/rest/v0/submissions/1234", status, body)
    with pytest.raises(cls) as info:
        tms.call("translation.get_submission", submission_id=1234)
    if status == 401:       # a 401 first fetches a new token once; the second 401 is the error
        assert [r.url.endswith("/oauth/token") for r in tms.transport.session.sent] == [True, False, True, False]
    error = info.value
    assert (error.service, error.action, error.status) == ("translation", "translation.get_submission", status)
    assert error.message == "Submission 1234 not found; Check the submission id"
    assert error.request_id == "req-7f3a"


def test_request_id_is_none_without_the_header():
    assets = refusing("asset_library", "GET", "/assets/a1", 404, {"message": "gone"}, request_id=None)
    with pytest.raises(NotFoundError) as info:
        assets.call("asset_library.get_asset", asset_id="a1")
    assert info.value.request_id is None and "[request" not in str(info.value)


def test_a_body_that_is_not_json_becomes_the_message():
    assets = answering("asset_library", "GET", "/assets/a1",
                       lambda: reply(504, "upstream timed out", {"Content-Type": "text/plain"}), retry=RetryPolicy(attempts=1))
    with pytest.raises(ServerError) as info:
        assets.call("asset_library.get_asset", asset_id="a1")
    assert info.value.message == "upstream timed out"


def test_an_empty_body_falls_back_to_the_reason():
    assets = answering("asset_library", "DELETE", "/tags/t1", lambda: reply(409))
    with pytest.raises(ApiError) as info:
        assets.call("asset_library.delete_tag", tag_id="t1")
    assert info.value.status == 409 and info.value.message == "Conflict"


@pytest.mark.parametrize(("shape", "body", "message"), [
    ("code_message_errors", {"code": 422, "message": "Invalid", "errors": [{"title": "Bad page"}]}, "Invalid; Bad page"),
    ("code_message_errors", {"errors": [{"detail": "a"}, {"detail": "b"}]}, "a; b"),
    ("message", {"message": "Too Many Requests"}, "Too Many Requests"),
    ("unomi", {"message": "Bad", "errors": [{"message": "size"}]}, "Bad; size"),
    ("messages", {"messages": ["one", "two"]}, "one; two"),
    ("messages", {"messages": []}, "fallback"),
    ("messages", {"error": "invalid_grant", "error_description": "Bad credentials"}, "Bad credentials"),
    ("message", {}, "fallback"),
    ("message", ["just", "a", "list"], "['just', 'a', 'list']"),
    ("message", "  plain text  ", "plain text"),
    ("message", None, "fallback"),
])
def test_service_message(shape, body, message):
    assert service_message(shape, body, "fallback") == message


def test_validation_and_version_errors_carry_their_parts():
    error = ValidationError("limit", 900, "must be between 1 and 500", "asset_library.list_assets")
    assert (error.param, error.value, error.rule, error.action) == (
        "limit", 900, "must be between 1 and 500", "asset_library.list_assets")
    long = ValidationError("name", "x" * 200, "too long")
    assert len(str(long)) < 120 and str(long).endswith(": too long")
    version = VersionError("translation.list_targets", "5.20", "5.19")
    assert (version.action, version.needed, version.configured) == ("translation.list_targets", "5.20", "5.19")


def test_a_validation_error_shows_any_value_in_one_short_line():
    from toolkit.errors import ValidationError
    deep: list = []
    inner = deep
    for _ in range(5000):             # deeper than repr() can go
        inner.append([])
        inner = inner[0]
    for value in (deep, "x" * 1_000_000, 2**300, {"a": {"b": {"c": {"d": 1}}}}):
        text = str(ValidationError("param", value, "some rule"))
        assert text.startswith("param=") and text.endswith(": some rule") and len(text) < 120


@pytest.mark.parametrize(("ask", "said"), [
    (lambda: toolkit.actions("translaton"), "no service 'translaton'; did you mean 'translation'?"),
    (lambda: toolkit.resources("translaton"), "no service 'translaton'; did you mean 'translation'?"),
    (lambda: toolkit.connect("crm", base_url="http://127.0.0.1:9"), "no service 'crm' (there are media_review"),
    (lambda: catalog.resource("translation", "target"), "no resource 'target' in translation; did you "
                                                                "mean 'targets'?"),
    (lambda: catalog.action("asset_library.list_asset"), "did you mean 'asset_library.list_assets'"),
])
def test_a_name_the_catalog_lacks_says_the_closest_it_holds(ask, said):
    """`tk.actions("translaton")` raised a pandas KeyError about dtypes and `tk.resources("translaton")`
    gave an empty frame; nothing said "did you mean targets?" for "target"."""
    with pytest.raises(toolkit.UnknownNameError) as error:
        ask()
    assert said in str(error.value) and "\n" not in str(error.value)
    assert isinstance(error.value, KeyError) and isinstance(error.value, toolkit.ValidationError)


def test_jupyter_shows_a_toolkit_error_as_the_analysts_line_and_the_message(monkeypatch):
    """A fetch refused in a notebook showed 103 lines through fetch.py and concurrent.futures first."""
    from toolkit.errors import ValidationError

    def analysts_cell():
        raise_inside_toolkit()

    def raise_inside_toolkit():
        raise ValidationError("status", ["DONE"], "must be one of READY, DELIVERED")

    monkeypatch.delenv("TOOLKIT_TRACEBACKS", raising=False)
    try:
        analysts_cell()
    except ValidationError as error:
        shown = error._render_traceback_()
        assert shown[0].startswith("line ") and shown[0].endswith(": analysts_cell()")
        assert shown[1] == f"ValidationError: {error}" and "TOOLKIT_TRACEBACKS=full" in shown[-1]
        assert len(shown) == 3
        monkeypatch.setenv("TOOLKIT_TRACEBACKS", "full")
        with pytest.raises(NotImplementedError):
            error._render_traceback_()
