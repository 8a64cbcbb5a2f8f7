"""One episode: a task, an agent and a gateway, from a fresh session to the three scores.

    from bench.episode import run_episode
    outcome = await run_episode(task, OracleAgent(), gateway, seed=0, rollout=0)
    outcome.passed, outcome.action.action, outcome.transcript, outcome.result  # result: a stats.EpisodeResult

The steps (paper §2.4, Appendix B):

1. **Fresh session.** The episode's session is reset, so no workspace or key token survives from an
   earlier episode (B.3: "a freshly launched MCP server instance"). Key tokens are derived from the task,
   seed and rollout rather than drawn at random, so the prompt, the calls and the transcript of a replayed
   episode are the same every time (the design document's "Determinism" principle); a token still only opens its
   own platform in its own session.
2. **System state.** Predefined values are bound as they are; each system-state action is run by the
   harness through the runtime (``get_dart_api_key`` hands out the episode's token) and the chosen output
   field of its first record is bound to the action's name. These calls are in the transcript
   (``by: harness``) but are not the agent's calls, so ACTION does not count them.
3. **The agent loop.** The agent gets the system prompt (``bench.prompt``), the query, the available
   tools in the order of ``bench.tool_order`` (a shuffle fixed by task and seed: a task file lists its golden
   tools first) and ``call``. Every call is recorded in order; a call to a tool the task does not offer, or with
   arguments that do not fit, is refused as a tool error (SCHEMA_MISMATCH / MISSING_FIELD) that the agent
   sees and ACTION scores. An agent that raises or runs past ``timeout_s`` ends the episode without an
   answer; the episode is scored all the same.
4. **Scoring.** ``bench.scoring.verdicts.grade_trajectory`` on the runtime context, the agent's calls, the
   answer and the final workspace snapshot (plain JSON): the same function, on the same inputs, that the GRPO
   reward (``train.reward``) scores an episode record with. ACTION always (golden actions with their
   placeholders resolved, see ``bench.agents.base``); RESPONSE and ENVIRONMENT when in the reward basis.
   ``passed`` is RESPONSE and ENVIRONMENT as the basis lists them: ACTION grades the trajectory and gates
   nothing (B.4).

The transcript is plain JSON: tool, arguments, outcome, total_count, record count, page and error message
per call. Real keys never appear: the model only ever holds episode tokens, and the runtime redacts
upstream messages. Tool records are left out (a page can hold a thousand rows); the cassette bundle has them.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from bench.agents.base import Agent, EpisodeContext, ToolInfo, placeholder_names
from bench.limits import EpisodeLimits
from bench.prompt import build_system_prompt
from bench.scoring.action import ActionScore, PredictedCall
from bench.scoring.environment import EnvironmentScore
from bench.scoring.judge import LLMJudge
from bench.scoring.response import ResponseScore
from bench.scoring.verdicts import grade_trajectory
from bench.stats import EpisodeResult
from bench.task import Task
from bench.tool_order import presented_order
from mcp_gateway.catalog.export import to_openai_function
from mcp_gateway.catalog.spec import ParamKind
from mcp_gateway.runtime import Outcome, ToolResult
from models.errors import ErrorKind

__all__ = ["DEFAULT_EPISODE_TIMEOUT_S", "DEFAULT_TOOL_TIMEOUT_S", "EpisodeOutcome", "episode_key_token",
           "run_episode"]

DEFAULT_EPISODE_TIMEOUT_S: float = EpisodeLimits.model_fields["episode_timeout_s"].default  # Appendix I: 600 s
DEFAULT_TOOL_TIMEOUT_S: float = EpisodeLimits.model_fields["tool_timeout_s"].default  # 60 s
_INTERNAL_PLATFORM = "internal"  # built-in tools need no key


@dataclass(frozen=True)
class EpisodeOutcome:
    """A scored episode."""

    task_id: str
    seed: int
    rollout: int
    session_id: str
    agent: str
    answer: str | None
    transcript: list[dict[str, Any]]  # every call in order, harness calls first
    runtime_context: dict[str, Any]
    action: ActionScore
    response: ResponseScore | None  # None when RESPONSE is not in the reward basis
    environment: EnvironmentScore | None  # None when ENVIRONMENT is not in the reward basis
    passed: bool
    result: EpisodeResult
    final_state: dict[str, Any]  # the workspace snapshot at the end
    error: str | None = None  # the agent raised or timed out, or a system-state action failed
    error_kind: str | None = None  # the first error's ErrorKind value; an exception of no kind: its class name
    error_status: int | None = None  # the HTTP status of the endpoint error, when one answered
    duration_s: float = 0.0  # wall time; not part of ``scores()``, which must replay identically
    model_turns: list[dict[str, Any]] = field(default_factory=list)  # a model agent's assistant turns, in order

    def token_usage(self) -> dict[str, int]:
        """Prompt and completion tokens over the model's turns (what the endpoint reported)."""
        total = {"prompt_tokens": 0, "completion_tokens": 0}
        for turn in self.model_turns:
            for name in total:
                value = (turn.get("usage") or {}).get(name)
                total[name] += value if isinstance(value, int) else 0
        return total

    def scores(self) -> dict[str, Any]:
        """The verdicts as plain JSON: identical for two replays of the same episode."""
        action = self.action
        return {
            "passed": self.passed,
            "action": {"action": action.action, "corr": action.corr, "eff": action.eff, "cr": action.cr,
                       "mpc": action.mpc, "n_total": action.n_total, "n_dup": action.n_dup, "n_opt": action.n_opt,
                       "max_allowed_calls": action.max_allowed_calls,
                       "matches": [{"golden_index": m.golden_index, "step": m.step, "tool": m.tool,
                                    "matched_index": m.matched_index, "reason": m.reason} for m in action.matches]},
            "response": self.response.model_dump(mode="json") if self.response is not None else None,
            "environment": asdict(self.environment) if self.environment is not None else None,
        }

    def to_json(self) -> dict[str, Any]:
        """The whole episode as plain JSON (one line of a run's transcript file)."""
        return {"task_id": self.task_id, "seed": self.seed, "rollout": self.rollout, "session_id": self.session_id,
                "agent": self.agent, "answer": self.answer, "error": self.error, "error_kind": self.error_kind,
                "error_status": self.error_status, "duration_s": self.duration_s,
                "runtime_context": self.runtime_context, "transcript": self.transcript,
                "model_turns": self.model_turns, "usage": self.token_usage(),
                "final_state": self.final_state, "scores": self.scores()}


