"""The sandbox's view of a request: query numbers and URLs that a handler checks."""
import pytest

from toolkit.sandbox.exchange import Headers, Reject, Request, url_parts


def request(**query: str) -> Request:
    return Request("GET", "/x", {k: [v] for k, v in query.items()}, Headers(), b"", "toy", "", "")


@pytest.mark.parametrize("value", [str(2**63), str(-(2**63) - 1), str(2**70), "1" + "0" * 5000, "x", "1.5"])
def test_a_query_number_that_is_not_a_64_bit_integer_is_a_400(value):
    with pytest.raises(Reject) as refused:
        request(offset=value).int_arg("offset")
    assert refused.value.status == 400 and "offset" in refused.value.message
    assert len(refused.value.message) < 200                 # a huge value is not repeated whole


def test_query_numbers_in_range_and_defaults():
    assert request(offset=str(2**63 - 1)).int_arg("offset") == 2**63 - 1
    assert request(offset=str(-(2**63))).int_arg("offset") == -(2**63)
    assert request(offset="").int_arg("offset", 7) == 7 and request().int_arg("offset") is None


@pytest.mark.parametrize("url", ["http://[::1", "http://[::1/x", "http://host:99999/x", "http://host:port/"])
def test_a_url_that_cannot_be_split_is_a_400(url):
    with pytest.raises(Reject) as refused:
        url_parts(url, "sourceUrl")
    assert refused.value.status == 400 and refused.value.message.startswith("sourceUrl is not a valid URL")


def test_a_url_that_splits_is_returned_split():
    parts = url_parts("https://[::1]:8443/a/b?c=1", "sourceUrl")
    assert (parts.scheme, parts.hostname, parts.port, parts.path) == ("https", "::1", 8443, "/a/b")


def test_a_reject_may_carry_fields_named_as_its_own_params():
    refused = Reject(400, "upload failed", None, status="FAILED", message="one of many", headers="x")
    assert (refused.status, refused.message) == (400, "upload failed")
    assert refused.extra == {"status": "FAILED", "message": "one of many", "headers": "x"}


@pytest.fixture(scope="module")
def box():
    import toolkit.sandbox as sandbox
    with sandbox.start(enforce_limits=False) as running:
        yield running


BAD_URL = "http://[::1"


def test_urls_that_cannot_be_split_are_a_400_in_every_emulator(box):
    """Each handler that reads a URL the analyst gives: a 400 naming it, never a 500."""
    import requests

    from toolkit.sandbox.translation.records import check_hook

    assets = box.credentials("asset_library")
    answer = requests.post(assets["base_url"] + "/imports", json={"sourceUrl": BAD_URL},
                           headers={"x-api-key": assets["api_key"], "x-air-workspace-id": assets["workspace_id"]})
    assert answer.status_code == 400, answer.text
    cdp = box.credentials("audience_platform")
    bearer = {"Authorization": f"Bearer {cdp['token']}"}
    answer = requests.post(cdp["base_url"] + "/api/v2/actions/audience/import", json={"type": "url", "url": BAD_URL},
                           headers=bearer)
    assert answer.status_code == 400, answer.text
    answer = requests.patch(cdp["base_url"] + "/api/v2/security/jwks/configuration", json={"endpoints": [BAD_URL]},
                            headers={**bearer, "Content-Type": "application/merge-patch+json"})
    assert answer.status_code == 400, answer.text
    with pytest.raises(Reject) as refused:
        check_hook("_webhookURL", BAD_URL)
    assert refused.value.status == 400
