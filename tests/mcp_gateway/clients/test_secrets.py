"""The secret store: sources, the owner-only file rule, redaction, and no key in what a client returns."""

from __future__ import annotations

import json
import os
from urllib.parse import quote, quote_plus

import pytest

from mcp_gateway.clients import ClientSet, SecretError, SecretStore
from sandbox import default_keys

from .endpoints import KRX_PRICES, LAW_SEARCH, SEOUL_BIKES

DATAGO_KEY = default_keys()["krx"]  # has + / =: raw and encoded forms differ


def test_from_env_reads_kopa_key_variables():
    store = SecretStore.from_env({"KOPA_KEY_DART": "d" * 40, "KOPA_KEY_KRX": DATAGO_KEY, "OTHER": "x"})
    assert store.key("dart") == "d" * 40 and store.key("krx") == DATAGO_KEY and store.platforms() == ["dart", "krx"]


@pytest.mark.parametrize(("name", "text"), [
    ("keys.json", json.dumps({"dart": "abc123", "law": "kopa1"})),
    ("keys.toml", 'dart = "abc123"\nlaw = "kopa1"\n'),
])
def test_from_file_json_and_toml(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    path.chmod(0o600)
    store = SecretStore.from_file(path)
    assert (store.key("dart"), store.key("law")) == ("abc123", "kopa1")


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660])
def test_file_readable_by_others_is_refused(tmp_path, mode):
    path = tmp_path / "keys.json"
    path.write_text(json.dumps({"dart": "abc123"}))
    path.chmod(mode)
    with pytest.raises(SecretError) as err:
        SecretStore.from_file(path)
    assert str(path) in str(err.value) and f"chmod 600 {path}" in str(err.value)
    assert "abc123" not in str(err.value)


def test_bad_file_contents_are_named(tmp_path):
    path = tmp_path / "keys.json"
    path.write_text('{"dart": 5}')
    os.chmod(path, 0o600)
    with pytest.raises(SecretError, match="must map platform ids to key strings"):
        SecretStore.from_file(path)


def test_missing_key_is_a_clear_error_and_repr_hides_keys():
    store = SecretStore({"dart": "abc123secret"})
    with pytest.raises(SecretError, match="KOPA_KEY_LAW"):
        store.key("law")
    assert "abc123secret" not in repr(store) and "dart" in repr(store)


def test_redact_raw_and_both_encoded_forms():
    store = SecretStore({"krx": DATAGO_KEY})
    assert quote(DATAGO_KEY, safe="") != DATAGO_KEY and quote_plus(DATAGO_KEY) != DATAGO_KEY
    text = f"raw={DATAGO_KEY} enc={quote(DATAGO_KEY, safe='')} plus={quote_plus(DATAGO_KEY)}"
    assert store.redact(text) == "raw=*** enc=*** plus=***"


@pytest.mark.parametrize(("endpoint", "params"), [
    pytest.param(KRX_PRICES, {"itmsNm": "삼성전자"}, id="query-param-encoded"),
    pytest.param(SEOUL_BIKES, {}, id="path-segment"),
    pytest.param(LAW_SEARCH, {"query": "개인정보"}, id="echoed-in-records"),
])
async def test_no_key_in_url_message_or_records(clients: ClientSet, secrets: SecretStore, endpoint, params):
    for key in (None, "wrong+key/="):  # configured key (success), and a rejected one (failure message)
        page = await clients.fetch(endpoint, params, page_no=1, page_size=10, key=key)
        text = json.dumps([page.url, page.message, page.records], ensure_ascii=False)
        assert "***" in page.url
        for secret in [*secrets.values(), "wrong+key/="]:
            assert all(form not in text for form in (secret, quote(secret, safe=""), quote_plus(secret)))
