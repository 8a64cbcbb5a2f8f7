"""Batched greedy evaluation (``train.engines.trl.generate.GreedyBatch``) on a 2-layer SmolLM2 with the real tokenizer:
a batch is exactly the episodes running at that moment, a finished episode lets the others go on, each generation
ends at the end-of-turn token or its room, batching gives what one-at-a-time greedy decoding gives, and the same
schedule gives the same generations.
"""

from __future__ import annotations

import asyncio

import pytest

from bench.agents.step import TokenTrace
from train.engines.trl.generate import GreedyBatch, torch_policy
from train.engines.trl.tokens import ChatTemplateTokens

from ..conftest import shared_tiny_smollm2

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning",
                                        "ignore::UserWarning")

QUERIES = ["서울 지하철 2호선 역 목록을 알려줘", "What is 2+2?", "국회 의안 검색: 예산"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from train.engines.trl.model import load_for_inference, resolve_model

    return load_for_inference(resolve_model(shared_tiny_smollm2(), home=tmp_path_factory.mktemp("home")))


async def start(trace: TokenTrace, query: str) -> None:
    await trace.codec.start(trace, [{"role": "system", "content": "You call tools."},
                                    {"role": "user", "content": query}], [])


def play(model, tokenizer, turns: list[int]) -> tuple[list[list[str]], list[int]]:
    """Episodes that ask for ``turns[i]`` generations each, batched; their texts and the batch sizes."""
    batch = GreedyBatch(model, tokenizer, max_new_tokens=12)
    batch.expect(len(turns))

    async def episode(i: int) -> list[str]:
        trace = TokenTrace(ChatTemplateTokens(tokenizer), max_response_tokens=4096)
        await start(trace, QUERIES[i])
        texts = []
        policy = batch.policy(trace)
        for _ in range(turns[i]):
            generation = await policy([], [])
            texts.append(generation.text)
            more = list(generation.token_ids) + tokenizer.encode("\n계속\n", add_special_tokens=False)
            trace.ids, trace.response_mask = trace.ids + more, trace.response_mask + [1] * len(more)
        batch.worker_done()
        return texts

    async def all_episodes():
        return await asyncio.gather(*(episode(i) for i in range(len(turns))))

    return asyncio.run(all_episodes()), batch.batches


def test_batches_are_the_running_episodes_and_match_one_at_a_time_decoding(tiny):
    model, tokenizer = tiny
    texts, batches = play(model, tokenizer, [1, 3, 2])
    assert batches == [3, 2, 1]  # the first episode ends after one turn, the third after two
    again, _ = play(model, tokenizer, [1, 3, 2])
    assert again == texts

    for i, query in enumerate(QUERIES):  # the first turn, alone and unbatched
        trace = TokenTrace(ChatTemplateTokens(tokenizer), max_response_tokens=4096)
        asyncio.run(start(trace, query))
        alone = asyncio.run(torch_policy(model, tokenizer, trace, seed=0, temperature=0.0, max_new_tokens=12)([], []))
        assert alone.text == texts[i][0]
        ids = alone.token_ids
        assert len(ids) <= 12 and (len(ids) == 12 or ids[-1] == tokenizer.eos_token_id), ids


def test_bf16_precision_runs_the_model_under_bf16_autocast_and_fp32_does_not(tiny):
    import torch

    model, tokenizer = tiny
    seen: list = []
    layer = next(m for m in model.modules() if m.__class__.__name__ == "Linear")
    handle = layer.register_forward_hook(lambda module, args, out: seen.append(out.dtype))
    try:
        for precision in ("fp32", "bf16"):
            batch = GreedyBatch(model, tokenizer, max_new_tokens=4, precision=precision)
            batch.expect(1)
            trace = TokenTrace(ChatTemplateTokens(tokenizer), max_response_tokens=4096)
            asyncio.run(start(trace, QUERIES[0]))
            generation = asyncio.run(batch.policy(trace)([], []))
            assert 1 <= len(generation.token_ids) <= 4
            assert set(seen) == {torch.float32 if precision == "fp32" else torch.bfloat16}
            seen.clear()
    finally:
        handle.remove()
    assert next(model.parameters()).dtype == torch.float32  # autocast leaves the weights as they are
    with pytest.raises(ValueError, match="fp32 or bf16"):
        GreedyBatch(model, tokenizer, precision="fp16")
