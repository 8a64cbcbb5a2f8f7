"""``bench.scoring.verdicts``: a finished trajectory to ACTION, RESPONSE, ENVIRONMENT and ``passed`` (no gateway:
the inputs are plain JSON, as an episode record holds them). Over a gateway, and against the GRPO reward:
tests/train/test_reward_is_the_bench_score.py."""

from __future__ import annotations

import asyncio
from functools import cache

import pytest

from bench.agents.oracle import format_answer
from bench.scoring import (
    EMPTY_WORKSPACE_HASH,
    PredictedCall,
    Verdicts,
    golden_calls,
    grade_trajectory,
    score_action,
    score_response,
    score_trajectory,
)
from bench.task import load_tasks
from bench.taskset.build import DEFAULT_TASKS
from mcp_gateway.catalog import input_schema, load_catalog


@cache
def tasks():
    return {t.id: t for t in load_tasks(DEFAULT_TASKS)}


CATALOG = load_catalog()


def context_of(task):
    """A runtime context as an episode binds it: the predefined values, a key token for each key action."""
    return {**task.system_state.predefined, **{a.name: f"kopa-{a.name}-0123456789abcdef"
                                                for a in task.system_state.actions}}


def golden_trajectory(task):
    return [PredictedCall(c.tool, c.args) for c in golden_calls(task, context_of(task))]


def test_an_empty_trajectory_fails_what_the_basis_lists_and_scores_no_action():
    task = tasks()["trf-001"]  # ACTION, RESPONSE, ENVIRONMENT
    verdicts = score_trajectory(task, runtime_context=context_of(task), calls=[], answer=None, final_state={}, catalog=CATALOG)
    assert not verdicts.passed and verdicts.action.action == 0.0
    assert verdicts.response == score_response(task, None) and verdicts.response.method == "no_answer"
    assert not verdicts.environment.passed and verdicts.environment.final_hash == EMPTY_WORKSPACE_HASH
    assert verdicts.judge_error is None


def test_the_golden_answer_and_calls_pass_and_a_dimension_outside_the_basis_is_none():
    task = tasks()["fin-001"]  # ACTION, RESPONSE: no ENVIRONMENT
    verdicts = score_trajectory(task, runtime_context=context_of(task), calls=golden_trajectory(task),
                                answer=format_answer(task, task.accepted_answers[0]), final_state={}, catalog=CATALOG)
    assert verdicts.passed and verdicts.response.passed and verdicts.environment is None
    assert verdicts.action == score_action(golden_calls(task, context_of(task)), golden_trajectory(task),
                                           _bench_schemas(task), task.max_allowed_calls)
    assert verdicts.action.action == 1.0


def _bench_schemas(task):
    """Each golden tool's schema as the bench profile's runtime shows it to the agent."""
    return {a.tool: input_schema(CATALOG.get(a.tool), "bench") for a in task.golden_actions}


def test_a_graded_response_is_used_as_given():
    task = tasks()["fin-001"]
    graded = score_response(task, format_answer(task, task.accepted_answers[0]))
    verdicts = score_trajectory(task, runtime_context=context_of(task), calls=[], answer="no answer here", final_state={},
                                catalog=CATALOG, response=graded)
    assert verdicts.response is graded and verdicts.passed


def test_a_graded_response_for_a_task_that_scores_no_response_is_refused():
    task = tasks()["edu-029"]  # ACTION, ENVIRONMENT
    graded = score_response(tasks()["fin-001"], "ANSWER: {1}")
    with pytest.raises(ValueError, match=r"edu-029.*has no RESPONSE; pass response=None"):
        score_trajectory(task, runtime_context=context_of(task), calls=[], answer=None, final_state={}, catalog=CATALOG,
                         response=graded)


def test_a_final_state_with_an_unknown_section_is_refused():
    task = tasks()["edu-029"]
    with pytest.raises(ValueError, match="unknown sections"):
        score_trajectory(task, runtime_context=context_of(task), calls=[], answer=None, final_state={"files": {}},
                         catalog=CATALOG)


def test_without_a_judge_grading_is_scoring():
    for task in tasks().values():
        if task.id not in {"trf-001", "fin-001", "edu-029", "trf-002"}:
            continue
        kwargs = dict(runtime_context=context_of(task), calls=golden_trajectory(task), answer="ANSWER: {x}", final_state={},
                      catalog=CATALOG)
        graded = asyncio.run(grade_trajectory(task, **kwargs, judge=None))
        assert graded == score_trajectory(task, **kwargs) and isinstance(graded, Verdicts)
