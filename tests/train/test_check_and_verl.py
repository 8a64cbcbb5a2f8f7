"""Recipes composed against verl's own config dir and checked; EDGE's parquet in verl's RLHFDataset; the verl agent
loop playing a replayed episode with a scripted model server over a tiny local Qwen3 tokenizer (no hub)."""

from __future__ import annotations

import asyncio
import json
import warnings

import pyarrow.parquet as pq
import pytest

from train.engines.verl.check import check_plan
from train.engines.verl.recipes import RecipeError, compose, list_recipes, load_recipe, plan_run
from train.reward import RECORD_KEY, compute_score

from .conftest import CASSETTES, IDS, bench_tasks

pytest.importorskip("hydra")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from train.tiny_model import build_tiny_model

    texts = [t.query for t in bench_tasks().values()][:40]
    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny-qwen3", texts, weights=False)


def small_plan(tmp_path, edge_dataset, tiny_model, **kw):
    kw.setdefault("cassettes", CASSETTES)
    return plan_run(load_recipe("grpo_1gpu_small"), home=tmp_path, dataset=kw.pop("dataset", edge_dataset),
                    model=tiny_model, **kw)


def test_the_shipped_recipes_compose_against_verl(tmp_path, tiny_model, edge_dataset):
    assert {"grpo_9b_paper", "grpo_1gpu_small", "sft"} <= set(list_recipes())
    paper = compose(plan_run(load_recipe("grpo_9b_paper"), home=tmp_path, dataset=edge_dataset, model=tiny_model))
    actor, rollout = paper.actor_rollout_ref.actor, paper.actor_rollout_ref.rollout
    assert (paper.data.train_batch_size, rollout.n, actor.kl_loss_coef, actor.kl_loss_type) == (8, 8, 0.03, "low_var_kl")
    assert actor.use_kl_loss and not paper.algorithm.use_kl_in_reward and actor.loss_agg_mode == "token-mean"
    assert paper.data.max_prompt_length + paper.data.max_response_length == rollout.max_model_len == 65536
    assert rollout.multi_turn.format == "qwen3_coder" and rollout.multi_turn.max_assistant_turns == 15
    sft = compose(plan_run(load_recipe("sft"), home=tmp_path, dataset=edge_dataset, model=tiny_model))
    assert sft.data.messages_key == "messages" and sft.model.path == str(tiny_model)


def test_the_small_recipe_checks_clean_with_the_edge_dataset(tmp_path, edge_dataset, tiny_model):
    assert check_plan(small_plan(tmp_path, edge_dataset, tiny_model)) == []


def test_check_catches_a_bad_batch_size(tmp_path, edge_dataset, tiny_model):
    problems = check_plan(small_plan(tmp_path, edge_dataset, tiny_model,
                                     extra=["actor_rollout_ref.actor.ppo_mini_batch_size=3"]))
    assert any("data.train_batch_size (4) is not a multiple of actor_rollout_ref.actor.ppo_mini_batch_size (3)" in p
               for p in problems), problems
    too_big = check_plan(small_plan(tmp_path, edge_dataset, tiny_model, extra=["data.max_response_length=8192"]))
    assert any("exceeds actor_rollout_ref.rollout.max_model_len (16384)" in p for p in too_big), too_big


def test_check_catches_a_missing_dataset_model_bundle_and_unknown_key(tmp_path, edge_dataset, tiny_model):
    problems = check_plan(small_plan(tmp_path, edge_dataset, tiny_model, dataset=tmp_path / "no-such-dataset"))
    assert any(p.startswith("data.train_files: ") and "no-such-dataset/train.parquet does not exist" in p
               for p in problems), problems
    no_model = check_plan(plan_run(load_recipe("grpo_1gpu_small"), home=tmp_path, dataset=edge_dataset,
                                   cassettes=CASSETTES))
    assert any("models/tiny-qwen3 is not a folder" in p for p in no_model), no_model
    no_bundle = check_plan(small_plan(tmp_path, edge_dataset, tiny_model, cassettes=tmp_path / "empty"))
    assert any(p.startswith(f"bundle {bench_tasks()[IDS[0]].bundle} is not in") for p in no_bundle), no_bundle
    typo = check_plan(small_plan(tmp_path, edge_dataset, tiny_model,
                                 extra=["actor_rollout_ref.rollout.multi_turn.fromat=hermes"]))
    assert len(typo) == 1 and "refuses the overrides" in typo[0] and "fromat" in typo[0]
    with pytest.raises(RecipeError, match="no recipe 'nope'"):
        load_recipe("nope")


