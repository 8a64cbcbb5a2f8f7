"""The verl agent loop: each rollout is a ``train.episode`` rollout whose policy is the model being trained.

Registered with ``actor_rollout_ref.rollout.agent.agent_loop_config_path``
(``train/engines/verl/configs/agent_loops.yaml``, or the copy ``kopa train grpo`` writes into the run folder with
absolute paths) and selected with ``actor_rollout_ref.rollout.agent.default_agent_loop=kopa_tool_agent``. The YAML
entry's own keys are the constructor's keyword arguments: ``cassettes`` (the folder of bundles), ``tasks_files``
(where rows' tasks are found when the row does not carry its task; ``train.tasks``), ``home`` and ``limits``.

Per rollout: the row's task is looked up, a strict-replay bench gateway on the task's bundle is opened (once per
worker process and bundle, shared by all rollouts: each runs in its own gateway session), and
``train.episode.run_rollout`` plays the episode under the entry's ``limits`` (``bench.limits.EpisodeLimits``, which
``kopa train`` writes from kopa.toml's ``[episode]``): the one agent step of the bench (``bench.agents.step``), with its
token option. The policy is verl's rollout server, generating from the trace's token ids; the step keeps the token
bookkeeping as ``ToolAgentLoop`` does, through verl's Continuous Token builder (``_VerlTokens``: the initial prompt
with the tools rendered by the chat template, the generated tokens with mask 1, the tool messages merged in with
mask 0), and reads each generation with the reader and typing rule of the bench and the agent endpoint
(``models.toolcalls``; a call it cannot read is answered to the model). Where the entry names no
limits, the turn limit is ``multi_turn.max_assistant_turns`` (15) and the calls run per turn are at least the
task's parallel width (``multi_turn.max_parallel_calls`` raises it). When the response budget
(``rollout.response_length``) is spent the
last generation is the final message, its calls not run, as in ``ToolAgentLoop``.

The loop does not score: the episode record goes into ``extra_fields["kopa_episode"]`` and
``train.reward.compute_score`` (the bench scorers) turns it into the reward.

This module imports verl (and so torch and ray); ``train.episode`` is the part that runs without them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register

from bench.agents.step import Generation, TokenTrace
from bench.limits import EpisodeLimits
from models.toolcalls import template_messages

from train.episode import run_rollout
from train.reward import RECORD_KEY
from train.tasks import TaskIndex, decode_json

__all__ = ["KopaToolAgentLoop", "close_gateways"]

_GATEWAYS: dict[tuple[str, str, int], Any] = {}
_INDEXES: dict[tuple[str, ...], TaskIndex] = {}
_LOCK: asyncio.Lock | None = None


async def _gateway(bundle: str, cassettes: Path, home: Path | None) -> Any:
    """One strict-replay bench gateway per bundle and event loop in this process."""
    global _LOCK
    _LOCK = _LOCK or asyncio.Lock()
    key = (str(cassettes), bundle, id(asyncio.get_running_loop()))
    async with _LOCK:
        if key not in _GATEWAYS:
            from mcp_gateway.gateway import open_gateway

            _GATEWAYS[key] = open_gateway(upstream="replay", mode="replay", profile="bench", bundle=bundle,
                                          cassettes=cassettes, home=home)
        return _GATEWAYS[key]


async def close_gateways() -> None:
    for key in list(_GATEWAYS):
        await _GATEWAYS.pop(key).aclose()


def _index(files: tuple[str, ...]) -> TaskIndex:
    if files not in _INDEXES:
        _INDEXES[files] = TaskIndex.from_files(files)
    return _INDEXES[files]


class _VerlTokens:
    """verl's Continuous Token builder as the agent step's ``TokenCodec``: the messages reach the chat template with
    their tool-call arguments as objects (``models.toolcalls.template_messages``), as templates iterate them."""

    def __init__(self, loop: KopaToolAgentLoop) -> None:
        self.loop = loop
        self.special_tokens: Sequence[str] = loop.special_tokens

    async def start(self, trace: TokenTrace, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> None:
        trace.ids = await self.loop.ct_build_initial_tokens(template_messages(messages, tools), tools=tools)

    async def add_context(self, trace: TokenTrace, seen: list[dict[str, Any]], messages: list[dict[str, Any]],
                          tools: list[dict[str, Any]]) -> None:
        merged, mask, logprobs = await self.loop.ct_merge_context_msg(
            template_messages(seen, tools), template_messages(messages, tools), trace.ids, trace.response_mask,
            trace.response_logprobs or None, tools=tools)
        trace.ids, trace.response_mask = merged.token_ids, mask
        if trace.response_logprobs:
            trace.response_logprobs = logprobs or []

    async def add_generation(self, trace: TokenTrace, generation: Generation) -> None:
        logprobs = list(generation.logprobs) if generation.logprobs else None
        merged, mask, aligned = await self.loop.ct_merge_assistant_token(
            trace.ids, list(generation.token_ids), trace.response_mask,
            trace.response_logprobs if (trace.response_logprobs or logprobs) else None, assistant_logprobs=logprobs)
        trace.ids, trace.response_mask = merged.token_ids, mask
        if aligned is not None:
            trace.response_logprobs = aligned


@register("kopa_tool_agent")
class KopaToolAgentLoop(AgentLoopBase):
    """KOPA rollouts in verl (module doc)."""

    def __init__(self, *args: Any, tools: Any = None, cassettes: str = "cassettes", tasks_files: Any = (),
                 home: str | None = None, limits: dict[str, Any] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        multi_turn = self.rollout_config.multi_turn
        self.cassettes = Path(cassettes).expanduser()
        self.home = Path(home).expanduser() if home else None
        self.tasks_files = tuple(str(Path(p).expanduser()) for p in (tasks_files or ()))
        # the episode limits `kopa train` wrote from kopa.toml's [episode]; verl's multi-turn settings stand in for
        # the turns and the calls per turn only where the entry has none (the shipped agent_loops.yaml)
        verl_own = {"max_turns": int(multi_turn.max_assistant_turns or 15),
                    "max_parallel_calls": int(multi_turn.max_parallel_calls or 1)}
        self.limits = EpisodeLimits.model_validate(verl_own | dict(limits or {}))
        self.response_length = int(self.rollout_config.response_length)
        self.special_tokens = [t for t in (getattr(self.tokenizer, "all_special_tokens", None) or []) if t]

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        task = _index(self.tasks_files).task_for(kwargs.get("extra_info"))
        gateway = await _gateway(task.bundle, self.cassettes, self.home)
        trace = TokenTrace(_VerlTokens(self), max_response_tokens=self.response_length)
        request_id = uuid4().hex
        metrics: dict[str, Any] = {"generate_sequences": 0.0, "tool_calls": 0.0}
        last_end: float | None = None

        async def policy(messages: Any, tools: Any) -> Generation:
            nonlocal last_end
            started = time.monotonic()
            if last_end is not None:
                metrics["tool_calls"] += started - last_end
            output = await self.server_manager.generate(request_id=request_id, prompt_ids=trace.ids,
                                                        sampling_params=sampling_params)
            last_end = time.monotonic()
            metrics["generate_sequences"] += last_end - started
            text = self.tokenizer.decode(output.token_ids, skip_special_tokens=False)
            return Generation(text, output.token_ids, output.log_probs)

        rollout = await run_rollout(task, policy, gateway, limits=self.limits, tokens=trace)
        if not trace.ids:  # the episode ended before the first generation (its time ran out)
            trace.ids = await self.ct_build_initial_tokens(rollout.messages[:2])
        prompt_ids, response_ids = trace.prompt_ids, trace.response_ids
        raw_prompt = decode_json(kwargs.get("raw_prompt"))
        extra_fields = {
            RECORD_KEY: rollout.record,
            "kopa_passed": float(rollout.outcome.passed),  # the episode's own verdict, for comparison in logs
            "kopa_turns": rollout.turns,
            "kopa_budget_spent": trace.budget_spent,
            "kopa_prompt_matches_row": bool(raw_prompt) and list(raw_prompt)[:1] == rollout.messages[:1],
        }
        return AgentLoopOutput(
            prompt_ids=prompt_ids,
            response_ids=response_ids[:self.response_length],
            response_mask=trace.response_mask[:self.response_length],
            response_logprobs=trace.response_logprobs[:self.response_length] if trace.response_logprobs else None,
            num_turns=trace.generations + trace.context_rounds + 1,
            metrics=metrics,
            extra_fields=extra_fields,
        )