def episode_key_token(platform: str, task_id: str, seed: int, rollout: int) -> str:
    """The key token an episode's session hands out for ``platform``: fixed by task, seed and rollout."""
    digest = hashlib.sha256(f"{task_id}\x00{seed}\x00{rollout}\x00{platform}".encode()).hexdigest()
    return f"kopa-{platform}-{digest[:16]}"  # the shape Session.issue_key_token uses


async def run_episode(task: Task, agent: Agent, gateway: Any, *, seed: int, rollout: int = 0,
                      session_id: str | None = None, timeout_s: float | None = DEFAULT_EPISODE_TIMEOUT_S,
                      tool_timeout_s: float | None = DEFAULT_TOOL_TIMEOUT_S,
                      judge: LLMJudge | None = None) -> EpisodeOutcome:
    """Run ``agent`` on ``task`` through ``gateway`` and score the episode.

    Args:
        gateway: an ``mcp_gateway.gateway.Gateway`` (its ``runtime`` and ``catalog`` are used); the bench
            profile, so that the agent must pass the episode's key token as ``KEY``.
        seed, rollout: identify the episode (key tokens, results); an agent may seed its sampling with them.
        session_id: the gateway session to use (reset first); by default ``bench/<task>/<seed>/<rollout>``.
        timeout_s: the agent's whole run; None for no limit.
        tool_timeout_s: one tool call; a call past it is a TIMEOUT tool error. None for no limit.
        judge: the LLM judge RESPONSE falls back to (B.2), when enabled; its verdict is kept in the score.
            A judge that cannot be reached leaves the deterministic score and says so in ``error``.

    Raises:
        ValueError: the gateway is not in the bench profile, the task does not fit the gateway's catalog (an unknown available tool) or a golden
            argument names a runtime-context key the task does not define. Agent misbehaviour never raises.
    """
    runtime, catalog = gateway.runtime, gateway.catalog
    if runtime.profile != "bench":
        raise ValueError(f"run_episode needs a gateway opened with profile='bench', got {runtime.profile!r}: "
                         "in an episode the agent passes its episode key token as KEY and never holds a real key")
    specs = _available_specs(task, catalog)
    specs = {name: specs[name] for name in presented_order(task.id, list(specs), seed)}  # never golden-first
    _check_placeholders(task)
    session_id = session_id or f"bench/{task.id}/{seed}/{rollout}"
    runtime.reset_session(session_id)
    session = runtime.session(session_id)
    for platform in sorted(set(task.platforms) | {s.platform for s in specs.values()} - {_INTERNAL_PLATFORM}):
        session.key_tokens[episode_key_token(platform, task.id, seed, rollout)] = platform

    started = time.monotonic()
    transcript: list[dict[str, Any]] = []
    predicted: list[PredictedCall] = []
    context, state_error = await _resolve_system_state(task, runtime, session_id, transcript)

    async def call(tool: Any, args: Any = None) -> ToolResult:
        tool = tool if isinstance(tool, str) else str(tool)
        entry: dict[str, Any] = {"index": len(transcript), "by": "agent", "tool": tool, "args": _plain(args)}
        transcript.append(entry)  # before any await: parallel calls keep the order they were issued in
        predicted.append(PredictedCall(tool, _plain(args)))  # scored as recorded: the reward sees the same JSON
        if tool not in specs:
            result = ToolResult(tool=tool, outcome=Outcome.SCHEMA_MISMATCH, message=(
                f"tool {tool!r} is not available in this task; available: {', '.join(specs)}"))
        else:
            result = await _call_runtime(runtime, tool, args, session_id, tool_timeout_s)
        entry.update(_result_fields(result))
        return result

    tools = tuple(_tool_info(spec, runtime) for spec in specs.values())
    model_turns: list[dict[str, Any]] = []
    agent_context = EpisodeContext(
        task=task, system_prompt=build_system_prompt(task.response_type, context), query=task.query, tools=tools,
        runtime_context=dict(context), response_type=task.response_type, seed=seed, rollout=rollout, call=call,
        note_turn=model_turns.append)
    answer, agent_error = await _run_agent(agent, agent_context, timeout_s)
    state_failure = _Failure(state_error, ErrorKind.SYSTEM_STATE) if state_error else None

    final_state = json.loads(json.dumps(session.workspace.snapshot(), ensure_ascii=False))
    runtime.sessions.drop(session_id)  # the outcome holds what is needed; tokens die with the session
    # the same inputs, as plain JSON, that train.reward.score_record scores an episode record on
    runtime_context = _plain(context)
    verdicts = await grade_trajectory(task, runtime_context=runtime_context, calls=predicted, answer=answer,
                                      final_state=final_state, catalog=catalog, judge=judge)
    passed = verdicts.passed
    judge_failure = _Failure(verdicts.judge_error, ErrorKind.JUDGE_UNAVAILABLE) if verdicts.judge_error else None
    failures = [f for f in (state_failure, agent_error, judge_failure) if f is not None]

    return EpisodeOutcome(
        task_id=task.id, seed=seed, rollout=rollout, session_id=session_id, agent=getattr(agent, "name", "?"),
        answer=answer, transcript=transcript, runtime_context=runtime_context, action=verdicts.action,
        response=verdicts.response, environment=verdicts.environment, passed=passed,
        result=EpisodeResult(task_id=task.id, domain=task.domain, rollout=rollout, seed=seed, passed=passed,
                             action=verdicts.action.action),
        final_state=final_state,
        error="; ".join(f.message for f in failures) or None,
        error_kind=failures[0].kind if failures else None, error_status=failures[0].status if failures else None,
        duration_s=time.monotonic() - started, model_turns=model_turns)


