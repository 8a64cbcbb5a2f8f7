"""The model being trained (or evaluated) as an episode's policy: torch ``generate`` on the token trace.

    trace = TokenTrace(ChatTemplateTokens(tokenizer), max_response_tokens=4096)
    policy = torch_policy(model, tokenizer, trace, seed=7, temperature=1.0)      # sampled: GRPO's rollouts
    policy = torch_policy(model, tokenizer, trace, seed=0, temperature=0.0)      # greedy: evaluation
    rollout = await run_rollout(task, policy, gateway, tokens=trace)

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

__all__ = ["torch_policy"]


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
