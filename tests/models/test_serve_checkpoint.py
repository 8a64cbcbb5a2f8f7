"""Serving what the trl engine trains: a LoRA checkpoint as an adapter GGUF over the packaged SmolLM2 GGUF.

Everything is real: the base checkpoint made from the packaged GGUF (``models.checkpoints.base_checkpoint``), a
PEFT LoRA adapter with seeded nonzero B weights saved by peft, llama.cpp loading base + adapter, and the server
planned from the checkpoint folder answering on loopback.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from typer.testing import CliRunner

from appliance.agent_cli import agent_app
from models.errors import ModelServerError
from models.llama_cpp import HERMES_CHAT_FORMAT, LOCAL_DEFAULTS, smollm2_gguf
from models.lora_gguf import ADAPTER_GGUF, adapter_to_gguf, read_checkpoint
from models.plan import CHECKPOINT_DEFAULTS, check_model_path, plan_model_server
from models.server import ModelServer
from models.templates import render_conversation

from .lora_checkpoints import TARGETS, random_lora

PROMPT = "<|im_start|>user\n서울역의 전철역 코드는 무엇인가요?<|im_end|>\n<|im_start|>assistant\n"
TOOLS = [{"type": "function", "function": {
    "name": "subway_station_code", "description": "지하철역 이름으로 전철역 코드를 찾는다",
    "parameters": {"type": "object", "properties": {"station": {"type": "string"}}, "required": ["station"]}}}]


@pytest.fixture(scope="session")
def checkpoint(tmp_path_factory) -> Path:
    """``<run>/checkpoint`` as the trl engine writes it: a seeded LoRA (r 16, alpha 32, all projections) whose B
    weights are nonzero, so that the adapter changes the outputs. Made once for all xdist workers (~25 s)."""
    from filelock import FileLock

    home = tmp_path_factory.getbasetemp().parent / "serve-checkpoint"
    folder = home / "runs" / "sft-demo" / "checkpoint"
    with FileLock(f"{home}.lock"):
        if not (folder / "kopa-checkpoint.json").is_file():
            _make_checkpoint(home, folder)
    return folder


def _make_checkpoint(home: Path, folder: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from models.checkpoints import base_checkpoint

    base = base_checkpoint(home)
    folder.mkdir(parents=True, exist_ok=True)
    AutoTokenizer.from_pretrained(base).save_pretrained(folder)
    random_lora(AutoModelForCausalLM.from_pretrained(base), folder, r=16,
                info={"base": str(base), "base_gguf": str(smollm2_gguf()), "template": "kopa-hermes-chatml"})


def _copy(checkpoint: Path, tmp_path: Path, **info) -> Path:
    """A copy of the checkpoint with ``info`` changed in its kopa-checkpoint.json (None removes a key)."""
    folder = tmp_path / "run" / "checkpoint"
    shutil.copytree(checkpoint, folder, ignore=shutil.ignore_patterns(ADAPTER_GGUF))
    data = json.loads((folder / "kopa-checkpoint.json").read_text())
    data.update(info)
    (folder / "kopa-checkpoint.json").write_text(json.dumps(data))
    return folder


# ----------------------------------------------------------------------------------- the adapter GGUF


def test_the_adapter_gguf_moves_llama_cpp_towards_the_hf_lora_model(checkpoint, tmp_path):
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    adapter = adapter_to_gguf(checkpoint)
    assert adapter == checkpoint / ADAPTER_GGUF and adapter.stat().st_size > 1_000_000

    def llama_logits(lora: Path | None) -> tuple[list[int], np.ndarray]:
        # in a child process: llama-cpp-python opens two /dev/null files at import and never closes them, which a
        # test worker would report at exit
        out = tmp_path / ("lora.npz" if lora else "base.npz")
        code = ("import sys, numpy as np\nfrom llama_cpp import Llama\n"
                "model = Llama(model_path=sys.argv[1], lora_path=sys.argv[2] or None, logits_all=True, n_ctx=256, "
                "n_threads=2, seed=0, verbose=False)\n"
                "tokens = model.tokenize(sys.argv[3].encode(), add_bos=False, special=True)\nmodel.eval(tokens)\n"
                "np.savez(sys.argv[4], tokens=np.array(tokens), logits=np.array(model.scores[:len(tokens)]))\n"
                "model.close()\n")
        subprocess.run([sys.executable, "-c", code, str(smollm2_gguf()), str(lora or ""), PROMPT, str(out)],
                       check=True, timeout=300)
        saved = np.load(out)
        return [int(t) for t in saved["tokens"]], saved["logits"]

    tokens, base = llama_logits(None)
    _, lora = llama_logits(adapter)
    info = json.loads((checkpoint / "kopa-checkpoint.json").read_text())
    hf = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(info["base"]), checkpoint).eval()
    with torch.no_grad():
        want = hf(torch.tensor([tokens])).logits[0].numpy()

    def agreement(got: np.ndarray) -> tuple[float, float, float]:
        corr = float(np.mean([np.corrcoef(a, b)[0, 1] for a, b in zip(got, want, strict=True)]))
        return corr, float(np.mean(got.argmax(-1) == want.argmax(-1))), float(np.abs(got - want).mean())

    (corr_lora, top_lora, err_lora), (corr_base, top_base, err_base) = agreement(lora), agreement(base)
    assert np.abs(lora - base).mean() > 0.2  # the adapter changes what llama.cpp computes
    # measured: correlation 0.9988 vs 0.9917, argmax 92 % vs 81 %, mean |Δ| 0.22 vs 0.54 (Q4_1 noise remains);
    # with lora_b of attn_q/attn_k left unpermuted it was 0.9984, 91 %, 0.28
    assert corr_lora > corr_base and top_lora > top_base
    assert err_lora < 0.47 * err_base and corr_lora > 0.995  # 0.41; without the Q/K permutation 0.52


def test_the_adapter_gguf_is_cached_and_rewritten_whole_when_the_adapter_changes(checkpoint, tmp_path):
    import gguf

    folder = _copy(checkpoint, tmp_path)
    first = adapter_to_gguf(folder)
    stamp = first.stat().st_mtime_ns
    assert adapter_to_gguf(folder).stat().st_mtime_ns == stamp  # reused
    reader = gguf.GGUFReader(first)
    assert reader.fields["general.type"].contents() == "adapter"
    assert reader.fields["adapter.type"].contents() == "lora"
    assert reader.fields["adapter.lora.alpha"].contents() == 32.0
    assert reader.fields["general.architecture"].contents() == "llama"
    shapes = {t.name: tuple(int(n) for n in t.shape) for t in reader.tensors}
    assert len(shapes) == 30 * len(TARGETS) * 2
    assert shapes["blk.0.attn_q.weight.lora_a"] == (576, 16) and shapes["blk.0.attn_q.weight.lora_b"] == (16, 576)
    assert shapes["blk.29.ffn_down.weight.lora_a"] == (1536, 16)
    (folder / "adapter_model.safetensors").touch()
    assert adapter_to_gguf(folder).stat().st_mtime_ns > stamp
    assert sorted(p.name for p in folder.iterdir() if "partial" in p.name) == []  # no half file left


def _unknown_module(folder: Path) -> None:
    from safetensors.numpy import save_file

    save_file({"base_model.model.model.layers.0.self_attn.rotary_emb.lora_A.weight": np.zeros((2, 4), np.float32),
               "base_model.model.model.layers.0.self_attn.rotary_emb.lora_B.weight": np.zeros((4, 2), np.float32)},
              str(folder / "adapter_model.safetensors"))


@pytest.mark.parametrize(("change", "message"), [
    ({"kind": "full"}, "is a full checkpoint, not a LoRA adapter"),
    ({"base_gguf": None}, "names no base GGUF"),
    ({"base_gguf": "/nowhere/base.gguf"}, "the base GGUF of .* is missing: /nowhere/base.gguf"),
    (_unknown_module, "unknown target module in the adapter: model.layers.0.self_attn.rotary_emb"),
])
def test_a_broken_checkpoint_is_a_one_line_error(checkpoint, tmp_path, change, message):
    folder = _copy(checkpoint, tmp_path, **(change if isinstance(change, dict) else {}))
    if callable(change):
        change(folder)
    with pytest.raises(ModelServerError, match=message) as caught:
        adapter_to_gguf(folder)
    assert "\n" not in str(caught.value)
    assert not (folder / ADAPTER_GGUF).exists()


def test_a_folder_that_is_no_checkpoint_is_a_one_line_error(tmp_path):
    with pytest.raises(ModelServerError, match=r"is not a checkpoint folder \(no kopa-checkpoint.json\)"):
        read_checkpoint(tmp_path)


# ----------------------------------------------------------------------------------- the plan and the server


def test_the_plan_serves_the_adapter_over_the_base_gguf_with_the_hermes_template(checkpoint):
    plan = plan_model_server(str(checkpoint), cuda=True, vllm=True, port=8010)  # vLLM refuses a LoRA folder
    command = list(plan.command)
    assert (plan.backend, plan.served_name, plan.reason) == (
        "llama.cpp", "sft-demo", f"{checkpoint} is a LoRA checkpoint, served over its base GGUF")
    assert command[1:3] == ["-m", "models.llama_cpp"]
    assert command[command.index("--model") + 1] == str(smollm2_gguf())
    assert command[command.index("--lora_path") + 1] == str(checkpoint / ADAPTER_GGUF)
    assert command[command.index("--chat_format") + 1] == HERMES_CHAT_FORMAT
    assert dict(plan.agent_defaults) == CHECKPOINT_DEFAULTS == LOCAL_DEFAULTS  # served as the packaged model is
    assert plan_model_server(str(checkpoint), backend="llama.cpp", port=8010).reason == "asked for"


def test_a_checkpoint_trained_with_another_template_is_not_served_with_this_one(checkpoint, tmp_path):
    folder = _copy(checkpoint, tmp_path, template="qwen3-chatml")
    with pytest.raises(ModelServerError) as caught:
        plan_model_server(str(folder), port=8011)
    assert str(caught.value) == (f"{folder} was trained with the chat template 'qwen3-chatml', which llama.cpp does "
                                 "not serve; it serves 'kopa-hermes-chatml', 'kopa-hermes-gemma'")


@pytest.fixture(scope="module")
def served(checkpoint) -> Iterator[ModelServer]:
    with ModelServer(plan_model_server(str(checkpoint), backend="llama.cpp", n_threads=2),
                     startup_timeout_s=120) as server:
        yield server


def test_the_checkpoint_server_answers_korean_with_tools_rendered_by_the_hermes_template(served, checkpoint):
    from transformers import AutoTokenizer

    messages = [{"role": "user", "content": "서울역 코드?"}]
    reply = httpx.post(f"{served.base_url}/chat/completions", timeout=120, json={
        "model": served.plan.served_name, "messages": messages, "tools": TOOLS, "max_tokens": 24,
        "temperature": 0.0})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["model"] == "sft-demo" and body["choices"][0]["message"]["content"]
    # the prompt the server evaluated is the hermes rendering of the request, tools included, token for token
    prompt = render_conversation(messages, TOOLS, add_generation_prompt=True)
    assert "<tools>" in prompt and "subway_station_code" in prompt
    tokens = AutoTokenizer.from_pretrained(checkpoint)(prompt, add_special_tokens=False)["input_ids"]
    assert body["usage"]["prompt_tokens"] == len(tokens)
    assert served.agent_settings()["request_timeout_s"] >= 60


async def test_the_agent_endpoint_over_the_checkpoint_runs_a_tool_through_the_gateway(served):
    from appliance.serving.service import serve_app
    from mcp_gateway.gateway import open_gateway
    from tests.appliance.test_agent_endpoint import OUTCOMES, TOOL, client, endpoint_app, extension
    from tests.conftest import TEST_DATA_DIR, sandbox_upstream

    gateway = open_gateway(sandbox=sandbox_upstream(), home=TEST_DATA_DIR, profile="chat")
    try:
        app = endpoint_app(served.base_url, gateway, model=served.plan.served_name, **served.agent_settings())
        async with serve_app(app) as origin, client(origin) as oai:
            # the tool is forced (the random adapter has learnt nothing): one model turn is the budget
            reply = await oai.chat.completions.create(
                model="kopa-agent", messages=[{"role": "user", "content": "서울역의 전철역코드를 찾아 주세요."}],
                tools=[{"type": "function", "function": {"name": TOOL, "parameters": {}}}],
                tool_choice={"type": "function", "function": {"name": TOOL}}, max_tokens=32,
                extra_body={"kopa": {"max_turns": 1}})
    finally:
        await gateway.aclose()
    kopa = extension(reply.choices[0].message)
    steps = kopa["trajectory"]
    assert kopa["stop_reason"] == "budget" and [t["tool_calls"] for t in kopa["turns"]] == [1]
    assert steps[0]["tool"] == TOOL and steps[0]["outcome"] in OUTCOMES
    assert steps[0]["correlation_id"] and steps[0]["outcome"] != "malformed_tool_call"  # it reached the gateway


# ----------------------------------------------------------------------------------- the command line


def test_kopa_agent_serve_plans_the_checkpoint(checkpoint):
    result = CliRunner().invoke(agent_app, ["serve", "--model", str(checkpoint), "--print-command"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert plan["served_name"] == "sft-demo" and "--lora_path" in plan["command"]


@pytest.mark.parametrize(("make", "message"), [
    (lambda tmp: tmp / "nowhere", "no model at .*nowhere: give a .gguf file"),
    (lambda tmp: (tmp / "notes.txt").write_text("x") and tmp / "notes.txt", "notes.txt is a file but not a .gguf"),
    (lambda tmp: tmp, "is a folder without config.json or kopa-checkpoint.json"),
])
def test_kopa_agent_serve_rejects_what_is_no_model_in_one_line(tmp_path, make, message):
    path = make(tmp_path)
    with pytest.raises(ModelServerError, match=message):
        check_model_path(str(path))
    for command in ("serve", "endpoint"):
        result = CliRunner().invoke(agent_app, [command, "--model", str(path)])
        # appliance.cli.main prints a RuntimeError as one `error:` line and exits 2
        assert isinstance(result.exception, ModelServerError) and isinstance(result.exception, RuntimeError)
        assert "\n" not in str(result.exception)


def test_kopa_exits_2_with_one_error_line_for_a_path_that_is_no_model(tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "appliance", "agent", "serve", "--model", str(tmp_path / "nowhere"),
                           "--print-command"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [f"error: no model at {tmp_path / 'nowhere'}: give a .gguf file, a "
                                                "Hugging Face model folder (config.json) or a trained checkpoint "
                                                "folder (kopa-checkpoint.json)"]
