from urllib.parse import quote

import pytest

from sandbox import PLATFORM_IDS, KeyStore, default_keys


def test_every_platform_has_a_default_key_in_its_real_format():
    keys = default_keys()
    assert set(keys) == set(PLATFORM_IDS)
    assert len(keys["dart"]) == 40 and all(c in "0123456789abcdef" for c in keys["dart"])
    assert keys["ex"].isdigit() and len(keys["ex"]) == 10
    assert keys["krx"] == keys["kdic"] == keys["hrdk"]  # one data.go.kr portal key


def test_datago_key_differs_from_its_url_encoded_form():
    key = default_keys()["krx"]
    assert quote(key, safe="") != key


def test_keystore_accepts_only_configured_keys():
    store = KeyStore.from_mapping({"dart": ["a" * 40, "b" * 40]})
    assert store.accepts("dart", "b" * 40)
    assert not store.accepts("dart", "c" * 40)
    assert not store.accepts("krx", "a" * 40)


def test_unknown_platform_id_is_refused_with_the_valid_ids():
    with pytest.raises(ValueError, match="valid ids: ex, seoul"):
        KeyStore.from_mapping({"darts": "x"})


def test_keys_never_show_in_repr():
    store = KeyStore.default()
    assert all(k not in repr(store) for k in store.all_values())
