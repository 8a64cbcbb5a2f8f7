"""The parts of agent serving that need no model: the qwen3_coder parser, the model-server plan, process handling."""

from __future__ import annotations

import json
import sys

import pytest

from appliance.serving.model_server import (
    OFFLINE_ENV,
    ModelServer,
    ModelServerError,
    ServerPlan,
    plan_model_server,
    vllm_command,
)
from appliance.serving.tool_calls import (
    FALLBACK_PARSER,
    FallbackQwen3CoderParser,
    ParsedCall,
    ParsedTurn,
    choose_parser,
    vllm_importable,
)
from bench.agents.local import LOCAL_DEFAULTS, smollm2_gguf

TOOLS = [{"type": "function", "function": {"name": "list_things", "parameters": {"type": "object", "properties": {
    "NAME": {"type": "string"}, "pageNo": {"type": "integer"}, "ratio": {"type": "number"},
    "exact": {"type": "boolean"}, "filter": {"type": "object"}, "codes": {"type": ["array", "null"]}}}}}]

parse = FallbackQwen3CoderParser().parse


# ----------------------------------------------------------------------------------- the fallback parser


def test_calls_are_read_with_their_declared_types_and_the_text_before_them_kept():
    text = ("목록을 찾겠습니다.\n<tool_call>\n<function=list_things>\n<parameter=NAME>\n서울 역\n</parameter>\n"
            "<parameter=pageNo>\n2\n</parameter>\n<parameter=ratio>\n0.5\n</parameter>\n<parameter=exact>\nTrue\n"
            "</parameter>\n<parameter=filter>\n{\"a\": 1}\n</parameter>\n<parameter=codes>\n[\"01\", \"02\"]\n"
            "</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=evaluate_expression>\n"
            "<parameter=expression>\n1 + 2\n</parameter>\n</function>\n</tool_call>")
    assert parse(text, TOOLS) == ParsedTurn(content="목록을 찾겠습니다.", calls=(
        ParsedCall("list_things", {"NAME": "서울 역", "pageNo": 2, "ratio": 0.5, "exact": True, "filter": {"a": 1},
                                   "codes": ["01", "02"]}),
        ParsedCall("evaluate_expression", {"expression": "1 + 2"})))


def test_text_without_calls_is_the_answer_and_a_value_that_does_not_convert_stays_text():
    assert parse("ANSWER: {0228}", TOOLS) == ParsedTurn(content="ANSWER: {0228}")
    turn = parse("<tool_call><function=list_things><parameter=pageNo>two</parameter></function>", TOOLS)
    assert turn.calls == (ParsedCall("list_things", {"pageNo": "two"}),) and not turn.problems  # no </tool_call>


@pytest.mark.parametrize(("text", "problem"), [
    ("<tool_call>\n<function=list_things>\n<parameter=NAME>\nx\n</function>\n</tool_call>", "unclosed <parameter"),
    ("<tool_call>\n<function=list_things>\n<parameter=NAME>x</parameter>\n</tool_call>", "not closed by </function>"),
    ('<tool_call>\n{"name": "list_things", "arguments": {}}\n</tool_call>', "holds JSON"),
    ("<tool_call>\nlist_things(NAME=1)\n</tool_call>", "no <function=NAME>"),
    ("<tool_call>\n<function=list things!>\n</function>\n</tool_call>", "is not a tool name"),
    ("<function=list_things>\n</function>", "without <tool_call>"),
    ("<tool_call><function=list_things>oops<parameter=NAME>x</parameter></function></tool_call>", "stray text"),
])
def test_a_call_that_cannot_be_read_is_a_problem_naming_the_fault_and_the_format(text, problem):
    turn = parse("앞말 " + text, TOOLS)
    assert turn.calls == () and len(turn.problems) == 1
    assert problem in turn.problems[0] and "<tool_call>" in turn.problems[0]


def test_one_bad_call_does_not_lose_the_good_one_beside_it():
    text = ("<tool_call><function=list_things><parameter=NAME>a</parameter></function></tool_call>"
            "<tool_call><function=list_things><parameter=NAME>b</function></tool_call>")
    turn = parse(text, TOOLS)
    assert turn.calls == (ParsedCall("list_things", {"NAME": "a"}),)
    assert turn.problems[0].startswith("tool call 2 could not be read")


def test_the_fallback_is_chosen_without_vllm_or_without_a_tokenizer():
    assert choose_parser(None).name == FALLBACK_PARSER
    if not vllm_importable():  # this machine: vLLM is not installed (it is heavy), so the fallback parses
        assert choose_parser("/models/qwen3.5").name == FALLBACK_PARSER



