import pytest
from pydantic import ValidationError

from appliance.config import KopaSettings


def test_defaults_need_no_configuration(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    settings = KopaSettings()
    assert settings.sandbox.world == "v1" and settings.sandbox.faults == "none"
    assert settings.metadb_url.endswith("/.kopa/kopa.db")


def test_environment_overrides_nested_sections(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KOPA_SANDBOX__PORT", "9123")
    monkeypatch.setenv("KOPA_METADB__URL", "sqlite:///" + str(tmp_path / "m.db"))
    settings = KopaSettings()
    assert settings.sandbox.port == 9123
    assert settings.metadb_url == "sqlite:///" + str(tmp_path / "m.db")


def test_toml_file_is_read(monkeypatch, tmp_path):
    config = tmp_path / "kopa.toml"
    config.write_text('home = "/srv/kopa"\n[sandbox]\nworld = "v2"\n[sandbox.keys]\ndart = "' + "d" * 40 + '"\n')
    monkeypatch.setenv("KOPA_CONFIG", str(config))
    settings = KopaSettings()
    assert str(settings.home) == "/srv/kopa" and settings.sandbox.world == "v2"
    assert settings.sandbox.keys["dart"].get_secret_value() == "d" * 40


def test_a_missing_config_file_named_explicitly_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setenv("KOPA_CONFIG", str(tmp_path / "nope.toml"))
    with pytest.raises(FileNotFoundError, match="nope.toml"):
        KopaSettings()


def test_bad_values_name_the_setting(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KOPA_SANDBOX__WORLD", "v9")
    with pytest.raises(ValidationError, match="unknown world version 'v9'"):
        KopaSettings()


def test_keys_are_masked_in_repr(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KOPA_SANDBOX__KEYS__DART", "secretsecret")
    settings = KopaSettings()
    assert "secretsecret" not in repr(settings) and "secretsecret" not in str(settings.model_dump())