# ---------------------------------------------------------------------------------------------- set-up


def _available_specs(task: Task, catalog: Any) -> dict[str, Any]:
    missing = [name for name in task.available_tools if name not in catalog]
    if missing:
        raise ValueError(f"task {task.id!r}: available_tools {missing} are not in the gateway's catalog")
    return {name: catalog.get(name) for name in task.available_tools}


def _check_placeholders(task: Task) -> None:
    known = set(task.system_state.names())
    for i, action in enumerate(task.golden_actions):
        unknown = sorted(placeholder_names(action.args) - known)
        if unknown:
            raise ValueError(f"task {task.id!r}: golden_actions.{i} ({action.tool}) uses placeholder(s) "
                             f"{['{' + n + '}' for n in unknown]} but the system state defines only {sorted(known)}")


def _tool_info(spec: Any, runtime: Any) -> ToolInfo:
    function = to_openai_function(spec, runtime.profile)["function"]
    page_no = next((p.name for p in spec.params if p.kind is ParamKind.PAGE_NO), None)
    return ToolInfo(name=spec.name, description=function["description"], parameters=runtime.input_schema(spec),
                    page_no_param=page_no)


async def _resolve_system_state(task: Task, runtime: Any, session_id: str,
                                transcript: list[dict[str, Any]]) -> tuple[dict[str, Any], str | None]:
    """The runtime context, predefined values first; and what went wrong binding an action, if anything."""
    context: dict[str, Any] = dict(task.system_state.predefined)
    problems = []
    for action in task.system_state.actions:
        entry: dict[str, Any] = {"index": len(transcript), "by": "harness", "binds": action.name,
                                 "tool": action.tool, "args": _plain(action.args)}
        transcript.append(entry)
        result = await runtime.call(action.tool, dict(action.args), session_id)
        entry.update(_result_fields(result))
        if result.is_error or not result.records:
            problems.append(f"system-state action {action.name!r} ({action.tool}) gave "
                            f"{result.outcome.value}: {result.message or 'no records'}")
            continue
        record = result.records[0]
        if action.output_field is None:
            context[action.name] = record
        elif action.output_field in record:
            context[action.name] = record[action.output_field]
        else:
            problems.append(f"system-state action {action.name!r} ({action.tool}): its record has no field "
                            f"{action.output_field!r}; fields: {', '.join(record)}")
    return context, "; ".join(problems) or None


