"""HTTP: retries with Retry-After and backoff, the rate budget, the OAuth password grant, timeouts."""
from __future__ import annotations

import base64
import email.utils
import threading
import time
from urllib.parse import parse_qs

import pytest
import requests
import responses
from stubbed_services import BASE, CREDENTIALS, most_at_once

import toolkit
from toolkit.catalog import SERVICES
from toolkit.errors import AuthError, RateLimitError, ServerError, TransportError
from toolkit.http.session import RETRY_STATUSES, RateBudget, RetryPolicy, Transport, retry_after

URL = "http://127.0.0.1:9/v1/things"
TOKEN_URL = "http://127.0.0.1:9/PD/oauth/token"


@pytest.fixture
def transport(sleeps):
    return Transport(sleep=sleeps, retry=RetryPolicy(attempts=4))


def answers(stub, method, url, *statuses_or_errors, headers=None):
    for item in statuses_or_errors:
        if isinstance(item, int):
            stub.add(method, url, json={"message": f"status {item}"}, status=item, headers=headers or {})
        else:
            stub.add(method, url, body=item)


# --- which answers are retried ------------------------------------------------------------------------

@pytest.mark.parametrize("status", sorted(RETRY_STATUSES))
def test_get_is_retried_on_retryable_statuses(stub, transport, sleeps, status):
    answers(stub, responses.GET, URL, status, status, 200)
    assert transport.send("GET", URL).status_code == 200
    assert len(stub.calls) == 3 and len(sleeps) == 2
    assert {408, 429, 500, 502, 503, 504} <= RETRY_STATUSES


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 422])
def test_client_errors_are_not_retried(stub, transport, sleeps, status):
    answers(stub, responses.GET, URL, status, 200)
    assert transport.send("GET", URL).status_code == status
    assert len(stub.calls) == 1 and sleeps == []


@pytest.mark.parametrize("error", [requests.ConnectionError("refused"), requests.ConnectTimeout("slow"),
                                   requests.ReadTimeout("slow"),
                                   requests.exceptions.ChunkedEncodingError("dropped mid-body")])
def test_connection_errors_are_retried(stub, transport, sleeps, error):
    answers(stub, responses.GET, URL, error, 200)
    assert transport.send("GET", URL).status_code == 200
    assert len(stub.calls) == 2 and len(sleeps) == 1


def test_no_answer_after_every_try_raises_transport_error(stub, transport, sleeps):
    answers(stub, responses.GET, URL, *[requests.ConnectionError("refused")] * 4)
    with pytest.raises(TransportError, match="no answer after 4 tries"):
        transport.send("GET", URL)
    assert len(stub.calls) == 4 and len(sleeps) == 3


def test_attempts_exhausted_returns_the_last_answer(stub, transport, sleeps):
    answers(stub, responses.GET, URL, 503, 503, 503, 502, 200)
    assert transport.send("GET", URL).status_code == 502
    assert len(stub.calls) == 4 and len(sleeps) == 3


# --- POST ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("status", [500, 502, 503, 504, 408])
def test_post_is_not_retried_on_server_errors(stub, transport, sleeps, status):
    answers(stub, responses.POST, URL, status, 200)
    assert transport.send("POST", URL).status_code == status
    assert len(stub.calls) == 1 and sleeps == []


def test_post_is_not_retried_after_a_connection_error(stub, transport, sleeps):
    answers(stub, responses.POST, URL, requests.ConnectionError("reset"), 200)
    with pytest.raises(TransportError):
        transport.send("POST", URL)
    assert len(stub.calls) == 1


def test_post_is_retried_on_429(stub, transport, sleeps):
    answers(stub, responses.POST, URL, 429, 429, 201)
    assert transport.send("POST", URL).status_code == 201
    assert len(stub.calls) == 3 and len(sleeps) == 2


