"""The verl agent loop: each rollout is a ``train.episode`` rollout whose policy is the model being trained.

Registered with ``actor_rollout_ref.rollout.agent.agent_loop_config_path`` (``train/configs/agent_loops.yaml``,
or the copy ``kopa train grpo`` writes into the run folder with absolute paths) and selected with
``actor_rollout_ref.rollout.agent.default_agent_loop=kopa_tool_agent``. The YAML entry's own keys are the
constructor's keyword arguments: ``cassettes`` (the folder of bundles), ``tasks_files`` (where rows' tasks are
found when the row does not carry its task; ``train.tasks``), ``home``, ``max_tool_tokens``,
``episode_timeout_s`` and ``tool_timeout_s``.

Per rollout: the row's task is looked up, a strict-replay bench gateway on the task's bundle is opened (once per
worker process and bundle, shared by all rollouts: each runs in its own gateway session), and
``train.episode.run_rollout`` plays the episode. The policy it drives keeps verl's token bookkeeping as
``ToolAgentLoop`` does (Continuous Token: the initial prompt with the tools rendered by the chat template, the
generated tokens with mask 1, the tool messages merged in with mask 0), decodes each generation and reads it with
``read_generation`` (``models.toolcalls.read_text``: the reader and typing rule of the bench and the agent endpoint;
a call it cannot read is answered to the model, as ``train.episode`` says). The turn limit is
``multi_turn.max_assistant_turns`` (15); the calls run per turn are at least the task's parallel width
(``multi_turn.max_parallel_calls`` raises it). When
the response budget (``rollout.response_length``) is spent the last generation is the final message, its calls
not run, as in ``ToolAgentLoop``.

The loop does not score: the episode record goes into ``extra_fields["kopa_episode"]`` and
``train.reward.compute_score`` (the bench scorers) turns it into the reward.

This module imports verl (and so torch and ray); ``train.episode`` is the part that runs without them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register

from models.toolcalls import AssistantTurn, read_text

from .episode import PolicyStop, RolloutLimits, run_rollout
from .reward import RECORD_KEY
from .tasks import TaskIndex, decode_json

__all__ = ["KopaToolAgentLoop", "close_gateways", "read_generation"]

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


def read_generation(text: str, tools: Sequence[Mapping[str, Any]], special_tokens: Sequence[str] = ()) -> AssistantTurn:
    """One decoded generation read as the assistant message (``models.toolcalls.read_text``), the tokenizer's special
    tokens removed first (an end-of-turn token after an unclosed last call would read as stray text)."""
    kept = [t for t in special_tokens if t not in ("<tool_call>", "</tool_call>")]
    turn = read_text(_clean(text, kept), tools)
    return dataclasses.replace(turn, content=turn.content.strip(), raw=text)


def _clean(text: str, special_tokens: Sequence[str]) -> str:
    for token in special_tokens:
        text = text.replace(token, "")
    return text.strip()


async def close_gateways() -> None:
    for key in list(_GATEWAYS):
        await _GATEWAYS.pop(key).aclose()


def _index(files: tuple[str, ...]) -> TaskIndex:
    if files not in _INDEXES:
        _INDEXES[files] = TaskIndex.from_files(files)
    return _INDEXES[files]


@dataclass
class _Tokens:
    """verl's per-trajectory token state, as ``ToolAgentLoop``'s ``AgentData`` keeps it."""

    request_id: str
    prompt_ids: list[int] = field(default_factory=list)
    response_mask: list[int] = field(default_factory=list)
    response_logprobs: list[float] = field(default_factory=list)
    messages_seen: int = 0  # messages rendered into prompt_ids, the assistant message the episode adds included
    generations: int = 0
    tool_rounds: int = 0
    last_generation_end: float | None = None
    metrics: dict[str, Any] = field(default_factory=lambda: {"generate_sequences": 0.0, "tool_calls": 0.0})
    budget_spent: bool = False


@register("kopa_tool_agent")
class KopaToolAgentLoop(AgentLoopBase):
    """KOPA rollouts in verl (module doc)."""

    def __init__(self, *args: Any, tools: Any = None, cassettes: str = "cassettes", tasks_files: Any = (),
                 home: str | None = None, max_tool_tokens: int = 16384, episode_timeout_s: float = 600.0,
                 tool_timeout_s: float = 60.0, **kwargs: Any):
        super().__init__(*args, **kwargs)
        multi_turn = self.rollout_config.multi_turn
        self.cassettes = Path(cassettes).expanduser()
        self.home = Path(home).expanduser() if home else None
        self.tasks_files = tuple(str(Path(p).expanduser()) for p in (tasks_files or ()))
        self.limits = RolloutLimits(episode_timeout_s=float(episode_timeout_s), tool_timeout_s=float(tool_timeout_s),
                                    max_assistant_turns=int(multi_turn.max_assistant_turns or 15),
                                    max_tool_tokens=int(max_tool_tokens),
                                    max_parallel_calls=int(multi_turn.max_parallel_calls or 1))
        self.response_length = int(self.rollout_config.response_length)
        self.special_tokens = [t for t in (getattr(self.tokenizer, "all_special_tokens", None) or []) if t]

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        task = _index(self.tasks_files).task_for(kwargs.get("extra_info"))
        gateway = await _gateway(task.bundle, self.cassettes, self.home)
        tokens = _Tokens(request_id=uuid4().hex)

        async def policy(messages: Any, tools: Any) -> AssistantTurn:
            return await self._generate(tokens, list(messages), list(tools), sampling_params)

        rollout = await run_rollout(task, policy, gateway, limits=self.limits)
        if not tokens.prompt_ids:  # the episode ended before the first generation (its time ran out)
            tokens.prompt_ids = await self.ct_build_initial_tokens(rollout.messages[:2])
        n = len(tokens.response_mask)
        prompt_ids = tokens.prompt_ids[:len(tokens.prompt_ids) - n]
        response_ids = tokens.prompt_ids[len(prompt_ids):]
        raw_prompt = decode_json(kwargs.get("raw_prompt"))
        extra_fields = {
            RECORD_KEY: rollout.record,
            "kopa_passed": float(rollout.outcome.passed),  # the episode's own verdict, for comparison in logs
            "kopa_turns": rollout.turns,
            "kopa_budget_spent": tokens.budget_spent,
            "kopa_prompt_matches_row": bool(raw_prompt) and list(raw_prompt)[:1] == rollout.messages[:1],
        }
        return AgentLoopOutput(
            prompt_ids=prompt_ids,
            response_ids=response_ids[:self.response_length],
            response_mask=tokens.response_mask[:self.response_length],
            response_logprobs=tokens.response_logprobs[:self.response_length] if tokens.response_logprobs else None,
            num_turns=tokens.generations + tokens.tool_rounds + 1,
            metrics=tokens.metrics,
            extra_fields=extra_fields,
        )

    async def _generate(self, tokens: _Tokens, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                        sampling_params: dict[str, Any]) -> AssistantTurn:
        if tokens.budget_spent:
            raise PolicyStop(f"the response budget of {self.response_length} tokens is spent")
        if not tokens.prompt_ids:
            tokens.prompt_ids = await self.ct_build_initial_tokens(messages, tools=tools)
        else:
            if tokens.last_generation_end is not None:
                tokens.metrics["tool_calls"] += time.monotonic() - tokens.last_generation_end
            merged, mask, logprobs = await self.ct_merge_context_msg(
                messages[:tokens.messages_seen], messages, tokens.prompt_ids, tokens.response_mask,
                tokens.response_logprobs or None, tools=tools)
            tokens.tool_rounds += 1
            if len(mask) >= self.response_length:  # the tool messages do not fit: stop, as ToolAgentLoop does
                tokens.budget_spent = True
                raise PolicyStop(f"the tool responses overflow the response budget of {self.response_length} tokens")
            tokens.prompt_ids, tokens.response_mask = merged.token_ids, mask
            if tokens.response_logprobs:
                tokens.response_logprobs = logprobs or []
        started = time.monotonic()
        output = await self.server_manager.generate(request_id=tokens.request_id, prompt_ids=tokens.prompt_ids,
                                                    sampling_params=sampling_params)
        tokens.metrics["generate_sequences"] += time.monotonic() - started
        tokens.last_generation_end = time.monotonic()
        tokens.generations += 1
        merged, mask, logprobs = await self.ct_merge_assistant_token(
            tokens.prompt_ids, output.token_ids, tokens.response_mask,
            tokens.response_logprobs if (tokens.response_logprobs or output.log_probs) else None,
            assistant_logprobs=output.log_probs or None)
        tokens.prompt_ids, tokens.response_mask = merged.token_ids, mask
        if logprobs is not None:
            tokens.response_logprobs = logprobs
        tokens.messages_seen = len(messages) + 1  # the episode appends this assistant message next
        text = self.tokenizer.decode(output.token_ids, skip_special_tokens=False)
        if len(tokens.response_mask) >= self.response_length:  # budget spent: this is the final message
            tokens.budget_spent = True
            return AssistantTurn(content=_clean(text, self.special_tokens), raw=text)
        return read_generation(text, tools, self.special_tokens)
