"""The token codecs: a chat template's (``train.engines.trl.tokens``) keeps the episode as the ids the template would
render, mask 1 exactly on what the model wrote; it and verl's Continuous Token builder render the same prompt ids."""

from __future__ import annotations

import asyncio
import json
import warnings

import pyarrow.parquet as pq
import pytest

from bench.agents.step import Generation, TokenTrace
from models.toolcalls import HERMES, read_text, render_assistant
from train.engines.trl.tokens import ChatTemplateTokens
from train.episode import run_rollout
from train.policies import GoldenPolicy

from .conftest import CASSETTES, bench_tasks, replay_gateway

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")


@pytest.fixture(scope="module")
def smol_tokenizer():
    """SmolLM2's tokenizer as the base checkpoint fixes it (eos <|im_end|>, HERMES_CHATML), read from the GGUF."""
    from transformers import AutoTokenizer

    from models.checkpoints import fix_tokenizer
    from models.llama_cpp import smollm2_gguf

    gguf = smollm2_gguf()
    return fix_tokenizer(AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name))


class CanonicalModel:
    """A scripted 'model': the golden trajectory, each turn written as the template renders it (hermes calls),
    tokenized and ended with the end-of-turn token, as a generation with its ids."""

    def __init__(self, tokenizer, task):
        self.tokenizer, self.golden = tokenizer, GoldenPolicy(task)
        self.tools, self.texts = None, []

    async def __call__(self, messages, tools):
        self.tools = tools
        turn = read_text(await self.golden(messages, tools), tools)  # qwen3_coder -> calls, re-written as hermes
        text = render_assistant(turn.content, turn.calls, text_format=HERMES.name)
        self.texts.append(text + "<|im_end|>")
        ids = self.tokenizer.encode(text + "<|im_end|>", add_special_tokens=False)
        return Generation(text + "<|im_end|>", ids, [-0.5] * len(ids))


def play(task_id, policy, codec, home):
    async def run():
        task = bench_tasks()[task_id]
        gateway = replay_gateway(home, task.bundle)
        trace = TokenTrace(codec)
        try:
            return await run_rollout(task, policy, gateway, tokens=trace), trace
        finally:
            await gateway.aclose()

    return asyncio.run(run())


def spans(ids, mask):
    """Runs of equal mask: [(mask value, ids)]."""
    out = []
    for token, m in zip(ids, mask, strict=True):
        if out and out[-1][0] == m:
            out[-1][1].append(token)
        else:
            out.append((m, [token]))
    return out


@pytest.mark.parametrize("task_id", ["trf-001", "fin-019"])
def test_a_template_canonical_model_gives_exactly_the_templates_ids(tmp_path, smol_tokenizer, task_id):
    codec = ChatTemplateTokens(smol_tokenizer)
    model = CanonicalModel(smol_tokenizer, bench_tasks()[task_id])
    rollout, trace = play(task_id, model, codec, tmp_path)
    assert rollout.outcome.passed, rollout.record["error"]
    task = bench_tasks()[task_id]
    assert trace.generations == task.n_steps + 1

    # no drift: the ids kept turn by turn are the whole conversation rendered at once (up to the last end-of-turn)
    whole = codec.render(rollout.messages, model.tools, add_generation_prompt=False)
    assert whole.endswith("<|im_end|>\n")
    assert trace.ids == smol_tokenizer.encode(whole[:-1], add_special_tokens=False)
    assert trace.prompt_ids == smol_tokenizer.encode(codec.render(rollout.messages[:2], model.tools,
                                                                  add_generation_prompt=True), add_special_tokens=False)

    # mask 1 exactly on the generations; mask 0 on the tool results and the template's text around them
    runs = spans(trace.response_ids, trace.response_mask)
    written = [smol_tokenizer.decode(ids) for m, ids in runs if m == 1]
    context = [smol_tokenizer.decode(ids) for m, ids in runs if m == 0]
    assert written == model.texts
    tool_messages = [m for m in rollout.messages if m["role"] == "tool"]
    assert len(tool_messages) == len(task.golden_actions) == sum(c.count("<tool_response>") for c in context)
    assert all("<tool_response>" not in w and "<tool_call>" in w for w in written[:-1])
    assert all(c.startswith("\n<|im_start|>user\n<tool_response>\n") for c in context)
    assert all(c.endswith("<|im_end|>\n<|im_start|>assistant\n") for c in context)
    assert "".join(context).count("</tool_response>") == len(tool_messages)
    assert all(m["content"] in "".join(context) for m in tool_messages)
    # log-probs follow the mask: the generations' own, zeros for the context
    assert [lp for lp, m in zip(trace.response_logprobs, trace.response_mask, strict=True) if m == 1] == \
        [-0.5] * sum(trace.response_mask)
    assert all(lp == 0.0 for lp, m in zip(trace.response_logprobs, trace.response_mask, strict=True) if m == 0)


