"""Start, stop, the handle's URLs, credentials, secrets and examples."""
import pytest
import requests

import toolkit.sandbox as sandbox
from toolkit import catalog

# what each service's usual login takes (the catalog's Service.login), with its base URL
KEYS = {key: {"base_url", *service.login} for key, service in catalog.SERVICES.items()}
BASES = {key: f"/{key}{service.base_path}" for key, service in catalog.SERVICES.items()}


def test_start_and_stop(launch, toy):
    box, session, base = toy
    assert session.get(f"{base}/api/v2/things/t0001").status_code == 200
    box.stop()
    box.stop()          # twice is harmless
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{base}/api/v2/things/t0001", timeout=2)
    with pytest.raises(requests.ConnectionError):   # a kept-alive connection is closed too
        session.get(f"{base}/api/v2/things/t0001", timeout=2)


def test_context_manager():
    with sandbox.start(emulators={}) as box:
        port = box.port
        assert requests.get(f"http://127.0.0.1:{port}/nothing", timeout=2).status_code == 404
    with pytest.raises(requests.ConnectionError):
        requests.get(f"http://127.0.0.1:{port}/nothing", timeout=2)


def test_unknown_service_is_a_404_and_urls_need_a_served_service(toy):
    box, session, base = toy
    answer = session.get(base.replace("/toy/toy", "/nope/toy"))
    assert answer.status_code == 404 and "toy" in answer.json()["message"]
    with pytest.raises(KeyError, match="serves"):
        box.url("nope")


def test_401_without_or_with_a_wrong_token(toy):
    box, session, base = toy
    assert requests.get(f"{base}/api/v2/things", timeout=5).status_code == 401
    wrong = requests.get(f"{base}/api/v2/things", headers={"Authorization": "Bearer nope"}, timeout=5)
    assert wrong.status_code == 401 and wrong.json() == {"message": "Unauthorized: missing or invalid credentials"}


def test_every_registered_service_has_its_base_path_and_exact_credential_keys():
    with sandbox.start() as box:
        assert set(box.services) <= set(KEYS)
        for service in box.services:
            assert box.url(service) == f"http://127.0.0.1:{box.port}{BASES[service]}"
            credentials = box.credentials(service)
            # the keys the catalog says ws.connect takes; at least the ones the wire contract names
            assert set(credentials) == {"base_url", *box.emulator(service).service.credentials}
            assert KEYS[service] <= set(credentials)
            assert credentials["base_url"] == box.url(service)


def test_secrets_are_the_same_for_the_same_seed():
    with sandbox.start(seed=3) as one, sandbox.start(seed=3) as two, sandbox.start(seed=4) as other:
        assert one.secrets() == two.secrets()
        assert one.secrets() and set(one.secrets()).isdisjoint(other.secrets())
        token = one.credentials("media_review")["token"]
        assert token in one.secrets()


def test_examples_of_the_audience_platform():
    with sandbox.start() as box:
        examples = box.examples("audience_platform")
        assert examples["profile_ids"] and examples["metric_ids"]


def test_mode_is_checked():
    with pytest.raises(ValueError, match="mode"):
        sandbox.start(mode="cloud")


def test_every_registered_emulator_is_served():
    with sandbox.start() as box:
        assert box.services == tuple(sandbox.REGISTRY) == tuple(KEYS)


def test_a_missing_emulator_module_is_an_error_naming_it(monkeypatch):
    monkeypatch.setitem(sandbox.REGISTRY, "ghost", "toolkit.sandbox.ghost_service")
    with pytest.raises(sandbox.EmulatorImportError, match=r"ghost emulator \(toolkit\.sandbox\.ghost_service\)"):
        sandbox.available()
    with pytest.raises(ImportError, match="ghost"):
        sandbox.start()


def test_an_emulator_module_that_fails_to_import_is_an_error_naming_it(monkeypatch, tmp_path):
    (tmp_path / "broken_emulator_for_tests.py").write_text("raise RuntimeError('half written')\n")
    (tmp_path / "plain_module_for_tests.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sandbox.REGISTRY, "broken", "broken_emulator_for_tests")
    with pytest.raises(sandbox.EmulatorImportError, match="broken emulator .*RuntimeError: half written"):
        sandbox.available()
    monkeypatch.setitem(sandbox.REGISTRY, "broken", "plain_module_for_tests")   # no EMULATOR in it
    with pytest.raises(sandbox.EmulatorImportError, match="plain_module_for_tests.*EMULATOR"):
        sandbox.available()