# ---------------------------------------------------------------------------------------------- the loop


async def _call_runtime(runtime: Any, tool: str, args: Any, session_id: str, timeout_s: float | None) -> ToolResult:
    try:
        return await asyncio.wait_for(runtime.call(tool, args, session_id), timeout_s)
    except TimeoutError:
        return ToolResult(tool=tool, outcome=Outcome.TIMEOUT,
                          message=f"{tool}: no result within {timeout_s:g} s; try again or narrow the query")


@dataclass(frozen=True)
class _Failure:
    """One reason an episode has no (scored) answer: the message, its kind, the endpoint's HTTP status if any."""

    message: str
    kind: str
    status: int | None = None


async def _run_agent(agent: Agent, context: EpisodeContext,
                     timeout_s: float | None) -> tuple[str | None, _Failure | None]:
    """The agent's answer, or None and why there is none.

    Any exception from the agent is caught on purpose: a model that breaks its own loop (unparsable output,
    a lost endpoint) fails its episode, and the run goes on to the next one. Its ``kind`` and ``status``
    (``bench.agents.step.AgentError``, ``models.errors``) are kept; an exception without a kind is known by its
    class name.
    """
    name = getattr(agent, "name", type(agent).__name__)
    try:
        answer = await asyncio.wait_for(agent.run(context), timeout_s)
    except TimeoutError:
        return None, _Failure(f"agent {name!r} gave no answer within {timeout_s:g} s", ErrorKind.EPISODE_TIMEOUT)
    except Exception as exc:  # noqa: BLE001 - see the docstring
        kind = getattr(exc, "kind", None)
        status = getattr(exc, "status", None)
        return None, _Failure(f"agent {name!r} raised {type(exc).__name__}: {exc}",
                              kind if isinstance(kind, ErrorKind) else type(exc).__name__,
                              status if isinstance(status, int) else None)
    if answer is not None and not isinstance(answer, str):
        return None, _Failure(f"agent {name!r} returned {type(answer).__name__}, not the answer text", "other")
    return answer, None


def _result_fields(result: ToolResult) -> dict[str, Any]:
    return {"outcome": result.outcome.value, "total_count": result.total_count, "n_records": len(result.records),
            "page_no": result.page_no, "error": result.message if result.is_error else None}


def _plain(value: Any) -> Any:
    """A JSON-safe deep copy; whatever JSON cannot hold (a model's odd argument) becomes its repr."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=repr))