def test_post_declared_safe_is_retried_on_500(stub, transport, sleeps):
    answers(stub, responses.POST, URL, 500, requests.ConnectionError("reset"), 200)
    assert transport.send("POST", URL, idempotent=True).status_code == 200
    assert len(stub.calls) == 3


def test_client_post_not_retried_on_500(stub, assets, sleeps):
    answers(stub, responses.POST, assets.base_url + "/tags", 500, 201)
    with pytest.raises(ServerError) as info:
        assets.call("asset_library.create_tag", name="hero")
    assert info.value.status == 500 and len(stub.calls) == 1 and sleeps == []


def test_client_post_retried_on_429(stub, assets, sleeps):
    stub.add(responses.POST, assets.base_url + "/tags", status=429, headers={"Retry-After": "2"})
    stub.add(responses.POST, assets.base_url + "/tags", json={"id": "t1", "name": "hero"}, status=201)
    assert assets.call("asset_library.create_tag", name="hero") == {"id": "t1", "name": "hero"}
    assert sleeps == [2.0]


def test_client_retry_safe_post_retried_on_500(stub, tms, sleeps):
    url = tms.base_url + "/rest/v0/submissions/1234/wordcount"
    answers(stub, responses.POST, url, 500, 503)
    stub.add(responses.POST, url, json={"wordCount": 5120})
    assert tms.call("translation.get_word_count", submission_id=1234) == {"wordCount": 5120}
    assert len([c for c in stub.calls if c.request.url == url]) == 3 and len(sleeps) == 2


@pytest.mark.parametrize(("status", "error"), [(503, ServerError), (500, ServerError), (429, RateLimitError)])
def test_client_attempts_exhausted_raise_the_last_answers_class(stub, media, sleeps, status, error):
    answers(stub, responses.GET, media.base_url + "/teams", *[status] * 5)
    with pytest.raises(error) as info:
        media.call("media_review.list_teams")
    assert info.value.status == status
    assert len(stub.calls) == RetryPolicy().attempts and len(sleeps) == RetryPolicy().attempts - 1


# --- how long it waits --------------------------------------------------------------------------------

def test_retry_after_seconds_is_honoured(stub, transport, sleeps):
    answers(stub, responses.GET, URL, 429, headers={"Retry-After": "7"})
    answers(stub, responses.GET, URL, 503, headers={"Retry-After": "0.5"})
    answers(stub, responses.GET, URL, 200)
    transport.send("GET", URL)
    assert sleeps == [7.0, 0.5]


def test_retry_after_http_date_is_honoured(stub, transport, sleeps):
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    answers(stub, responses.GET, URL, 503, headers={"Retry-After": when})
    answers(stub, responses.GET, URL, 200)
    transport.send("GET", URL)
    assert len(sleeps) == 1 and 28 <= sleeps[0] <= 30


def test_a_retry_after_longer_than_the_cap_is_not_waited_for(stub, sleeps, caplog):
    transport = Transport(sleep=sleeps,
                          retry=RetryPolicy(attempts=3, max_retry_after=60))
    answers(stub, responses.GET, URL, 429, headers={"Retry-After": "3600"})
    answers(stub, responses.GET, URL, 200)
    with caplog.at_level("INFO", logger="toolkit.http.session"):
        assert transport.send("GET", URL).status_code == 429
    assert sleeps == [] and transport.requests == 1
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert "asks to wait 3600 s" in caplog.records[0].getMessage()


def test_a_long_wait_is_a_warning_and_a_short_one_is_info(stub, sleeps, caplog):
    transport = Transport(sleep=sleeps, retry=RetryPolicy(attempts=3))
    answers(stub, responses.GET, URL, 429, headers={"Retry-After": "45"})
    answers(stub, responses.GET, URL, 503, headers={"Retry-After": "2"})
    answers(stub, responses.GET, URL, 200)
    with caplog.at_level("INFO", logger="toolkit.http.session"):
        assert transport.send("GET", URL).status_code == 200
    assert sleeps == [45, 2]
    assert [r.levelname for r in caplog.records if "retry" in r.getMessage()] == ["WARNING", "INFO"]