def test_a_generation_cut_before_its_end_of_turn_gets_it_as_context(tmp_path, smol_tokenizer):
    """A turn that ran out of new tokens has no <|im_end|>: the codec writes it (mask 0), so the next turn's prompt
    is still well formed."""
    codec = ChatTemplateTokens(smol_tokenizer)
    model = CanonicalModel(smol_tokenizer, bench_tasks()["fin-019"])

    async def cut(messages, tools):
        generation = await model(messages, tools)
        return Generation(generation.text.removesuffix("<|im_end|>"), list(generation.token_ids)[:-1])

    rollout, trace = play("fin-019", cut, codec, tmp_path)
    first_context = next(ids for m, ids in spans(trace.response_ids, trace.response_mask) if m == 0)
    assert smol_tokenizer.decode(first_context).startswith("<|im_end|>\n<|im_start|>user\n<tool_response>")
    assert trace.response_logprobs == []  # no generation came with log-probs


@pytest.fixture(scope="module")
def tiny_qwen3(tmp_path_factory):
    from train.tiny_model import build_tiny_model

    texts = [t.query for t in bench_tasks().values()][:40]
    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny-qwen3", texts, weights=False)


def test_the_trl_and_verl_engines_render_the_same_prompt_ids_for_a_row(tmp_path, edge_dataset, tiny_qwen3):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pytest.importorskip("verl.experimental.agent_loop.agent_loop")
        pytest.importorskip("hydra")
        from transformers import AutoTokenizer
        from verl.experimental.agent_loop.agent_loop import DictConfigWrap

        from train.engines.verl.agent_loop import KopaToolAgentLoop, _VerlTokens
        from train.engines.verl.dataset import KopaRLHFDataset
        from train.engines.verl.recipes import compose, load_recipe, plan_run

    config = compose(plan_run(load_recipe("grpo_1gpu_small"), home=tmp_path, dataset=edge_dataset, model=tiny_qwen3,
                              cassettes=CASSETTES, extra=["data.max_response_length=32768",
                                                          "actor_rollout_ref.rollout.max_model_len=45056"]))
    tokenizer = AutoTokenizer.from_pretrained(tiny_qwen3)
    table = pq.read_table(edge_dataset / "train.parquet")
    rows = {json.loads(r["extra_info"])["item_id"]: r for r in table.to_pylist()}
    played = {}

    async def first_prompt(task_id, name):
        """The ids the engine's codec renders for the row's episode, as the first generation finds them."""
        task = bench_tasks()[task_id]
        if name == "verl":  # made in the running event loop, as verl's workers make it
            codec = _VerlTokens(KopaToolAgentLoop(
                DictConfigWrap(config), None, tokenizer, None, KopaRLHFDataset, DictConfigWrap(config.data),
                hf_model_type="qwen3", cassettes=str(CASSETTES), tasks_files=[str(edge_dataset / "items.jsonl")],
                home=str(tmp_path)))
        else:
            codec = ChatTemplateTokens(tokenizer)
        trace = TokenTrace(codec)

        async def answer(messages, tools):
            played[task_id, name] = list(trace.ids)
            ids = tokenizer.encode("모름<|im_end|>", add_special_tokens=False)
            return Generation("모름<|im_end|>", ids)

        gateway = replay_gateway(tmp_path, task.bundle)
        try:
            rollout = await run_rollout(task, answer, gateway, tokens=trace)
        finally:
            await gateway.aclose()
        assert rollout.messages[:2] == rows[task_id]["prompt"]  # the episode's prompt is the row's
        assert (task_id, name) in played, rollout.record["error"]

    for task_id in ("fin-001", "edu-029"):
        for name in ("verl", "trl"):
            asyncio.run(first_prompt(task_id, name))
        assert played[task_id, "trl"] == played[task_id, "verl"], task_id
        assert tokenizer.decode(played[task_id, "trl"]).startswith("<|im_start|>system\n# Tools")
    assert played["fin-001", "trl"] != played["edu-029", "trl"]
