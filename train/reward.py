"""The GRPO reward: the bench scorers on the rollout's trajectory (``reward.custom_reward_function``).

    reward.custom_reward_function.path=<repo>/train/reward.py  reward.custom_reward_function.name=compute_score

    compute_score(data_source, solution_str, ground_truth, extra_info)  ->  {"score": 1.0, "passed": 1.0, ...}

The score is the paper's binary reward (§4.1): 1 when the episode passes RESPONSE and ENVIRONMENT as the
item's ``reward_basis`` lists them, else 0; ACTION grades the trajectory and is logged beside it, gating nothing
(Appendix B.4). The verdicts come from the one function ``bench.episode.run_episode`` scores with,
``bench.scoring.verdicts.score_trajectory``, on the same inputs: the episode's runtime context (the golden
actions' ``{name}`` placeholders resolve against it), the agent's calls in order, the final answer and the final
workspace snapshot; the golden tools' argument schemas come from the tool catalog as the bench profile shows them.
``score_record`` is that scoring on one ``train.episode.episode_record``; there is no second copy of it here.

Where the record comes from: ``train.engines.verl.agent_loop`` puts it in the rollout's ``extra_fields["kopa_episode"]``, and
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

from bench.scoring.action import PredictedCall
from bench.scoring.response import score_answer
from bench.scoring.verdicts import score_trajectory
from bench.task import RewardBasis, Task

__all__ = ["RECORD_KEY", "compute_score", "score_record"]

RECORD_KEY = "kopa_episode"  # the agent loop's extra_fields key holding train.episode.episode_record(...)


@functools.cache
def _catalog() -> Any:
    from mcp_gateway.catalog import load_catalog

    return load_catalog()


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def score_record(record: Mapping[str, Any]) -> dict[str, float]:
    """The bench verdicts on one episode record (``train.episode.episode_record``), as the reward's dict.

    The verdicts are ``bench.scoring.verdicts.score_trajectory``'s, the function ``bench.episode.run_episode``
    scores with, on the record's runtime context, calls, answer and final state (RESPONSE without a judge).

    Raises:
        pydantic.ValidationError: the record's task is not a valid task.
        KeyError: a golden tool is not in the tool catalog.
        ValueError: the record's final state names a section a workspace does not have.
    """
    task = Task.model_validate(_json(record["task"]))
    calls = [PredictedCall(str(c["tool"]), c.get("args")) for c in record.get("calls") or []]
    verdicts = score_trajectory(task, runtime_context=record.get("runtime_context") or {}, calls=calls,
                                answer=record.get("answer"), final_state=record.get("final_state") or {},
                                catalog=_catalog())
    # a dimension not in the basis gates nothing: 1.0
    response_ok = verdicts.response is None or verdicts.response.passed
    environment_ok = verdicts.environment is None or verdicts.environment.passed
    return {"score": float(verdicts.passed), "passed": float(verdicts.passed), "action": float(verdicts.action.action),
            "response_ok": float(response_ok), "environment_ok": float(environment_ok),
            "n_calls": float(len(calls)), "from_record": 1.0}


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