def test_the_client_says_when_it_did_not_wait(stub, assets, sleeps):
    stub.add(responses.GET, assets.base_url + "/tags", json={"message": "slow down"}, status=429,
             headers={"Retry-After": "3600"})
    with pytest.raises(RateLimitError, match="asks to wait 3600 s.*max_retry_after of 120 s"):
        assets.call("asset_library.list_tags")
    assert sleeps == []


def test_retry_after_parsing():
    now = 1_800_000_000.0
    assert retry_after("120") == 120.0
    assert retry_after(" 3 ") == 3.0
    assert retry_after("1.5") == 1.5
    assert retry_after(email.utils.formatdate(now + 42, usegmt=True), now=now) == 42.0
    assert retry_after(email.utils.formatdate(now - 42, usegmt=True), now=now) == 0.0     # a date in the past
    assert retry_after(None) is None and retry_after("") is None
    assert retry_after("soon") is None and retry_after("-5") is None


def test_without_retry_after_the_backoff_doubles_with_jitter(stub, sleeps):
    policy = RetryPolicy(attempts=5, backoff=1.0, max_backoff=100.0)
    transport = Transport(sleep=sleeps, retry=policy)
    answers(stub, responses.GET, URL, 503, 503, 503, 503, 200)
    transport.send("GET", URL)
    for attempt, wait in enumerate(sleeps, start=1):
        ceiling = 2 ** (attempt - 1)
        assert ceiling / 2 <= wait <= ceiling


def test_backoff_is_bounded_and_jitter_stays_in_its_band():
    policy = RetryPolicy(attempts=50, backoff=0.5, max_backoff=4.0)
    for attempt in range(1, 40):
        ceiling = min(4.0, 0.5 * 2 ** (attempt - 1))
        waits = [policy.wait(attempt, None) for _ in range(200)]
        assert all(ceiling / 2 <= w <= ceiling <= policy.max_backoff for w in waits)
        assert max(waits) - min(waits) > 0          # jittered, not a constant
    assert max(policy.wait(1000, None) for _ in range(100)) <= 4.0


def test_retry_after_beats_backoff():
    answer = requests.Response()
    answer.headers["Retry-After"] = "9"
    assert RetryPolicy(max_backoff=1.0).wait(1, answer) == 9.0


# --- the rate budget ------------------------------------------------------------------------------------