def test_the_vllm_parity_cases_are_labelled_as_the_fallback_reads_them():
    """benchmarks/vllm_parser_parity.py compares vLLM's parser with ours on these; its labels must be right."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "vllm_parser_parity.py"
    spec = importlib.util.spec_from_file_location("vllm_parser_parity", path)
    parity = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(parity)
    for case, text, well_formed in parity.CASES:
        turn = FallbackQwen3CoderParser().parse(text, parity.TOOLS)
        assert bool(turn.problems) is not well_formed, case
        if well_formed:
            assert bool(turn.calls) is ("<tool_call>" in text), case
    calls = FallbackQwen3CoderParser().parse(parity.CASES[2][1], parity.TOOLS).calls
    assert calls[0].arguments == {"NAME": "x", "pageNo": 2, "ratio": 0.5, "exact": True, "filter": {"a": 1},
                                  "codes": ["01", "02"]}
    if not vllm_importable():  # the script says so and exits 2, rather than reporting a parity it did not check
        import subprocess

        done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and "vLLM is not importable" in done.stderr

# ----------------------------------------------------------------------------------- the model server plan


def test_vllm_is_planned_on_cuda_with_the_qwen3_coder_parsers_and_offline():
    plan = plan_model_server("/models/qwen3.5-4b-grpo", cuda=True, vllm=True, port=8001)
    assert plan.backend == "vllm" and plan.reason == "CUDA and vLLM are present"
    assert list(plan.command[1:]) == ["serve", "/models/qwen3.5-4b-grpo", "--host", "127.0.0.1", "--port", "8001",
                                      "--served-model-name", "kopa-agent-model", "--enable-auto-tool-choice",
                                      "--tool-call-parser", "qwen3_coder", "--reasoning-parser", "qwen3"]
    assert plan.command[0].endswith("vllm") and plan.env == OFFLINE_ENV and plan.env["HF_HUB_OFFLINE"] == "1"
    assert (plan.health_path, plan.base_url, plan.tokenizer) == ("/health", "http://127.0.0.1:8001/v1",
                                                                 "/models/qwen3.5-4b-grpo")
    assert plan.agent_defaults == {}  # vLLM reads tool messages and seeds: the paper's agent settings apply


def test_thinking_is_the_templates_default_unless_overridden():
    assert "--default-chat-template-kwargs" not in vllm_command("/m", host="h", port=1)
    cmd = vllm_command("/m", host="h", port=1, enable_thinking=False)
    assert json.loads(cmd[cmd.index("--default-chat-template-kwargs") + 1]) == {"enable_thinking": False}


def test_without_cuda_or_vllm_llama_cpp_serves_the_packaged_gguf():
    for cuda, vllm, reason in ((False, True, "no CUDA device"), (True, False, "vLLM is not installed")):
        plan = plan_model_server(None, cuda=cuda, vllm=vllm, port=8002)
        assert (plan.backend, plan.reason, plan.health_path) == ("llama.cpp", reason, "/v1/models")
        assert plan.command[1:4] == ("-m", "llama_cpp.server", "--model") and plan.command[4] == str(smollm2_gguf())
        assert plan.agent_defaults == LOCAL_DEFAULTS


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"model": "/models/qwen", "cuda": False, "vllm": False}, "not a GGUF file, and vLLM cannot run here"),
    ({"model": "/models/qwen", "backend": "vllm", "cuda": False, "vllm": True}, "no CUDA device"),
    ({"model": "/models/qwen", "backend": "vllm", "cuda": True, "vllm": False}, "pip install 'kopa-appliance[vllm]'"),
    ({"model": "/m.gguf", "backend": "vllm", "cuda": True, "vllm": True}, "needs a Hugging Face model folder"),
    ({"model": "/nowhere/m.gguf", "cuda": False, "vllm": False}, "no GGUF file at /nowhere/m.gguf"),
    ({"model": None, "backend": "tgi"}, "unknown backend 'tgi'"),
])
def test_a_plan_that_cannot_run_here_says_why(kwargs, message):
    with pytest.raises(ModelServerError, match=message.replace("[", r"\[").replace("(", r"\(")):
        plan_model_server(kwargs.pop("model"), port=8003, **kwargs)


# ----------------------------------------------------------------------------------- the process


def _plan(command: list[str], port: int, health: str = "/") -> ServerPlan:
    return ServerPlan("llama.cpp", tuple(command), {}, "127.0.0.1", port, "stub", health, reason="test")


def test_a_server_is_waited_for_and_stopped_cleanly(unused_tcp_port):
    server = ModelServer(_plan([sys.executable, "-m", "http.server", str(unused_tcp_port), "--bind", "127.0.0.1"],
                               unused_tcp_port), startup_timeout_s=30)
    with server:
        process = server.process
        assert server.healthy() and process is not None and process.poll() is None
    assert process.returncode == -15 and server.process is None and not server.healthy()  # SIGTERM, gone
    assert server.stop() is None  # twice is fine


def test_a_server_that_exits_before_it_is_healthy_is_an_error_with_its_log(unused_tcp_port):
    server = ModelServer(_plan([sys.executable, "-c", "import sys; print('bad model file'); sys.exit(3)"],
                               unused_tcp_port))
    with pytest.raises(ModelServerError, match=r"exited with code 3 before it was healthy:\nbad model file"):
        server.start()
    assert server.process is None


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
    assert plan["command"][plan["command"].index("--chat_format") + 1] == "chatml-function-calling"


def test_the_dockerfile_installs_offline_as_a_non_root_user_with_a_healthcheck():
    from pathlib import Path

    lines = [line.strip() for line in (Path(__file__).parents[2] / "Dockerfile").read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    install = next(line for line in lines if "pip install" in line and line.startswith("RUN"))
    assert install.startswith("RUN --network=none ") and "--no-index --find-links /wheelhouse" in install
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in ("root", "0")
    assert any(line.startswith("HEALTHCHECK") for line in lines) and "/healthz" in "".join(lines)
    assert lines[-1] == 'CMD ["kopa", "serve"]' and "ARG VARIANT=cpu" in lines
    assert any("kopa-appliance[vllm]" in line for line in lines)  # the GPU variant
