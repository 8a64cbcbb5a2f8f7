"""A finished trajectory's verdicts: ACTION, RESPONSE, ENVIRONMENT and ``passed``, in one place.

    from bench.scoring.verdicts import grade_trajectory, score_trajectory
    verdicts = score_trajectory(task, runtime_context=context, calls=calls, answer=answer,
                                final_state=snapshot, catalog=catalog)            # no judge: deterministic
    verdicts = await grade_trajectory(task, ..., catalog=catalog, judge=judge)  # RESPONSE may ask the judge
    verdicts.passed, verdicts.action.action

``bench.episode.run_episode`` scores every episode here, and the GRPO reward (``train.reward.score_record``) scores
its plain-JSON episode record here, so the reward is the bench's score by construction. The inputs are what a
record holds:

* the golden actions with their ``{name}`` placeholders resolved against the episode's ``runtime_context``
  (``golden_calls``), the agent's ``calls`` in order and each golden tool's argument schema as the bench profile
  shows it (``golden_schemas``) give ACTION, which grades the trajectory and gates nothing (B.4);
* the final ``answer`` gives RESPONSE, when in the task's reward basis: the deterministic rules
  (``score_response``), or a score graded elsewhere and passed in (``grade_trajectory`` passes the judge's);
* the final workspace ``final_state`` (``Workspace.snapshot()`` as plain JSON) gives ENVIRONMENT, when in the
  reward basis: the hash of the snapshot against the task's golden hash;
* ``passed`` is RESPONSE and ENVIRONMENT as the reward basis lists them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bench.agents.base import resolve_placeholders
from bench.task import RewardBasis, Task
from mcp_gateway.catalog import input_schema

from .action import ActionScore, GoldenCall, PredictedCall, score_action
from .environment import EnvironmentScore, score_environment
from .judge import JudgeError, LLMJudge, grade_response
from .response import ResponseScore, score_response

if TYPE_CHECKING:
    from mcp_gateway.catalog import Catalog

__all__ = ["Verdicts", "golden_calls", "golden_schemas", "grade_trajectory", "score_trajectory"]


@dataclass(frozen=True)
class Verdicts:
    """The scores of one finished trajectory."""

    action: ActionScore
    response: ResponseScore | None  # None when RESPONSE is not in the reward basis
    environment: EnvironmentScore | None  # None when ENVIRONMENT is not in the reward basis
    passed: bool  # RESPONSE and ENVIRONMENT as the reward basis lists them; ACTION gates nothing
    judge_error: str | None = None  # the judge could not be asked: RESPONSE is the deterministic score


def golden_calls(task: Task, runtime_context: Mapping[str, Any]) -> list[GoldenCall]:
    """The task's golden actions with their ``{name}`` placeholders resolved against the runtime context."""
    return [GoldenCall(a.tool, resolve_placeholders(a.args, runtime_context), a.value_compare_args, a.step)
            for a in task.golden_actions]


def golden_schemas(task: Task, catalog: Catalog) -> dict[str, dict[str, Any]]:
    """Each golden tool's argument schema as the bench profile shows it (the key is an argument the agent fills).

    Raises:
        KeyError: a golden tool is not in ``catalog`` (``UnknownToolError``, naming the nearest tools).
    """
    return {a.tool: input_schema(catalog.get(a.tool), "bench") for a in task.golden_actions}


def score_trajectory(task: Task, *, runtime_context: Mapping[str, Any], calls: Sequence[PredictedCall],
                     answer: str | None, final_state: Mapping[str, Any], catalog: Catalog,
                     response: ResponseScore | None = None) -> Verdicts:
    """Score one finished trajectory (module doc).

    Args:
        task: the task played.
        runtime_context: the episode's runtime context (predefined values and bound system-state actions).
        calls: the agent's calls, in the order it issued them (harness calls excluded).
        answer: the agent's final answer; None when it gave none.
        final_state: the final workspace, as ``Workspace.snapshot()`` gives it (sections left out are empty).
        catalog: the tool catalog the golden tools' schemas come from.
        response: RESPONSE already graded (by the judge); None scores it here with the deterministic rules.
            Only used when RESPONSE is in the reward basis.

    Raises:
        KeyError: a golden tool is not in ``catalog``.
        ValueError: the final state names a section a workspace does not have, or ``response`` is given for a
            task whose reward basis has no RESPONSE.
    """
    action = score_action(golden_calls(task, runtime_context), list(calls), golden_schemas(task, catalog),
                          task.max_allowed_calls)
    if RewardBasis.RESPONSE in task.reward_basis:
        response = response if response is not None else score_response(task, answer)
    elif response is not None:
        raise ValueError(f"task {task.id!r}: a RESPONSE score was given, but its reward basis "
                         f"{[b.value for b in task.reward_basis]} has no RESPONSE; pass response=None")
    environment = None
    if RewardBasis.ENVIRONMENT in task.reward_basis:
        assert task.golden_state_hash is not None  # Task validation requires it with ENVIRONMENT
        environment = score_environment(final_state, task.golden_state_hash)
    passed = all(score.passed for score in (response, environment) if score is not None)
    return Verdicts(action=action, response=response, environment=environment, passed=passed)


async def grade_trajectory(task: Task, *, runtime_context: Mapping[str, Any], calls: Sequence[PredictedCall],
                           answer: str | None, final_state: Mapping[str, Any], catalog: Catalog,
                           judge: LLMJudge | None = None) -> Verdicts:
    """``score_trajectory`` with RESPONSE graded by ``grade_response``: the judge where B.2 calls for it.

    A judge that cannot be reached leaves the deterministic RESPONSE score and says so in ``judge_error``. Without
    a judge (or a disabled one) the verdicts are exactly ``score_trajectory``'s.

    Raises:
        KeyError: a golden tool is not in ``catalog``.
        ValueError: the final state names a section a workspace does not have.
    """
    response, judge_error = None, None
    if RewardBasis.RESPONSE in task.reward_basis:
        try:
            response = await grade_response(task, answer, judge)
        except JudgeError as exc:
            judge_error = f"judge unavailable: {exc}"  # score_trajectory falls back to score_response
    verdicts = score_trajectory(task, runtime_context=runtime_context, calls=calls, answer=answer,
                                final_state=final_state, catalog=catalog, response=response)
    return dataclasses.replace(verdicts, judge_error=judge_error)
