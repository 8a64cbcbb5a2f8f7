"""The model endpoints as one section of ``KopaSettings``: ``kopa.toml`` sets them, ``KOPA_*`` wins over it, and
the variables of earlier releases are refused with their new names."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from appliance.config import KopaSettings
from models.settings import ROLES, EndpointProfile, ModelSettings, retired_variables

TOML = """\
[models.judge]
base_url = "http://127.0.0.1:8000/v1"
model = "judge-from-file"
api_key = "sk-file-key"
max_retries = 4

[models.proposer]
base_url = "http://127.0.0.1:8001/v1"
model = "proposer-from-file"
response_format = "none"
"""


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch) -> Path:
    path = tmp_path / "kopa.toml"
    path.write_text(TOML, encoding="utf-8")
    monkeypatch.setenv("KOPA_CONFIG", str(path))
    return path


def test_every_role_has_a_profile_and_none_is_configured_by_default():
    models = KopaSettings().models
    assert set(ModelSettings.model_fields) == set(ROLES)
    assert [getattr(models, role).configured for role in ROLES] == [False] * len(ROLES)
    assert (models.judge.temperature, models.proposer.max_tokens, models.agent.timeout_s) == (0.0, 1024, 600.0)


def test_kopa_toml_sets_the_profiles(config_file):
    models = KopaSettings().models
    assert (models.judge.base_url, models.judge.model, models.judge.max_retries) == (
        "http://127.0.0.1:8000/v1", "judge-from-file", 4)
    assert models.judge.api_key.get_secret_value() == "sk-file-key"
    assert (models.proposer.model, models.proposer.response_format) == ("proposer-from-file", "none")
    assert not models.writer.configured


def test_the_environment_wins_over_the_file(config_file, monkeypatch):
    monkeypatch.setenv("KOPA_MODELS__JUDGE__MODEL", "judge-from-env")
    monkeypatch.setenv("KOPA_MODELS__WRITER__BASE_URL", "http://127.0.0.1:8002/v1")
    monkeypatch.setenv("KOPA_MODELS__WRITER__MODEL", "writer-from-env")
    models = KopaSettings().models
    assert (models.judge.model, models.judge.base_url) == ("judge-from-env", "http://127.0.0.1:8000/v1")
    assert (models.writer.configured, models.writer.model) == (True, "writer-from-env")


def test_keys_stay_out_of_reprs(config_file):
    settings = KopaSettings()
    assert "sk-file-key" not in repr(settings) and "sk-file-key" not in str(settings.models.judge)


def test_a_bad_value_names_its_key(monkeypatch):
    monkeypatch.setenv("KOPA_MODELS__AGENT__TIMEOUT_S", "-1")
    with pytest.raises(ValidationError, match=r"models\.agent\.timeout_s"):
        KopaSettings()


@pytest.mark.parametrize(("old", "new"), [
    ("KOPA_AGENT_BASE_URL", "KOPA_MODELS__AGENT__BASE_URL"),
    ("KOPA_JUDGE_ENABLED", "KOPA_MODELS__JUDGE__BASE_URL is set"),
    ("KOPA_EDGE__LLM_RETRIES", "KOPA_MODELS__PROPOSER__MAX_RETRIES"),
    ("KOPA_EDGE__WRITER_MODEL", "KOPA_MODELS__WRITER__MODEL"),
    ("KOPA_EDGE__JUDGE_API_KEY", "KOPA_MODELS__JUDGE__API_KEY"),
])
def test_a_variable_of_an_earlier_release_is_refused_with_its_new_name(monkeypatch, old, new):
    monkeypatch.setenv(old, "x")
    with pytest.raises(ValidationError, match=new):
        KopaSettings()


def test_phase_a_variables_are_not_retired():
    assert retired_variables({"KOPA_EDGE__ROUNDS": "5", "KOPA_EDGE__SEED": "1", "KOPA_HOME": "/x"}) == []


def test_required_names_every_missing_setting():
    with pytest.raises(ValueError, match="needs base_url and model: set KOPA_MODELS__AGENT__BASE_URL"):
        EndpointProfile().required("agent")
    assert EndpointProfile(base_url="http://h/v1", model="m").required("agent").model == "m"


def test_kopa_names_a_bad_or_retired_setting_in_one_plain_line_and_exits_2():
    import os
    import subprocess
    import sys

    for variable, value, expected in [
        ("KOPA_JUDGE_ENABLED", "1", "error: settings: settings of an earlier release are set; rename them:\n"
                                    "  KOPA_JUDGE_ENABLED: the judge is used when KOPA_MODELS__JUDGE__BASE_URL is set"),
        ("KOPA_MODELS__AGENT__TIMEOUT_S", "-1", "error: models.agent.timeout_s: Input should be greater than 0"),
    ]:
        env = {**os.environ, variable: value, "COLUMNS": "200"}
        done = subprocess.run([sys.executable, "-m", "appliance", "bench", "list"], env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip() == expected
