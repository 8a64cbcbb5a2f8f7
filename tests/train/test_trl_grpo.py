"""GRPO with the single-machine ``trl`` engine: one real TRL step on the CPU whose rollouts are replayed bench episodes.

The model is a tiny random SmolLM2 (2 layers, hidden 64) with the real SmolLM2 tokenizer and template of the base
checkpoint. A random model never calls a tool, so each group mixes one golden rollout (the ``guide``: the golden
trajectory, trained on as if the model wrote it) with one of the model's own: the rewards differ, the advantage is
not zero, and the step moves the adapter.
"""

from __future__ import annotations

import json
import math
import shutil
import time

import pyarrow.parquet as pq
import pytest

from bench.limits import EpisodeLimits
from train.policies import GoldenPolicy, runtime_context_from_prompt

from .conftest import CASSETTES

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning", "ignore::UserWarning")

TASK = "fin-001"  # 3 steps (one of two parallel calls), a number answer: 4 turns when golden
# tool results capped short: the golden policy does not read them, and the step's sequences stay CPU-sized
LIMITS = EpisodeLimits(max_turns=4, max_tool_tokens=64)


@pytest.fixture(scope="module")
def tiny_smollm2(tmp_path_factory):
    """A 2-layer SmolLM2 (random weights, seeded) beside the base checkpoint's tokenizer."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    from models.checkpoints import base_checkpoint

    base = base_checkpoint(tmp_path_factory.mktemp("home"))
    config = AutoConfig.from_pretrained(base)
    config.update({"num_hidden_layers": 2, "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
                   "num_key_value_heads": 2, "head_dim": 16})
    torch.manual_seed(0)
    out = tmp_path_factory.mktemp("models") / "tiny-smollm2"
    AutoModelForCausalLM.from_config(config).save_pretrained(out)
    AutoTokenizer.from_pretrained(base).save_pretrained(out)
    shutil.copy(base / "kopa-checkpoint.json", out / "kopa-checkpoint.json")
    return out


@pytest.fixture(scope="module")
def one_row(edge_dataset, tmp_path_factory):
    """The EDGE dataset cut to TASK's row (items.jsonl as it is)."""
    table = pq.read_table(edge_dataset / "train.parquet")
    keep = [i for i, info in enumerate(table.column("extra_info").to_pylist()) if json.loads(info)["item_id"] == TASK]
    folder = tmp_path_factory.mktemp("one-row")
    pq.write_table(table.take(keep), folder / "train.parquet")
    shutil.copy(edge_dataset / "items.jsonl", folder / "items.jsonl")
    return folder


def one_step(one_row, tiny_smollm2, home):
    from train.engines.trl.grpo import run_grpo

    lines, box = [], []
    run = run_grpo(one_row, home=home, model=tiny_smollm2, max_steps=1, num_generations=2, seed=0,
                   learning_rate=1e-3, limits=LIMITS, max_new_tokens=16, max_response_tokens=4096,
                   cassettes=CASSETTES, on_step=lines.append, rollouts_out=box,
                   guide=lambda task, i: GoldenPolicy(task) if i == 0 else None)
    return run, lines, box[0]


