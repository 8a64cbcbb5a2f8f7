"""The model being trained (or evaluated) as an episode's policy: torch ``generate`` on the token trace.

    trace = TokenTrace(ChatTemplateTokens(tokenizer), max_response_tokens=4096)
    policy = torch_policy(model, tokenizer, trace, seed=7, temperature=1.0)      # sampled: GRPO's rollouts
    policy = torch_policy(model, tokenizer, trace, seed=0, temperature=0.0)      # greedy: evaluation
    rollout = await run_rollout(task, policy, gateway, tokens=trace)
    batch = GreedyBatch(model, tokenizer, max_new_tokens=128)          # greedy, many episodes at once: evaluation
    batch = GreedyBatch(model, tokenizer, guide_tool_calls=True)      # ... a call kept to an offered tool's schema

Each turn generates from ``trace.ids`` (the whole conversation as the chat template renders it, tool results
included), stopping at the tokenizer's end-of-turn token or after ``max_new_tokens`` (and never past what is left of
the trace's response budget). Sampling draws from the full distribution (no top-k or top-p), the torch seed fixed
per (seed, turn), so a rollout replays; at temperature 0 decoding is greedy and the seed does not matter. The
log-probabilities of the chosen tokens come back with the ids (what GRPO's importance ratio needs). The model is put
in eval mode for the generation and back as it was after it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench.agents.step import Generation, TokenTrace

__all__ = ["GreedyBatch", "torch_policy"]


def torch_policy(model: Any, tokenizer: Any, trace: TokenTrace, *, seed: int, temperature: float,
                 max_new_tokens: int = 256) -> Callable[..., Any]:
    """A ``train.episode.Policy`` that generates with ``model`` from ``trace`` (module doc)."""
    import torch

    turn = 0
    budget = trace.max_response_tokens

    async def policy(messages: Any, tools: Any) -> Generation:
        nonlocal turn
        torch.manual_seed(seed + turn)
        turn += 1
        room = max_new_tokens if budget is None else min(max_new_tokens, budget - len(trace.response_mask))
        input_ids = torch.tensor([trace.ids], device=model.device)
        sampling = ({"do_sample": True, "temperature": temperature, "top_k": 0, "top_p": 1.0} if temperature > 0
                    else {"do_sample": False})
        was_training = model.training
        model.eval()
        try:
            with torch.no_grad():
                out = model.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids),
                                     max_new_tokens=max(1, room), eos_token_id=tokenizer.eos_token_id,
                                     pad_token_id=tokenizer.pad_token_id, output_scores=True,
                                     return_dict_in_generate=True, **sampling)
                logprobs = model.compute_transition_scores(out.sequences, out.scores, normalize_logits=True)[0]
        finally:
            model.train(was_training)
        ids = out.sequences[0, input_ids.shape[1]:].tolist()
        text = tokenizer.decode(ids, skip_special_tokens=False)
        return Generation(text, ids, [float(x) for x in logprobs.tolist()])

    return policy


class GreedyBatch:
    """Greedy generation for several episodes at once (evaluation): ``expect(n)`` players (each playing episodes one
    after another); a policy call waits until every player still playing has asked, then one left-padded batch
    ``generate`` answers them all.

        batch = GreedyBatch(model, tokenizer, max_new_tokens=128)
        batch.expect(len(players))                                  # before any of them starts
        async def player(tasks):
            for task in tasks:
                trace = TokenTrace(...)
                await run_rollout(task, batch.policy(trace), gateway, tokens=trace)
            batch.worker_done()

    A batch is always exactly the players still playing, so for the same schedule of episodes the batches, and the
    generations, are the same every time. Each episode keeps its attention cache between its turns, so a turn reads
    only the tokens its cache does not hold (``kv_reuse``: prefill episode by episode, decoding as one batch). On a
    CPU the model's weights are read once per decoded token for the whole batch: Gemma's 262k-row output layer is
    most of a decoding step, so a batch of 8 decodes at nearly the cost of one. Padding and batch shape change the
    arithmetic slightly, so a batched greedy episode can differ from the same episode played alone.

    ``guide_tool_calls``: once a turn opens ``<tool_call>``, the call is decoded under the grammar of the tools the
    episode offers (``call_grammar``: an offered name, arguments in its schema, the call's end). ``precision``:
    ``bf16`` runs the model under bf16 autocast, as SFT trains it (prompts read 1.3–2× faster on an AVX512-BF16 CPU
    than in fp32; greedy choices can differ where two tokens' logits are within bf16's rounding).
    """

    def __init__(self, model: Any, tokenizer: Any, *, max_new_tokens: int = 256, guide_tool_calls: bool = False,
                 precision: str = "fp32"):
        if precision not in ("fp32", "bf16"):
            raise ValueError(f"precision is fp32 or bf16, not {precision!r}")
        self.model, self.tokenizer, self.max_new_tokens = model, tokenizer, max_new_tokens
        self.guide_tool_calls, self.precision = guide_tool_calls, precision
        self.running = 0
        self.pending: list[tuple[list[int], int, Any, Any, Any]] = []  # (prompt ids, room, cache, guide, future)
        self.batches: list[int] = []  # the size of each batch run (what the tests and the report read)

    def expect(self, workers: int) -> None:
        """``workers`` more players will ask for generations: set before any of them starts, so that the first
        batch waits for all of them."""
        self.running += workers

    def worker_done(self) -> None:
        """A player has no more episodes: the others no longer wait for it."""
        self.running -= 1
        self._maybe_generate()

    def policy(self, trace: TokenTrace) -> Callable[..., Any]:
        """The policy of one episode (module doc of ``torch_policy``: the prompt is ``trace.ids``); it keeps the
        episode's attention cache between its turns (``kv_reuse``)."""
        import asyncio

        from .kv_reuse import EpisodeCache

        budget = trace.max_response_tokens
        cache = EpisodeCache()

        async def policy(messages: Any, tools: Any) -> Generation:
            room = self.max_new_tokens if budget is None else min(self.max_new_tokens,
                                                                    budget - len(trace.response_mask))
            future = asyncio.get_running_loop().create_future()
            self.pending.append((list(trace.ids), max(1, room), cache, self._guide(tools), future))
            self._maybe_generate()
            return await future

        return policy

    def _maybe_generate(self) -> None:
        if not self.pending or len(self.pending) < self.running:
            return
        batch, self.pending = self.pending, []
        try:
            generations = self._generate([(cache, ids, room) for ids, room, cache, _, _ in batch],
                                         [guide for *_, guide, _ in batch])
        except Exception as exc:  # every waiting episode hears of it
            for *_, future in batch:
                future.set_exception(exc)
            return
        for (*_, future), generation in zip(batch, generations, strict=True):
            future.set_result(generation)

    def _guide(self, tools: Any) -> Callable[[list[int]], Any] | None:
        """The decoding guide of one turn offered ``tools`` (None when calls are not guided or none is offered)."""
        from .call_grammar import CallGrammar

        if not self.guide_tool_calls or not tools:
            return None
        return CallGrammar.for_tools(self.tokenizer, tools).allowed

    def _generate(self, requests: list[tuple[Any, list[int], int]], guides: list[Any]) -> list[Generation]:
        from .kv_reuse import greedy_decode

        import torch

        self.batches.append(len(requests))
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.autocast(self.model.device.type, dtype=torch.bfloat16, enabled=self.precision == "bf16"):
                decoded = greedy_decode(self.model, requests, eos=self.tokenizer.eos_token_id,
                                        guides=guides if any(g is not None for g in guides) else None)
        finally:
            self.model.train(was_training)
        return [Generation(self.tokenizer.decode(ids, skip_special_tokens=False), ids, [0.0] * len(ids))
                for ids in decoded]  # greedy: no log-probs needed
