"""The GRPO reward: the bench scorers on the rollout's trajectory (``reward.custom_reward_function``).

    reward.custom_reward_function.path=<repo>/train/reward.py  reward.custom_reward_function.name=compute_score

    compute_score(data_source, solution_str, ground_truth, extra_info)  ->  {"score": 1.0, "passed": 1.0, ...}

The score is the paper's binary reward (§4.1): 1 when the episode passes RESPONSE and ENVIRONMENT as the
item's ``reward_basis`` lists them, else 0; ACTION grades the trajectory and is logged beside it, gating nothing
(Appendix B.4). The verdicts come from the same functions ``bench.episode.run_episode`` calls, on the same
inputs: the golden actions with their ``{name}`` placeholders resolved against the episode's runtime context,
the agent's calls in order, each golden tool's argument schema as the bench profile shows it, the final answer,
and the final workspace. ``score_record`` is that scoring on one ``train.episode.episode_record``.

Where the record comes from: ``train.agent_loop`` puts it in the rollout's ``extra_fields["kopa_episode"]``, and
verl's reward manager merges ``extra_fields`` into ``extra_info``. Without a record (a rollout from verl's stock
``tool_agent`` loop) only the text is there: RESPONSE is scored on ``solution_str`` against the ground truth's
accepted answers, ACTION is 0 (no calls known) and an ENVIRONMENT item fails (no final state known);
``from_record`` is then 0.

Every call returns the same keys (verl takes them from the first sample): ``score``, ``passed``, ``action``,
``response_ok``, ``environment_ok`` (1.0 when that dimension is not in the item's basis: it gates nothing),
``n_calls``, ``from_record``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from bench.agents.base import resolve_placeholders
from bench.scoring.action import GoldenCall, PredictedCall, score_action
from bench.scoring.environment import score_environment
from bench.scoring.response import score_answer, score_response
from bench.task import RewardBasis, Task

__all__ = ["RECORD_KEY", "compute_score", "score_record"]

RECORD_KEY = "kopa_episode"  # the agent loop's extra_fields key holding train.episode.episode_record(...)


@functools.cache
def _catalog() -> Any:
    from mcp_gateway.catalog import load_catalog

    return load_catalog()


def _bench_schema(tool: str) -> dict[str, Any]:
    """The tool's argument schema as the bench profile shows it (``ToolRuntime.input_schema`` in profile bench)."""
    from mcp_gateway.catalog.export import PROFILE_GENERICS

    return _catalog().get(tool).input_schema(include_generic=PROFILE_GENERICS["bench"])


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def score_record(record: Mapping[str, Any]) -> dict[str, float]:
    """The bench verdicts on one episode record (``train.episode.episode_record``), as the reward's dict.

    Raises:
        pydantic.ValidationError: the record's task is not a valid task.
        KeyError: a golden tool is not in the tool catalog.
    """
    task = Task.model_validate(_json(record["task"]))
    context = record.get("runtime_context") or {}
    golden = [GoldenCall(a.tool, resolve_placeholders(a.args, context), a.value_compare_args, a.step)
              for a in task.golden_actions]
    calls = record.get("calls") or []
    predicted = [PredictedCall(str(c["tool"]), c.get("args")) for c in calls]
    action = score_action(golden, predicted, {g.tool: _bench_schema(g.tool) for g in task.golden_actions},
                          task.max_allowed_calls)
    response_ok = environment_ok = True
    if RewardBasis.RESPONSE in task.reward_basis:
        response_ok = score_response(task, record.get("answer")).passed  # grade_response without a judge
    if RewardBasis.ENVIRONMENT in task.reward_basis:
        assert task.golden_state_hash is not None  # Task validation requires it with ENVIRONMENT
        environment_ok = score_environment(record.get("final_state") or {}, task.golden_state_hash).passed
    passed = response_ok and environment_ok
    return {"score": float(passed), "passed": float(passed), "action": float(action.action),
            "response_ok": float(response_ok), "environment_ok": float(environment_ok),
            "n_calls": float(len(predicted)), "from_record": 1.0}


def _score_text(solution_str: str, ground_truth: Any) -> dict[str, float]:
    spec = _json(ground_truth) or {}
    basis = set(spec.get("reward_basis") or [])
    response_ok, environment_ok = True, RewardBasis.ENVIRONMENT.value not in basis
    if RewardBasis.RESPONSE.value in basis:
        response_ok = score_answer(spec["response_type"], spec.get("accepted_answers") or [], solution_str).passed
    passed = response_ok and environment_ok
    return {"score": float(passed), "passed": float(passed), "action": 0.0, "response_ok": float(response_ok),
            "environment_ok": float(environment_ok), "n_calls": 0.0, "from_record": 0.0}


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: Any = None,
                  **kwargs: Any) -> dict[str, float]:
    """verl's custom reward function (module doc). ``kwargs`` (reward router, ``reward_kwargs``) are ignored."""
    info = _json(extra_info) or {}
    record = info.get(RECORD_KEY) if isinstance(info, Mapping) else None
    if record:
        return score_record(_json(record))
    return _score_text(solution_str or "", ground_truth)