def _run_threads(count, work):
    threads = [threading.Thread(target=work) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert not any(t.is_alive() for t in threads)


def test_rate_budget_never_lets_more_than_n_starts_into_one_second():
    budget = RateBudget(per_second=4, concurrent=None)
    starts: list[float] = []
    lock = threading.Lock()

    def work():
        with budget, lock:
            starts.append(time.monotonic())

    began = time.monotonic()
    _run_threads(8, work)
    starts.sort()
    assert len(starts) == 8
    for first in starts:
        assert sum(first <= s < first + 1.0 for s in starts) <= 4
    assert starts[4] - began >= 1.0                  # the fifth waited for the window to move on
    assert starts[3] - began < 0.5                   # the first four did not wait


@pytest.mark.parametrize("shared", [False, True], ids=["own", "shared"])
@pytest.mark.parametrize(("per_second", "late"), [
    # the first four reach the service 0.3 s after they start (a busy machine, a slow link), the next at
    # once: counted by their starts, the fifth arrived 0.75 s after the first four
    (4, [0.3] * 4),
    # the first is still on its way when the window has moved on: it holds its place until answered
    (2, [1.3]),
], ids=["late", "in flight past the window"])
def test_rate_budget_keeps_its_window_by_when_requests_arrive_not_when_they_start(tmp_path, shared, per_second, late):
    budget = RateBudget(per_second=per_second, concurrent=None, shared=tmp_path / "budget" if shared else None)
    arrivals: list[float] = []
    lock = threading.Lock()
    delays = iter(late)

    def work():
        with budget:
            with lock:
                delay = next(delays, 0.0)
            time.sleep(delay)
            with lock:
                arrivals.append(time.monotonic())

    _run_threads(2 * per_second, work)
    arrivals.sort()
    assert len(arrivals) == 2 * per_second
    for first in arrivals:
        assert sum(first <= a < first + 1.0 for a in arrivals) <= per_second, \
            [round(a - arrivals[0], 2) for a in arrivals]


def test_rate_budget_never_more_than_concurrent_at_once():
    assert most_at_once(RateBudget(per_second=None, concurrent=3), 12, 0.03) == (3, 0)


def test_rate_budget_releases_its_slot_on_error():
    budget = RateBudget(per_second=None, concurrent=1)
    with pytest.raises(RuntimeError), budget:
        raise RuntimeError("failed while holding the slot")
    acquired = threading.Event()

    def work():
        with budget:
            acquired.set()
    _run_threads(1, work)
    assert acquired.is_set()


def test_fractional_rate_still_lets_requests_through():
    budget = RateBudget(per_second=0.5, concurrent=None)
    done = threading.Event()

    def work():
        with budget:
            done.set()
    _run_threads(1, work)
    assert done.is_set()


def test_asset_library_budget_is_15_per_second_and_10_at_once():
    assets = toolkit.connect("asset_library", base_url=BASE["asset_library"], **CREDENTIALS["asset_library"])
    assert SERVICES["asset_library"].rate_per_second == 15
    assert SERVICES["asset_library"].max_concurrency == 10
    assert assets.transport.budget.per_second == 15


# --- the OAuth password grant -------------------------------------------------------------------------------

def token_calls(stub, client):
    return [c for c in stub.calls if c.request.url == client.base_url + "/oauth/token"]


def api(stub, client, path="/rest/v0/projects", *, status=200, body=None):
    stub.add(responses.GET, client.base_url + path, json=body if body is not None else [], status=status)


def test_token_fetched_once_with_basic_client_credentials_and_form_fields(stub, make, token):
    token(access="access-one")
    tms = make("translation")
    api(stub, tms)
    api(stub, tms)
    tms.call("translation.list_projects")
    tms.call("translation.list_projects")
    fetches = token_calls(stub, tms)
    assert len(fetches) == 1
    request = fetches[0].request
    assert request.method == "POST"
    expected = base64.b64encode(b"tm-client:tm-secret-1f4e8c").decode()
    assert request.headers["Authorization"] == f"Basic {expected}"
    assert request.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert parse_qs(request.body) == {"grant_type": ["password"], "username": ["pm.user"],
                                      "password": ["tm-pass-6a9b2d"]}
    calls = [c for c in stub.calls if "/rest/v0/" in c.request.url]
    assert [c.request.headers["Authorization"] for c in calls] == ["Bearer access-one"] * 2


def test_token_refreshed_before_it_expires(stub, make, token):
    token(access="short-1", expires_in=10, refresh="refresh-1")    # inside the 30 s safety margin
    token(access="short-2", expires_in=3600, refresh="refresh-2")
    tms = make("translation")
    api(stub, tms)
    api(stub, tms)
    api(stub, tms)
    for _ in range(3):
        tms.call("translation.list_projects")
    fetches = token_calls(stub, tms)
    assert len(fetches) == 2
    assert parse_qs(fetches[1].request.body) == {"grant_type": ["refresh_token"], "refresh_token": ["refresh-1"]}
    assert fetches[1].request.headers["Authorization"].startswith("Basic ")
    bearers = [c.request.headers["Authorization"] for c in stub.calls if "/rest/v0/" in c.request.url]
    assert bearers == ["Bearer short-1", "Bearer short-2", "Bearer short-2"]


def test_without_a_refresh_token_the_password_grant_is_used_again(stub, make, token):
    token(access="short-1", expires_in=5)
    token(access="short-2", expires_in=5)
    tms = make("translation")
    api(stub, tms)
    api(stub, tms)
    tms.call("translation.list_projects")
    tms.call("translation.list_projects")
    grants = [parse_qs(c.request.body)["grant_type"] for c in token_calls(stub, tms)]
    assert grants == [["password"], ["password"]]


def test_a_refused_refresh_token_falls_back_to_the_password(stub, make, token):
    token(access="short-1", expires_in=5, refresh="refresh-1")
    stub.add(responses.POST, make("translation").base_url + "/oauth/token", json={"error": "invalid_grant"},
             status=400)
    token(access="fresh", expires_in=3600)
    tms = make("translation")
    api(stub, tms)
    api(stub, tms)
    tms.call("translation.list_projects")
    tms.call("translation.list_projects")
    grants = [parse_qs(c.request.body)["grant_type"][0] for c in token_calls(stub, tms)]
    assert grants == ["password", "refresh_token", "password"]
    assert [c.request.headers["Authorization"] for c in stub.calls if "/rest/v0/" in c.request.url][-1] == \
        "Bearer fresh"


def test_a_401_fetches_a_new_token_once_and_replays_the_request(stub, make, token, sleeps):
    token(access="revoked", refresh="refresh-1")
    token(access="renewed")
    tms = make("translation")
    api(stub, tms, status=401, body={"messages": ["token expired"]})
    api(stub, tms, body=[{"projectId": 10}])
    assert tms.call("translation.list_projects") == [{"projectId": 10}]
    assert len(token_calls(stub, tms)) == 2
    assert parse_qs(token_calls(stub, tms)[1].request.body)["grant_type"] == ["refresh_token"]
    bearers = [c.request.headers["Authorization"] for c in stub.calls if "/rest/v0/" in c.request.url]
    assert bearers == ["Bearer revoked", "Bearer renewed"]
    assert sleeps == []


def test_a_second_401_is_an_auth_error_not_a_loop(stub, make, token):
    token(access="one")
    token(access="two")
    token(access="three")
    tms = make("translation")
    for _ in range(3):
        api(stub, tms, status=401, body={"messages": ["no access to projects"]})
    with pytest.raises(AuthError) as info:
        tms.call("translation.list_projects")
    assert info.value.status == 401 and "no access to projects" in str(info.value)
    assert len(token_calls(stub, tms)) == 2
    assert len([c for c in stub.calls if "/rest/v0/" in c.request.url]) == 2


def test_a_refused_token_request_is_an_auth_error_without_the_password(stub, make, token):
    stub.add(responses.POST, make("translation").base_url + "/oauth/token", status=401,
             json={"error": "unauthorized", "error_description": "bad credentials for pm.user / tm-pass-6a9b2d"})
    tms = make("translation")
    with pytest.raises(AuthError) as info:
        tms.call("translation.list_projects")
    assert info.value.status == 401
    assert "tm-pass-6a9b2d" not in str(info.value) and "bad credentials" in str(info.value)


def test_other_schemes_send_their_headers(stub, make):
    al, mr = make("asset_library"), make("media_review")
    ap_basic = make("audience_platform", token=None, username="integration", password="ap-pass-77aa")
    stub.add(responses.GET, al.base_url + "/tags", json={"data": [], "pagination": {"hasMore": False}})
    stub.add(responses.GET, mr.base_url + "/teams", json=[])
    stub.add(responses.GET, ap_basic.base_url + "/api/v2/version", json={"version": "1"})
    al.call("asset_library.list_tags")
    mr.call("media_review.list_teams")
    ap_basic.call("audience_platform.get_version")
    first, second, third = (c.request.headers for c in stub.calls)
    assert first["x-api-key"] == "al-key-8c1d4b" and first["x-air-workspace-id"] == "ws-1"
    assert second["Authorization"] == "Bearer mr-token-5f2e9a"
    assert third["Authorization"] == "Basic " + base64.b64encode(b"integration:ap-pass-77aa").decode()


# --- timeouts ---------------------------------------------------------------------------------------------

def test_timeouts_are_always_passed(stub, make, token):
    token()
    tms = make("translation", timeout=(2.0, 7.5))
    api(stub, tms)
    tms.call("translation.list_projects")
    assert [c.request.req_kwargs["timeout"] for c in stub.calls] == [(2.0, 7.5), (2.0, 7.5)]


def test_default_timeout_is_set(stub, assets):
    stub.add(responses.GET, assets.base_url + "/assets/a1", json={"id": "a1"})
    assets.call("asset_library.get_asset", asset_id="a1")
    connect, read = stub.calls[0].request.req_kwargs["timeout"]
    assert 0 < connect <= 30 and 0 < read <= 300


# --- reading the body in one call, over a real socket -----------------------------------------------

def _serve(answers: list[bytes]):
    """A loopback server that sends each raw answer in turn, one per connection, then closes it."""
    import socket
    listener = socket.create_server(("127.0.0.1", 0))

    def run():
        for answer in answers:
            connection, _ = listener.accept()
            with connection:
                connection.recv(65536)
                connection.sendall(answer)
        listener.close()
    threading.Thread(target=run, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}/things"


def test_a_body_cut_short_is_retried_and_the_whole_one_kept(transport, sleeps):
    whole = b'{"data": [' + b",".join(b'{"id": %d}' % i for i in range(5000)) + b"]}"
    url = _serve([b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(whole) + whole[:1000],
                  b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(whole) + whole])
    response = transport.send("GET", url)
    assert response.content == whole and response.json()["data"][-1] == {"id": 4999}
    assert len(sleeps) == 1                       # one retry after the cut


def test_a_compressed_body_is_decoded(transport):
    import gzip
    whole = b'{"ok": true}' * 1000
    packed = gzip.compress(whole)
    url = _serve([b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                  % len(packed) + packed])
    assert transport.send("GET", url).content == whole


# --- the token request is retried like any other (it is safe to repeat) -------------------------------

@pytest.mark.parametrize("status", [429, 500, 503])
def test_a_failed_token_request_is_retried(stub, make, token, sleeps, status):
    stub.add(responses.POST, TOKEN_URL, json={"messages": ["busy"]}, status=status)
    token(access="access-after-retry")
    tms = make("translation")
    api(stub, tms)
    tms.call("translation.list_projects")
    assert len(token_calls(stub, tms)) == 2 and len(sleeps) == 1
    calls = [c for c in stub.calls if "/rest/v0/" in c.request.url]
    assert calls[0].request.headers["Authorization"] == "Bearer access-after-retry"


def test_a_token_request_dropped_is_retried(stub, make, token, sleeps):
    stub.add(responses.POST, TOKEN_URL, body=requests.ConnectionError("reset"))
    token(access="access-after-drop")
    tms = make("translation")
    api(stub, tms)
    tms.call("translation.list_projects")
    assert len(token_calls(stub, tms)) == 2


def test_a_token_request_that_keeps_failing_keeps_its_class(stub, make, sleeps):
    for _ in range(5):
        stub.add(responses.POST, TOKEN_URL, json={"messages": ["down"]}, status=503)
    tms = make("translation")
    with pytest.raises(ServerError) as raised:
        tms.call("translation.list_projects")
    assert raised.value.status == 503 and "tm-pass" not in str(raised.value)
    assert len(sleeps) == 4


# --- only what is safe to repeat is retried on 5xx ------------------------------------------------------

def test_a_json_patch_is_not_retried_on_a_server_error(stub, audience, sleeps):
    url = audience.base_url + "/api/v2/audiences/aud-1"
    stub.add(responses.PATCH, url, json={"message": "boom"}, status=500)
    stub.add(responses.PATCH, url, json={}, status=200)
    with pytest.raises(ServerError):
        audience.call("audience_platform.update_audience", audience_id="aud-1",
                      patch=[{"op": "add", "path": "/tags/-", "value": "x"}], content_type="json_patch")
    assert len(stub.calls) == 1 and sleeps == []


def test_a_merge_patch_is_retried_on_a_server_error(stub, audience, sleeps):
    url = audience.base_url + "/api/v2/audiences/aud-1"
    stub.add(responses.PATCH, url, json={"message": "boom"}, status=500)
    stub.add(responses.PATCH, url, json={"itemId": "aud-1"}, status=200)
    audience.call("audience_platform.update_audience", audience_id="aud-1", patch={"name": "x"})
    assert len(stub.calls) == 2


# --- a retried upload sends the whole file again ----------------------------------------------------------

def _upload_answers(stub, tms):
    url = tms.base_url + "/rest/v0/submissions/1/upload/translatable"
    stub.add(responses.POST, url, json={"messages": ["slow down"]}, status=429)
    stub.add(responses.POST, url, json={"processId": "p-1"}, status=200)
    return url


def test_an_upload_from_a_path_is_sent_whole_on_each_try_and_closed(stub, tms, tmp_path, monkeypatch):
    path = tmp_path / "doc.xliff"
    path.write_bytes(b"<xliff>payload-123</xliff>")
    opened = []
    real_open = open

    def spying_open(file, mode="r", *args, **kwargs):
        handle = real_open(file, mode, *args, **kwargs)
        if str(file) == str(path):
            opened.append(handle)
        return handle

    monkeypatch.setattr("builtins.open", spying_open)
    url = _upload_answers(stub, tms)
    tms.call("translation.upload_translatable", submission_id=1, file=str(path))
    bodies = [c.request.body for c in stub.calls if c.request.url == url]
    assert len(bodies) == 2 and all(b"<xliff>payload-123</xliff>" in body for body in bodies)
    assert len(opened) == 2 and all(handle.closed for handle in opened)


def test_an_upload_from_a_file_object_is_rewound_for_the_retry(stub, tms):
    import io
    handle = io.BytesIO(b"<xliff>payload-456</xliff>")
    url = _upload_answers(stub, tms)
    tms.call("translation.upload_translatable", submission_id=1, file=handle)
    bodies = [c.request.body for c in stub.calls if c.request.url == url]
    assert len(bodies) == 2 and all(b"payload-456" in body for body in bodies)
    assert not handle.closed          # the caller's own file stays theirs


def test_an_upload_from_a_stream_that_cannot_rewind_is_sent_once(stub, tms, sleeps):
    import io

    class Pipe(io.RawIOBase):
        def __init__(self):
            self.data = io.BytesIO(b"<xliff>streamed</xliff>")

        def readable(self):
            return True

        def seekable(self):
            return False

        def readinto(self, buffer):
            chunk = self.data.read(len(buffer))
            buffer[:len(chunk)] = chunk
            return len(chunk)

    url = _upload_answers(stub, tms)
    with pytest.raises(RateLimitError):
        tms.call("translation.upload_translatable", submission_id=1, file=Pipe())
    assert len([c for c in stub.calls if c.request.url == url]) == 1 and sleeps == []


def test_the_services_clock_is_its_latest_date_header(stub, transport, sleeps):
    """The Date of every answer, errors too; a later one wins, an earlier one (another thread's answer
    overtaken) or one that is not an HTTP date is ignored."""
    assert transport.clock.latest is None
    for date in ("Mon, 02 Nov 2026 09:00:00 GMT", "Mon, 02 Nov 2026 08:59:59 GMT", "yesterday", ""):
        stub.add("GET", URL, json={}, headers={"Date": date} if date else {})
    stub.add("GET", URL, json={}, status=404, headers={"Date": "Mon, 02 Nov 2026 10:00:00 +0100"})
    seen = []
    for _ in range(5):
        transport.send("GET", URL)
        seen.append(transport.clock.latest.isoformat())
    assert seen == ["2026-11-02T09:00:00+00:00"] * 5, "10:00 +0100 is 09:00 UTC, not later"
