"""A training rollout: a bench episode whose agent is a policy, on its own gateway session in strict replay.

    rollout = await run_rollout(task, policy, gateway)          # gateway: bench profile, replaying task.bundle
    rollout.outcome.passed, rollout.outcome.scores()            # the bench's own verdicts
    rollout.messages                                            # the conversation the policy saw
    rollout.record                                              # what train.reward scores (plain JSON)

A **policy** maps the conversation so far (OpenAI chat messages) and the tools (OpenAI ``tools`` entries) to the
next assistant message: its raw text, with its calls in ``<tool_call>`` blocks (qwen3_coder XML or hermes JSON), an
``AssistantTurn`` already read, or a ``bench.agents.step.Generation`` (text with its token ids). In training the
policy is the model being trained (``train.engines.verl.agent_loop`` for verl); on the CPU it is a script (``train.policies``).
Everything else is the bench's:

* the turns are the one agent step (``bench.agents.step.AgentStep``), the one the bench's ``openai`` agent and the
  agent endpoint play: the same reading of a reply (``models.toolcalls``), the same tool messages (capped at
  ``max_tool_tokens``), the same answer to a call that cannot be read, the same budgets (``bench.limits``);
* ``bench.episode.run_episode`` opens a fresh session (its own id, so the n rollouts of a GRPO group run side by
  side), binds the system state (the episode key tokens, fixed by task, seed and rollout: seed 0 and rollout 0
  give the tokens the dataset prompt shows), refuses tools the task does not offer, limits each call to
  ``tool_timeout_s`` and the whole episode to ``episode_timeout_s``, and scores the episode with RESPONSE /
  ACTION / ENVIRONMENT;
* the calls of one assistant turn run at once, at most ``max_parallel_calls`` of them: by default the task's widest
  golden step, at least ``MIN_PARALLEL_CALLS`` (``rollout_limits``); calls past that are answered with a tool
  message saying they were not run, and are not tool calls of the episode.

With a ``TokenTrace`` (``tokens=``) the step also keeps the token ids and the mask of model-written tokens that a
trainer needs (``bench.agents.step``).

Whatever the policy does, the rollout ends scored, never with an exception: a replay miss is a tool error the
policy sees (``replay_miss``) and ACTION counts; a policy that raises (``PolicyStop``: its token budget is
spent) or runs out of turns or time ends the episode without an answer, which fails RESPONSE.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.agents.base import EpisodeContext
from bench.agents.step import AgentStep, Generation, TokenTrace
from bench.episode import EpisodeOutcome, run_episode
from bench.limits import EpisodeLimits
from bench.task import Task
from models.toolcalls import AssistantTurn, ToolCall

__all__ = ["MIN_PARALLEL_CALLS", "Policy", "PolicyAgent", "PolicyStop", "Rollout", "episode_record", "parallel_width",
           "rollout_limits", "run_rollout"]

MIN_PARALLEL_CALLS = 8  # a model may fan out wider than the golden trajectory; verl's default (1) would drop calls

Policy = Callable[[Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]]],
                  Awaitable["str | AssistantTurn | Generation"]]
"""``await policy(messages, tools)`` -> the next assistant message (text with ``<tool_call>`` blocks, read, or a
generation with its token ids)."""


class PolicyStop(RuntimeError):
    """The policy cannot go on (its response-token budget is spent); the episode ends without an answer."""


def parallel_width(task: Task) -> int:
    """The most golden calls issued in one step (calls of a step run in parallel)."""
    return max(Counter(a.step for a in task.golden_actions).values())


def rollout_limits(limits: EpisodeLimits, task: Task) -> EpisodeLimits:
    """``limits`` for a rollout of ``task``: the calls run per turn are never below the task's own width (the golden
    trajectory would be cut), and at least ``MIN_PARALLEL_CALLS`` unless ``limits`` sets its own."""
    width = parallel_width(task)
    wanted = limits.max_parallel_calls if limits.max_parallel_calls is not None else MIN_PARALLEL_CALLS
    return limits.model_copy(update={"max_parallel_calls": max(width, wanted)})


class PolicyAgent:
    """A bench ``Agent`` that plays the agent step with a policy as its model."""

    name = "policy"

    def __init__(self, policy: Policy, limits: EpisodeLimits, *, tokens: TokenTrace | None = None):
        self.policy, self.limits, self.tokens = policy, limits, tokens
        self.messages: list[dict[str, Any]] = []
        self.step: AgentStep | None = None

    @property
    def turns(self) -> int:
        """Generations the policy was asked for."""
        return self.step.turns if self.step is not None else 0

    async def run(self, context: EpisodeContext) -> str | None:
        self.messages = [{"role": "system", "content": context.system_prompt},
                         {"role": "user", "content": context.query}]
        tools = [tool.as_openai() for tool in context.tools]
        self.step = AgentStep(self.limits, context.call, tokens=self.tokens)

        async def generate(messages: list[dict[str, Any]], offered: list[dict[str, Any]]) -> Any:
            return await self.policy(list(messages), offered)  # a copy: a policy may keep what it saw

        return await self.step.run(self.messages, tools, generate)


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


async def run_rollout(task: Task, policy: Policy, gateway: Any, *, limits: EpisodeLimits | None = None,
                      seed: int = 0, rollout: int = 0, session_id: str | None = None,
                      tokens: TokenTrace | None = None) -> Rollout:
    """Play ``task`` with ``policy`` through ``gateway`` (bench profile, strict replay of ``task.bundle``).

    ``limits``: the episode's (``KopaSettings().episode``; by default ``EpisodeLimits()``), widened to the task by
    ``rollout_limits``. ``seed`` and ``rollout`` fix the episode's key tokens: keep 0 and 0 so that the tokens match
    the ones in the dataset's prompt. ``session_id``: by default a fresh ``train/<task>/<uuid>``, so rollouts never
    share state. ``tokens``: the token view a trainer needs, filled as the episode goes.

    Raises:
        ValueError: the gateway is not in the bench profile or the task does not fit its catalog (from
            ``run_episode``); nothing the policy does raises.
    """
    limits = rollout_limits(limits or EpisodeLimits(), task)
    agent = PolicyAgent(policy, limits, tokens=tokens)
    outcome = await run_episode(task, agent, gateway, seed=seed, rollout=rollout,
                                session_id=session_id or f"train/{task.id}/{uuid.uuid4().hex}",
                                timeout_s=limits.episode_timeout_s, tool_timeout_s=limits.tool_timeout_s)
    return Rollout(outcome=outcome, messages=agent.messages, turns=agent.turns, record=episode_record(task, outcome))


def tool_call(name: str, **arguments: Any) -> ToolCall:
    """Shorthand for scripts: ``tool_call("get_x", KEY="…")``."""
    return ToolCall(name, arguments)
