"""The parts of agent serving that need no model: the CLI, the image (the model-server plan and process:
tests/models/test_server.py; the tool-call readers: tests/models/test_toolcalls.py)."""

from __future__ import annotations

import json

# ----------------------------------------------------------------------------------- the CLI and the image


def test_kopa_agent_serve_prints_its_plan_without_starting_anything():
    from typer.testing import CliRunner

    from appliance.cli import app

    result = CliRunner().invoke(app, ["agent", "serve", "--backend", "llama.cpp", "--port", "8123",
                                      "--print-command"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.output)
    assert (plan["backend"], plan["reason"], plan["base_url"]) == ("llama.cpp", "asked for",
                                                                  "http://127.0.0.1:8123/v1")
    assert plan["command"][plan["command"].index("--chat_format") + 1] == "kopa-hermes-chatml"


def test_the_dockerfile_installs_offline_as_a_non_root_user_with_a_healthcheck():
    import re
    from pathlib import Path

    text = (Path(__file__).parents[2] / "Dockerfile").read_text()
    text = re.sub(r"\\\n\s*", " ", text)  # one line per instruction: continuation lines joined
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    install = next(line for line in lines if "pip install" in line and line.startswith("RUN"))
    assert install.startswith("RUN --network=none ") and "--no-index --find-links /wheelhouse" in install
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in ("root", "0")
    assert any(line.startswith("HEALTHCHECK") for line in lines) and "/healthz" in "".join(lines)
    assert lines[-1] == 'CMD ["kopa", "serve"]' and "ARG VARIANT=cpu" in lines
    assert any("kopa-appliance[vllm]" in line for line in lines)  # the GPU variant