def test_one_grpo_step_on_replayed_episodes(one_row, tiny_smollm2, tmp_path):
    """One step (the run is too slow on 2 cores to split over tests that xdist would each run it for)."""
    from safetensors.torch import load_file

    from train.reward import score_record

    started = time.monotonic()
    run, lines, rollouts = one_step(one_row, tiny_smollm2, tmp_path)
    wall = time.monotonic() - started
    metrics = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert metrics == lines and len(metrics) == 1
    line = metrics[0]
    assert line["step"] == 1 and line["rollouts"] == 2 and math.isfinite(line["loss"]) and line["step_time_s"] > 0
    assert line["reward_mean"] == 0.5 and line["pass_rate"] == 0.5  # the golden rollout passed, the model's failed
    # the adapter moved: LoRA's B starts at zero, and a group with a reward spread has a gradient
    weights = load_file(run / "checkpoint" / "adapter_model.safetensors")
    b = [w for name, w in weights.items() if "lora_B" in name]
    assert len(b) == 2 * 7 and any(float(w.abs().max()) > 0 for w in b)
    info = json.loads((run / "checkpoint" / "kopa-checkpoint.json").read_text())
    assert info == {"kind": "lora", "base": str(tiny_smollm2.resolve()), "base_gguf": info["base_gguf"],
                    "template": "kopa-hermes-chatml", "engine": "trl", "parent": None}
    assert info["base_gguf"].endswith(".gguf")
    assert (run / "checkpoint" / "tokenizer_config.json").is_file()
    assert line["step_time_s"] < wall

    # the completion TRL trains on masks exactly the tool responses
    tokenizer = rollouts.tokenizer
    golden, own = rollouts.played
    # TRL counted only the model-written tokens (its completion lengths come from our env_mask)
    assert lines[0]["completion_tokens_mean"] == sum(sum(p.trace.response_mask) for p in rollouts.played) / 2
    assert lines[0]["completion_tokens_mean"] < sum(len(p.trace.response_ids) for p in rollouts.played) / 2
    ids, mask = golden.trace.response_ids, golden.trace.response_mask
    assert len(ids) == len(mask) and golden.rollout.outcome.passed
    tool_messages = [m for m in golden.rollout.messages if m["role"] == "tool"]
    context = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m == 0])
    written = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m == 1])
    assert context.count("<tool_response>") == len(tool_messages) == 4 and "<tool_response>" not in written
    assert all(m["content"] in context for m in tool_messages)
    assert written.count("<tool_call>") == 4 and "<tool_call>" not in context
    assert written.endswith(str(golden.rollout.outcome.answer) + "<|im_end|>")
    # the model's own rollout: a random model writes no call, its whole response is its own (one turn)
    assert own.rollout.turns == 1 and set(own.trace.response_mask) == {1} and not own.rollout.outcome.passed

    # each rollout's reward is the bench's verdict on its trajectory, and TRL's advantage used it
    for p in rollouts.played:
        assert p.reward == float(p.rollout.outcome.passed) == score_record(p.rollout.record)["score"]
    assert lines[0]["reward_mean"] == sum(p.reward for p in rollouts.played) / 2  # TRL's own log: what it used


def test_a_replay_miss_in_a_rollout_is_reward_zero_not_an_exception(one_row, tiny_smollm2, tmp_path):
    from transformers import AutoTokenizer

    from train.engines.trl.grpo import EpisodeRollouts, bench_score
    from train.tasks import TaskIndex

    rows = pq.read_table(one_row / "train.parquet").to_pylist()

    async def miss(messages, tools):  # a well-formed call with the episode's key that the cassette never saw
        if any(m["role"] == "tool" for m in messages):
            return "모름"
        key = runtime_context_from_prompt(messages[0]["content"])["dart_api_key"]
        return ('<tool_call>\n{"name": "get_dart_convertible_bond_issuance_decision", "arguments": {"corp_code": '
                f'"00000001", "bgn_de": "20200101", "end_de": "20200131", "KEY": "{key}"}}}}\n</tool_call>')
    rollouts = EpisodeRollouts(rows=rows, index=TaskIndex.from_files([one_row / "items.jsonl"]),
                               tokenizer=AutoTokenizer.from_pretrained(tiny_smollm2), cassettes=CASSETTES,
                               home=tmp_path, limits=LIMITS, guide=lambda task, i: miss)
    try:
        played = rollouts.run([rows[0]["prompt"]], model=None)
    finally:
        rollouts.close()
    (p,) = played
    assert [c["tool"] for c in p.rollout.record["calls"]] == ["get_dart_convertible_bond_issuance_decision"]
    tool_message = next(m for m in p.rollout.messages if m["role"] == "tool")
    assert "replay_miss" in tool_message["content"]
    assert p.reward == 0.0 and bench_score([None], kopa_episode=[p.rollout.record]) == [0.0]
    assert p.trace.response_mask.count(0) > 0  # the miss reached the model as a tool response, masked