def test_edge_parquet_loads_in_verls_rlhf_dataset(edge_dataset, tiny_model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pytest.importorskip("verl.utils.dataset.rl_dataset")
        from omegaconf import OmegaConf
        from transformers import AutoTokenizer

        from train.engines.verl.dataset import KopaRLHFDataset

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    config = OmegaConf.create({"max_prompt_length": 32768, "filter_overlong_prompts": True, "return_raw_chat": True,
                               "cache_dir": str(edge_dataset / "cache")})
    dataset = KopaRLHFDataset([str(edge_dataset / "train.parquet")], tokenizer, config)
    assert len(dataset) == len(IDS)
    rows = [dataset[i] for i in range(len(dataset))]
    assert sorted(r["extra_info"]["item_id"] for r in rows) == sorted(IDS)
    for i, row in enumerate(rows):
        task = bench_tasks()[row["extra_info"]["item_id"]]
        assert row["raw_prompt"][1] == {"role": "user", "content": task.query}
        assert row["index"] == row["extra_info"]["index"] == i and row["tools_kwargs"] == {}
        assert json.loads(row["reward_model"]["ground_truth"])["reward_basis"] == task.model_dump(mode="json")["reward_basis"]


class ScriptedServer:
    """An LLM server that 'generates' the golden trajectory: it reads the runtime context from the prompt tokens."""

    def __init__(self, tokenizer, task):
        from train.policies import GoldenPolicy

        self.tokenizer, self.policy, self.prompts = tokenizer, GoldenPolicy(task), []

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        from verl.workers.rollout.replica import TokenOutput

        text = self.tokenizer.decode(prompt_ids)
        self.prompts.append(text)
        reply = await self.policy([{"role": "system", "content": text}], [])
        return TokenOutput(token_ids=self.tokenizer.encode(reply + "<|im_end|>", add_special_tokens=False))


def test_the_verl_agent_loop_plays_a_replayed_episode_and_the_reward_scores_it(tmp_path, edge_dataset, tiny_model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pytest.importorskip("verl.experimental.agent_loop.agent_loop")
        from transformers import AutoTokenizer
        from verl.experimental.agent_loop.agent_loop import DictConfigWrap

        from train.engines.verl.agent_loop import KopaToolAgentLoop, close_gateways
        from train.engines.verl.dataset import KopaRLHFDataset

    big = ["data.max_response_length=32768", "actor_rollout_ref.rollout.max_model_len=45056"]
    config = compose(small_plan(tmp_path, edge_dataset, tiny_model, extra=big))
    small = compose(small_plan(tmp_path, edge_dataset, tiny_model))  # 4K tail: too small for edu-029's 9 responses
    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    rows = {json.loads(r["extra_info"])["item_id"]: r for r in pq.read_table(edge_dataset / "train.parquet").to_pylist()}

    async def play(task_id, config=config):
        server = ScriptedServer(tokenizer, bench_tasks()[task_id])
        loop = KopaToolAgentLoop(DictConfigWrap(config), server, tokenizer, None, KopaRLHFDataset,
                                 DictConfigWrap(config.data), hf_model_type="qwen3", cassettes=str(CASSETTES),
                                 tasks_files=[str(edge_dataset / "items.jsonl")], home=str(tmp_path))
        row = rows[task_id]
        return server, await loop.run({}, raw_prompt=row["prompt"], extra_info=json.loads(row["extra_info"]))

    async def run_all():
        try:
            return {i: await play(i) for i in ("fin-001", "edu-029")}, await play("edu-029", small)
        finally:
            await close_gateways()

    played, (_, cut) = asyncio.run(run_all())
    for task_id, (server, output) in played.items():
        task = bench_tasks()[task_id]
        fields = output.extra_fields
        rec = fields[RECORD_KEY]
        assert fields["kopa_passed"] == 1.0, (rec["error"], rec["answer"], rec["calls"][-3:], rec["final_state"])
        assert fields["kopa_turns"] == task.n_steps + 1, task_id
        assert fields["kopa_prompt_matches_row"]  # the rollout saw exactly the dataset's system prompt
        reward = compute_score("kopa-edge", tokenizer.decode(output.response_ids), rows[task_id]["reward_model"]["ground_truth"],
                               {**json.loads(rows[task_id]["extra_info"]), RECORD_KEY: fields[RECORD_KEY]})
        assert reward["score"] == 1.0 and reward["action"] == 1.0, (task_id, reward)
        # the token bookkeeping: generated tokens carry loss, tool responses do not
        mask = output.response_mask
        assert len(mask) == len(output.response_ids) and 0 in mask and 1 in mask
        response = tokenizer.decode(output.response_ids)
        assert response.count("<tool_response>") == len(task.golden_actions) and "<tool_call>" in response
        assert tokenizer.decode(output.prompt_ids).startswith("<|im_start|>system\n# Tools")
        assert len(server.prompts) == task.n_steps + 1

    # the response budget spent: the rollout ends there, as verl's ToolAgentLoop does, and is scored a failure
    record = cut.extra_fields[RECORD_KEY]
    assert cut.extra_fields["kopa_budget_spent"] and "overflow the response budget of 4096 tokens" in record["error"]
    assert len(cut.response_ids) <= 4096 and compute_score("kopa-edge", "", "{}", {RECORD_KEY: record})["score"] == 0.0


def test_edge_sft_jsonl_loads_in_verls_multiturn_sft_dataset(tmp_path, tiny_model):
    """`kopa train sft`'s data path: EDGE's sft.jsonl -> sft.parquet -> verl's MultiTurnSFTDataset (our subclass):
    the loss covers the assistant turns, i.e. the qwen3_coder calls and the final answer, not the tool results."""
    from edge.dataset.export import export_sft
    from train.sft_export import sft_parquet

    from .conftest import as_item, replayed

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pytest.importorskip("verl.utils.dataset.multiturn_sft_dataset")
        from omegaconf import OmegaConf
        from transformers import AutoTokenizer

        from train.engines.verl.sft_data import KopaSFTDataset

    items = [as_item(bench_tasks()["fin-001"])]
    export_sft(items, tmp_path / "sft.jsonl", replays=replayed(items, tmp_path / "home"))
    sft_parquet(tmp_path / "sft.jsonl", tmp_path / "sft.parquet")
    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    config = OmegaConf.create({"max_length": 16384, "truncation": "error", "messages_key": "messages",
                               "tools_key": "tools", "ignore_input_ids_mismatch": True})
    row = KopaSFTDataset([str(tmp_path / "sft.parquet")], tokenizer, config)[0]
    trained = tokenizer.decode(row["input_ids"][row["loss_mask"].bool()])
    assert trained.count("<tool_call>") == len(items[0].task.golden_actions)
    assert "<function=find_dart_corp_code>" in trained and "\\boxed{" in trained and "<tool_response>" not in trained


def test_sft_rows_have_their_tool_call_arguments_typed_by_the_rows_tools():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pytest.importorskip("verl.utils.dataset.multiturn_sft_dataset")
        from train.engines.verl.sft_data import decode_messages, decode_tools

    tools = decode_tools(json.dumps([{"type": "function", "function": {"name": "list_things", "parameters": {
        "type": "object", "properties": {"pageNo": {"type": "integer"}}}}}]))
    row = json.dumps([{"role": "user", "content": "목록"}, {"role": "assistant", "content": "", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "list_things", "arguments": "{\"pageNo\": \"3\"}"}},
        {"id": "b", "type": "function", "function": {"name": "list_things", "arguments": "{\"pageNo\": 3"}}]}])
    calls = decode_messages(row, tools)[1]["tool_calls"]
    assert [c["function"]["arguments"] for c in calls] == [{"pageNo": 3}, {}]
    assert decode_tools(None) == []
    assert decode_messages(row)[1]["tool_calls"][0]["function"]["arguments"] == {"pageNo": "3"}  # no tools: untyped
