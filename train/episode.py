"""A training rollout: a bench episode whose agent is a policy, on its own gateway session in strict replay.

    rollout = await run_rollout(task, policy, gateway)          # gateway: bench profile, replaying task.bundle
    rollout.outcome.passed, rollout.outcome.scores()            # the bench's own verdicts
    rollout.messages                                            # the conversation the policy saw
    rollout.record                                              # what train.reward scores (plain JSON)

A **policy** maps the conversation so far (OpenAI chat messages) and the tools (OpenAI ``tools`` entries) to the
next assistant message: its raw text, with its calls in ``<tool_call>`` blocks (qwen3_coder XML or hermes JSON, read
by ``models.toolcalls.read_text``: the reader the bench agents and the agent endpoint use), or an ``AssistantTurn``
already read. In training the policy is the model behind verl's rollout server
(``train.agent_loop``); on the CPU it is a script (``train.policies``). Everything else is the bench's:

* ``bench.episode.run_episode`` opens a fresh session (its own id, so the n rollouts of a GRPO group run side by
  side), binds the system state (the episode key tokens, fixed by task, seed and rollout: seed 0 and rollout 0
  give the tokens the dataset prompt shows), refuses tools the task does not offer, limits each call to
  ``tool_timeout_s`` (60 s) and the whole episode to ``episode_timeout_s`` (600 s), and scores the episode
  with RESPONSE / ACTION / ENVIRONMENT;
* tool responses are capped at ``max_tool_tokens`` approximate tokens by ``cap_tool_response``, the function
  the bench's OpenAI agent uses;
* the calls of one assistant turn run at once (``asyncio.gather``), at most ``max_parallel_calls`` of them
  (by default the task's widest golden step, at least ``MIN_PARALLEL_CALLS``); calls past that are answered
  with a tool message saying they were not run, and are not tool calls of the episode.
* a call that cannot be read is answered as the bench's OpenAI agent answers it: an ``invalid_tool_call`` tool
  call in the assistant message, not run, whose tool message tells the policy what was wrong; the turn goes on.

Whatever the policy does, the rollout ends scored, never with an exception: a replay miss is a tool error the
policy sees (``replay_miss``) and ACTION counts; a policy that raises (``PolicyStop``: its token budget is
spent) or runs out of turns or time ends the episode without an answer, which fails RESPONSE.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.agents.base import EpisodeContext
from bench.agents.openai_agent import cap_tool_response
from bench.episode import DEFAULT_EPISODE_TIMEOUT_S, DEFAULT_TOOL_TIMEOUT_S, EpisodeOutcome, run_episode
from bench.task import Task
from mcp_gateway.runtime import Outcome, ToolResult
from models.toolcalls import INVALID_CALL, AssistantTurn, ToolCall, read_text

__all__ = ["MIN_PARALLEL_CALLS", "Policy", "PolicyAgent", "PolicyStop", "Rollout", "RolloutLimits",
           "episode_record", "parallel_width", "run_rollout"]

MIN_PARALLEL_CALLS = 8  # a model may fan out wider than the golden trajectory; verl's default (1) would drop calls

Policy = Callable[[Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]]], Awaitable["str | AssistantTurn"]]
"""``await policy(messages, tools)`` -> the next assistant message (text with ``<tool_call>`` blocks, or read)."""


class PolicyStop(RuntimeError):
    """The policy cannot go on (its response-token budget is spent); the episode ends without an answer."""


@dataclass(frozen=True)
class RolloutLimits:
    """Paper Appendix I: 15 assistant turns, 16K tool-response tokens, 600 s per episode, 60 s per tool call."""

    episode_timeout_s: float = DEFAULT_EPISODE_TIMEOUT_S
    tool_timeout_s: float = DEFAULT_TOOL_TIMEOUT_S
    max_assistant_turns: int = 15
    max_tool_tokens: int = 16384
    max_parallel_calls: int | None = None  # None: parallel_width(task), at least MIN_PARALLEL_CALLS

    def parallel_calls(self, task: Task) -> int:
        width = parallel_width(task)
        if self.max_parallel_calls is None:
            return max(width, MIN_PARALLEL_CALLS)
        return max(width, self.max_parallel_calls)  # never below the task's own width: the golden would be cut


def parallel_width(task: Task) -> int:
    """The most golden calls issued in one step (calls of a step run in parallel)."""
    return max(Counter(a.step for a in task.golden_actions).values())


class PolicyAgent:
    """A bench ``Agent`` that asks a policy for each assistant message and runs its tool calls."""

    name = "policy"

    def __init__(self, policy: Policy, limits: RolloutLimits, max_parallel_calls: int):
        self.policy, self.limits, self.max_parallel_calls = policy, limits, max_parallel_calls
        self.messages: list[dict[str, Any]] = []
        self.turns = 0
        self.stopped: str | None = None  # why the loop ended without an answer

    async def run(self, context: EpisodeContext) -> str | None:
        self.messages = [{"role": "system", "content": context.system_prompt},
                         {"role": "user", "content": context.query}]
        tools = [tool.as_openai() for tool in context.tools]
        for turn_no in range(self.limits.max_assistant_turns):
            reply = await self.policy(list(self.messages), tools)
            turn = reply if isinstance(reply, AssistantTurn) else read_text(str(reply), tools)
            self.turns += 1
            ids = [f"call_{turn_no}_{i}" for i in range(len(turn.calls) + len(turn.problems))]
            self.messages.append(_assistant_message(turn, ids))
            if not turn.calls and not turn.problems:
                return turn.content if turn.content.strip() else None
            run_now = turn.calls[:self.max_parallel_calls]
            results = await asyncio.gather(*(context.call(c.name, c.arguments) for c in run_now))
            for call_id, call, result in zip(ids, run_now, results):
                content = result.structured()
                if call.problem or not isinstance(call.arguments, Mapping):
                    content["arguments_error"] = call.problem or ("the arguments were not one JSON object of "
                                                                  "parameter values")
                self.messages.append({"role": "tool", "tool_call_id": call_id,
                                      "content": cap_tool_response(content, self.limits.max_tool_tokens)})
            for call_id, call in zip(ids[len(run_now):], turn.calls[len(run_now):]):
                self.messages.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(
                    {"outcome": "not_run", "message": f"{call.name}: not run; at most {self.max_parallel_calls} "
                                                      "tool calls are run per turn"}, ensure_ascii=False)})
            for call_id, problem in zip(ids[len(turn.calls):], turn.problems):  # unreadable: not run, the policy told
                refused = ToolResult(tool=INVALID_CALL, outcome=Outcome.SCHEMA_MISMATCH, message=problem)
                self.messages.append({"role": "tool", "tool_call_id": call_id, "content": cap_tool_response(
                    refused.structured(), self.limits.max_tool_tokens)})
        self.stopped = f"no final answer within {self.limits.max_assistant_turns} assistant turns"
        raise PolicyStop(self.stopped)


def _assistant_message(turn: AssistantTurn, ids: Sequence[str]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": turn.content}
    if turn.calls or turn.problems:
        # arguments as an object: chat templates iterate over them; unparsable ones render as {}
        named = [(c.name, dict(c.arguments) if isinstance(c.arguments, Mapping) else {}) for c in turn.calls]
        named += [(INVALID_CALL, {})] * len(turn.problems)
        message["tool_calls"] = [{"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
                                 for call_id, (name, args) in zip(ids, named)]
    return message


@dataclass(frozen=True)
class Rollout:
    outcome: EpisodeOutcome
    messages: list[dict[str, Any]]
    turns: int
    record: dict[str, Any] = field(repr=False)  # episode_record(task, outcome): what train.reward scores


def episode_record(task: Task, outcome: EpisodeOutcome) -> dict[str, Any]:
    """What the reward needs of an episode, as plain JSON: the task, the answer, the agent's calls in order,
    the runtime context the golden placeholders resolve against, and the final workspace."""
    calls = [{"tool": e["tool"], "args": e["args"], "outcome": e.get("outcome")}
             for e in outcome.transcript if e.get("by") == "agent"]
    return {"task": task.model_dump(mode="json"), "answer": outcome.answer, "calls": calls,
            "runtime_context": outcome.runtime_context, "final_state": outcome.final_state, "error": outcome.error,
            "session_id": outcome.session_id}


async def run_rollout(task: Task, policy: Policy, gateway: Any, *, limits: RolloutLimits | None = None,
                      seed: int = 0, rollout: int = 0, session_id: str | None = None) -> Rollout:
    """Play ``task`` with ``policy`` through ``gateway`` (bench profile, strict replay of ``task.bundle``).

    ``seed`` and ``rollout`` fix the episode's key tokens: keep 0 and 0 so that the tokens match the ones in the
    dataset's prompt. ``session_id``: by default a fresh ``train/<task>/<uuid>``, so rollouts never share state.

    Raises:
        ValueError: the gateway is not in the bench profile or the task does not fit its catalog (from
            ``run_episode``); nothing the policy does raises.
    """
    limits = limits or RolloutLimits()
    agent = PolicyAgent(policy, limits, limits.parallel_calls(task))
    outcome = await run_episode(task, agent, gateway, seed=seed, rollout=rollout,
                                session_id=session_id or f"train/{task.id}/{uuid.uuid4().hex}",
                                timeout_s=limits.episode_timeout_s, tool_timeout_s=limits.tool_timeout_s)
    return Rollout(outcome=outcome, messages=agent.messages, turns=agent.turns, record=episode_record(task, outcome))


def tool_call(name: str, **arguments: Any) -> ToolCall:
    """Shorthand for scripts: ``tool_call("get_x", KEY="…")``."""
    return ToolCall(name, arguments)
