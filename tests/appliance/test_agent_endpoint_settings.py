"""`kopa agent endpoint` reads the agent's model profile: kopa.toml [models.agent] and [episode], the environment
over the file, the command's options over both (``appliance.agent_cli.endpoint_model_config``, the configuration
the command serves with)."""

from __future__ import annotations

import pytest

from appliance.agent_cli import UNNAMED_MODEL, endpoint_model_config
from appliance.config import KopaSettings
from models.llama_cpp import LOCAL_DEFAULTS

KOPA_TOML = """
[models.agent]
base_url = "http://models.internal:8000/v1"
model = "qwen3.5-4b-grpo"
api_key = "file-key"
temperature = 0.3
max_tokens = 700
timeout_s = 90
extra_body = { chat_template_kwargs = { enable_thinking = false } }

[episode]
max_turns = 6
"""


@pytest.fixture
def kopa_toml(monkeypatch, tmp_path):
    for name in ("KOPA_MODELS__AGENT__MODEL", "KOPA_MODELS__AGENT__TEMPERATURE", "KOPA_EPISODE__MAX_TURNS"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "kopa.toml"
    path.write_text(KOPA_TOML, encoding="utf-8")
    monkeypatch.setenv("KOPA_CONFIG", str(path))
    return path


def test_models_agent_in_kopa_toml_reaches_the_endpoint(kopa_toml):
    config = endpoint_model_config(KopaSettings())
    endpoint = config.endpoint
    assert (config.base_url, config.model) == ("http://models.internal:8000/v1", "qwen3.5-4b-grpo")
    assert endpoint.api_key.get_secret_value() == "file-key" and "file-key" not in repr(config)
    assert (endpoint.temperature, endpoint.max_tokens, endpoint.timeout_s) == (0.3, 700, 90.0)
    assert endpoint.extra_body == {"chat_template_kwargs": {"enable_thinking": False}}
    assert config.limits.max_turns == 6 and config.limits.max_calls == 30  # [episode], the rest its defaults


def test_the_environment_wins_over_the_file_and_options_over_both(kopa_toml, monkeypatch):
    monkeypatch.setenv("KOPA_MODELS__AGENT__MODEL", "from-env")
    monkeypatch.setenv("KOPA_MODELS__AGENT__TEMPERATURE", "0.9")
    monkeypatch.setenv("KOPA_EPISODE__MAX_TURNS", "9")
    from_env = endpoint_model_config(KopaSettings())
    assert (from_env.model, from_env.endpoint.temperature, from_env.limits.max_turns) == ("from-env", 0.9, 9)
    assert from_env.endpoint.max_tokens == 700  # what the environment does not set still comes from the file

    from_options = endpoint_model_config(KopaSettings(), model_url="http://other:9/v1", model_name="from-option",
                                         max_turns=2, max_calls=4)
    assert (from_options.base_url, from_options.model) == ("http://other:9/v1", "from-option")
    assert (from_options.limits.max_turns, from_options.limits.max_calls) == (2, 4)
    assert from_options.endpoint.api_key.get_secret_value() == "file-key"


def test_a_started_servers_defaults_lose_to_written_settings_but_beat_the_profile_defaults(monkeypatch, tmp_path):
    path = tmp_path / "kopa.toml"
    path.write_text("[models.agent]\nmax_tokens = 100\n", encoding="utf-8")
    monkeypatch.setenv("KOPA_CONFIG", str(path))
    # the command starts a local server: its URL and name come as options, its needs as server defaults
    config = endpoint_model_config(KopaSettings(), model_url="http://127.0.0.1:5000/v1", model_name="smollm2",
                                   server_defaults={**LOCAL_DEFAULTS, "request_timeout_s": 75.0})
    assert config.endpoint.max_tokens == 100  # written in kopa.toml: not the server's 256
    assert config.endpoint.temperature == LOCAL_DEFAULTS["temperature"]  # not the profile's default 0.7
    assert config.endpoint.timeout_s == 75.0 and config.limits.max_tool_tokens == LOCAL_DEFAULTS["max_tool_tokens"]
    assert config.schema_prose is False and config.model == "smollm2"


def test_without_a_model_name_a_given_url_is_asked_for_the_default_model(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no kopa.toml: nothing configured
    monkeypatch.delenv("KOPA_CONFIG", raising=False)
    config = endpoint_model_config(KopaSettings(), model_url="http://127.0.0.1:5000/v1")
    assert config.model == UNNAMED_MODEL and config.endpoint.temperature == 0.7
    with pytest.raises(ValueError, match="KOPA_MODELS__AGENT__BASE_URL"):
        endpoint_model_config(KopaSettings())  # no URL anywhere: the message names the setting
