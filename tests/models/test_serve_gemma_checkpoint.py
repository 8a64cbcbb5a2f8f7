"""Serving a Gemma 3 270M LoRA checkpoint: its adapter GGUF over the assembled Gemma GGUF, with ``HERMES_GEMMA``
(the ``kopa-hermes-gemma`` chat format that ``python -m models.llama_cpp`` registers), answering Korean with tools.

Real llama.cpp on loopback. The adapter is a seeded PEFT LoRA made over a model built from the GGUF's config (random
weights: the adapter's tensors only need the base's shapes), so no de-quantized base checkpoint is needed (~75 s).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bench.agents.step import read_calls
from models.gemma import gemma3_gguf
from models.llama_cpp import GEMMA_CHAT_FORMAT, LOCAL_DEFAULTS
from models.lora_gguf import ADAPTER_GGUF
from models.plan import plan_model_server
from models.server import ModelServer
from models.templates import GEMMA_TEMPLATE_NAME, HERMES_GEMMA, render_conversation

from .lora_checkpoints import random_lora

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning",
                                        "ignore::UserWarning")

TOOLS = [{"type": "function", "function": {
    "name": "subway_station_code", "description": "지하철역 이름으로 전철역 코드를 찾는다",
    "parameters": {"type": "object", "properties": {"station": {"type": "string"}}, "required": ["station"]}}}]
ASKED = [{"role": "system", "content": "서울 교통 도우미입니다."},
         {"role": "user", "content": "서울역의 전철역 코드는 무엇인가요?"}]
CALL = {"name": "subway_station_code", "arguments": json.dumps({"station": "서울역"}, ensure_ascii=False)}
RESULT = json.dumps({"STATION_CD": "0150", "LINE": "1호선"}, ensure_ascii=False)
ANSWERED = [*ASKED,
            {"role": "assistant", "content": "",
             "tool_calls": [{"id": "call_0", "type": "function", "function": CALL}]},
            {"role": "tool", "tool_call_id": "call_0", "content": RESULT}]


@pytest.fixture(scope="module")
def gguf(tmp_path_factory) -> Path:
    """The assembled Gemma GGUF, in the home ``tests/models/test_gemma.py`` uses (assembled once for all workers)."""
    from filelock import FileLock

    home = tmp_path_factory.getbasetemp().parent / "gemma-home"
    with FileLock(f"{home}.lock"):
        return gemma3_gguf(home / "models")


@pytest.fixture(scope="module")
def checkpoint(gguf, tmp_path_factory) -> Path:
    """``<run>/checkpoint`` as the trl engine writes it for ``--model gemma3``: a seeded LoRA (r 8, all projections,
    nonzero B weights) and ``kopa-checkpoint.json`` naming the Gemma GGUF and ``kopa-hermes-gemma``."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    folder = tmp_path_factory.mktemp("gemma-run") / "gemma-demo" / "checkpoint"
    config = AutoConfig.from_pretrained(gguf.parent, gguf_file=gguf.name)
    torch.manual_seed(0)
    random_lora(AutoModelForCausalLM.from_config(config, dtype=torch.float32), folder, r=8,
                info={"base": None, "base_gguf": str(gguf), "template": GEMMA_TEMPLATE_NAME})
    return folder


def _llama_tokens(gguf: Path, text: str) -> list[int]:
    """``text`` tokenized by llama.cpp with the GGUF's vocabulary (special tokens read, no BOS added), in a child
    process (llama-cpp-python leaves two /dev/null files open at import)."""
    code = ("import json, sys\nfrom llama_cpp import Llama\nmodel = Llama(model_path=sys.argv[1], vocab_only=True, "
            "verbose=False)\nprint(json.dumps(model.tokenize(sys.stdin.read().encode(), add_bos=False, "
            "special=True)))\nmodel.close()\n")
    done = subprocess.run([sys.executable, "-c", code, str(gguf)], input=text, capture_output=True, text=True,
                          check=True, timeout=120)
    return json.loads(done.stdout)


def test_the_plan_serves_the_adapter_over_the_gemma_gguf_with_the_gemma_template(checkpoint, gguf):
    plan = plan_model_server(str(checkpoint), port=8012, cuda=False, vllm=False)
    command = list(plan.command)
    assert (plan.backend, plan.served_name) == ("llama.cpp", "gemma-demo")
    assert command[1:3] == ["-m", "models.llama_cpp"]
    assert command[command.index("--model") + 1] == str(gguf)
    assert command[command.index("--lora_path") + 1] == str(checkpoint / ADAPTER_GGUF)
    assert command[command.index("--chat_format") + 1] == GEMMA_CHAT_FORMAT == "kopa-hermes-gemma"
    assert dict(plan.agent_defaults) == LOCAL_DEFAULTS


@pytest.fixture(scope="module")
def served(checkpoint) -> Iterator[ModelServer]:
    with ModelServer(plan_model_server(str(checkpoint), backend="llama.cpp", n_threads=2),
                     startup_timeout_s=120) as server:
        yield server


@pytest.mark.parametrize("messages", [ASKED, ANSWERED], ids=["asked", "with-a-tool-result"])
def test_the_gemma_checkpoint_answers_korean_with_tools_and_the_agent_reads_the_reply(served, gguf, messages):
    # 32 tokens take seconds on free cores; 300 s leaves room for a machine busy training (120 s ran out once)
    reply = httpx.post(f"{served.base_url}/chat/completions", timeout=300, json={
        "model": served.plan.served_name, "messages": messages, "tools": TOOLS, "max_tokens": 32,
        "temperature": 0.0})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["model"] == "gemma-demo" and body["usage"]["completion_tokens"] >= 1
    # the prompt the server evaluated is HERMES_GEMMA's rendering of the request, token for token: one <bos> (the
    # template's), the tools in the first user turn, the result as <tool_response>
    prompt = render_conversation(messages, TOOLS, add_generation_prompt=True, template=HERMES_GEMMA)
    assert prompt.startswith("<bos><start_of_turn>user\n서울 교통 도우미입니다.\n\n# Tools")
    assert ("<tool_response>" in prompt) == (messages is ANSWERED)
    assert body["usage"]["prompt_tokens"] == len(_llama_tokens(gguf, prompt))
    message = body["choices"][0]["message"]
    assert isinstance(message.get("content"), str)
    for call in read_calls(message, 1, TOOLS):  # whatever the untrained adapter wrote reads without an error
        assert call.id and (call.problem is None or isinstance(call.problem, str))
    assert served.healthy()  # Korean did not bring the server down
