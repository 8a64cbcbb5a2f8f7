"""The benchmark task: one Korean query, the tools it may use, its golden trajectory and how it is scored.

    from bench.task import load_tasks, validate_against_catalog
    tasks = load_tasks("bench/tasks/kopa-bench.jsonl")      # refuses a bad task, naming it and the field
    problems = validate_against_catalog(tasks, load_catalog())  # [] when every tool and argument exists

A task follows the paper (§2.4, Appendix B, Figure 5) and tau2-bench's data model:

* ``system_state`` — what the agent is told at start: ``predefined`` values (``current_date``) and
  ``actions`` the harness runs at episode start (``get_dart_api_key``), each result bound to a name
  that the runtime-context block of the system prompt shows (Table 24).
* ``golden_actions`` — the annotated optimal trajectory. Calls issued in parallel share a ``step``;
  ``value_compare_args`` names the arguments whose values the ACTION scorer compares (B.4).
* ``reward_basis`` — ACTION always, plus RESPONSE and/or ENVIRONMENT, the outcome checks a rollout
  must pass; RESPONSE needs a ``response_type`` and ``accepted_answers``, ENVIRONMENT a
  ``golden_state_hash``.
* ``max_allowed_calls`` — the call budget past which ACTION efficiency is 0 (Eq. 3).
* ``bundle`` — the cassette bundle ``NAME@VERSION`` whose recorded responses the golden answers hold for.

Rules that span fields are checked here, so a bad task is refused when it loads, not mid-run.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, Protocol

from jsonschema import Draft202012Validator
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeInt,
    PositiveInt,
    ValidationError,
    field_serializer,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

__all__ = [
    "DOMAINS",
    "GoldenAction",
    "ResponseType",
    "RewardBasis",
    "StateAction",
    "SystemState",
    "Task",
    "TaskLoadError",
    "load_tasks",
    "parse_task",
    "validate_against_catalog",
]

DOMAINS = ("traffic", "finance", "education", "law", "politics", "district")  # Table 5
Domain = Literal["traffic", "finance", "education", "law", "politics", "district"]
ID_RULE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
NAME_RULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")  # a runtime-context key
BUNDLE_RULE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}@[A-Za-z0-9][A-Za-z0-9._-]*$")  # recorder's bundle names
SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")
NUMBER_LITERAL = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
HANGUL = re.compile(r"[\uac00-\ud7a3]")


class RewardBasis(StrEnum):
    """A scoring dimension (§2.4). ACTION grades the trajectory; RESPONSE and ENVIRONMENT gate the pass."""

    ACTION = "ACTION"
    RESPONSE = "RESPONSE"
    ENVIRONMENT = "ENVIRONMENT"


class ResponseType(StrEnum):
    """How the final answer is written and checked (Appendix B.2, Table 24)."""

    STRING = "string"  # ANSWER: {…}, matched after normalization
    NUMBER = "number"  # \boxed{…}, compared numerically
    JUDGE = "judge"  # ANSWER: {…}, open-ended: graded by an LLM judge


def _rule(where: str, reason: str) -> PydanticCustomError:
    """A rule spanning fields, broken at ``where`` (a dot path below the model that raises it).

    A model validator's error has no location of its own; the loader appends ``where`` to it.
    """
    return PydanticCustomError("task_rule", "{where}: {reason}", {"where": where, "reason": reason})


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StateAction(_Model):
    """A tool the harness runs at episode start; its result is shown to the agent under ``name``."""

    name: str = Field(description="runtime-context key the result is bound to, e.g. 'dart_api_key'")
    tool: str = Field(description="catalog tool to run, e.g. 'get_dart_api_key'")
    args: dict[str, Any] = Field(default_factory=dict, description="arguments of the call")
    output_field: str | None = Field(None, description=(
        "output field of the first record whose value is bound, e.g. 'api_key'; None binds the whole record"))


class SystemState(_Model):
    """Context injected into the system prompt at runtime (Appendix B.1, Figure 5)."""

    predefined: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="static values, e.g. {'current_date': '2026-01-30'}")
    actions: tuple[StateAction, ...] = Field((), description="tools run at episode start, in order")

    @model_validator(mode="after")
    def _names(self) -> SystemState:
        seen: set[str] = set()
        names = [(f"predefined.{k}", k) for k in self.predefined] + [
            (f"actions.{i}.name", a.name) for i, a in enumerate(self.actions)]
        for where, name in names:
            if not NAME_RULE.match(name):
                raise _rule(where, f"{name!r} is not a valid runtime-context key (letters, digits, _; "
                            "not starting with a digit)")
            if name in seen:
                raise _rule(where, f"{name!r} is defined twice; each runtime-context key must be unique")
            seen.add(name)
        return self

    def names(self) -> list[str]:
        """Every runtime-context key, predefined values first."""
        return [*self.predefined, *(a.name for a in self.actions)]


class GoldenAction(_Model):
    """One call of the annotated optimal trajectory."""

    step: NonNegativeInt = Field(description="step index from 0; calls issued in parallel share a step")
    tool: str = Field(description="catalog tool name")
    args: dict[str, Any] = Field(default_factory=dict, description="the annotated arguments")
    value_compare_args: tuple[str, ...] = Field((), description=(
        "arguments whose values must equal the golden ones for a predicted call to match (B.4)"))

    @model_validator(mode="after")
    def _compare_args_exist(self) -> GoldenAction:
        if missing := [a for a in self.value_compare_args if a not in self.args]:
            raise _rule("value_compare_args", f"{missing} are not among the action's args {sorted(self.args)}")
        if len(set(self.value_compare_args)) != len(self.value_compare_args):
            raise _rule("value_compare_args", f"{list(self.value_compare_args)} lists an argument twice")
        return self


class Task(_Model):
    """One KOPA-Bench task (§2, Appendix B)."""

    id: str = Field(description="unique id, e.g. 'fin-007'")
    query: str = Field(description="the user's question, in Korean")
    domain: Domain = Field(description="one of the six domains of Table 5")
    platforms: tuple[str, ...] = Field(min_length=1, description="platform ids the task draws on, e.g. ('dart', 'krx')")
    system_state: SystemState = Field(default_factory=SystemState, description="runtime context (Figure 5)")
    available_tools: tuple[str, ...] = Field(min_length=1, description="tool names exposed to the agent")
    golden_actions: tuple[GoldenAction, ...] = Field(description="the optimal trajectory, by step (at least one)")
    reward_basis: frozenset[RewardBasis] = Field(description="ACTION plus RESPONSE and/or ENVIRONMENT")
    response_type: ResponseType | None = Field(None, description="answer format; required with RESPONSE")
    accepted_answers: tuple[str, ...] = Field((), description=(
        "answers that pass RESPONSE: any of them (string), the golden number as a decimal literal (number), "
        "the reference answer for the judge (judge)"))
    golden_state_hash: str | None = Field(None, description=(
        "SHA-256 of the canonical final workspace state; required iff ENVIRONMENT is in reward_basis"))
    max_allowed_calls: PositiveInt = Field(description="call budget; Eff = 0 past it (Eq. 3)")
    bundle: str = Field(description="cassette bundle NAME@VERSION the task is pinned to")
    pages: bool = Field(False, description="the golden trajectory asks past the first page of a result")
    tags: tuple[str, ...] = Field((), description="free labels, e.g. 'fan-out', 'reduction'")
    notes: str | None = Field(None, description="annotator's notes")

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not ID_RULE.match(value):
            raise ValueError(f"{value!r} is not a valid task id (letters, digits, '.', '_', '-'; at most 64)")
        return value

    @field_validator("query")
    @classmethod
    def _korean_query(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the query is empty")
        if not HANGUL.search(value):
            raise ValueError(f"the query {value[:40]!r} has no Korean text; KOPA-Bench queries are Korean")
        return value

    @field_validator("platforms")
    @classmethod
    def _known_platforms(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        from mcp_gateway.catalog import PLATFORMS  # the gateway's platform ids are the only valid ones

        if unknown := [p for p in value if p not in PLATFORMS]:
            raise ValueError(f"unknown platform(s) {unknown}; known: {', '.join(PLATFORMS)}")
        return value

    @field_validator("available_tools")
    @classmethod
    def _unique_tools(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if dup := sorted({t for t in value if value.count(t) > 1}):
            raise ValueError(f"tool(s) listed twice: {dup}")
        return value

    @field_validator("golden_actions")
    @classmethod
    def _not_empty(cls, value: tuple[GoldenAction, ...]) -> tuple[GoldenAction, ...]:
        # Checked here, not with min_length, which would also fire when an action itself is invalid.
        if not value:
            raise ValueError("no golden actions; ACTION scoring needs the annotated trajectory")
        return value

    @field_validator("bundle")
    @classmethod
    def _bundle_ref(cls, value: str) -> str:
        if not BUNDLE_RULE.match(value):
            raise ValueError(f"{value!r} is not a pinned bundle reference NAME@VERSION, e.g. 'kopa-default@3f2a9c1d'")
        return value

    @field_validator("golden_state_hash")
    @classmethod
    def _sha256(cls, value: str | None) -> str | None:
        if value is not None and not SHA256_HEX.match(value):
            raise ValueError(f"{value!r} is not a SHA-256 hex digest (64 lower-case hex characters)")
        return value

    @field_serializer("reward_basis")
    def _basis_in_order(self, basis: frozenset[RewardBasis]) -> list[str]:
        return [b.value for b in RewardBasis if b in basis]  # a set has no stable order; dumps must be stable

    @model_validator(mode="after")
    def _cross_field(self) -> Task:
        self._check_basis()
        self._check_answers()
        self._check_golden()
        return self

    def _check_basis(self) -> None:
        basis = self.reward_basis
        if RewardBasis.ACTION not in basis:
            raise _rule("reward_basis", "ACTION is always part of the reward basis (§2.4); add it")
        if not basis & {RewardBasis.RESPONSE, RewardBasis.ENVIRONMENT}:
            raise _rule("reward_basis", "needs RESPONSE and/or ENVIRONMENT besides ACTION; "
                        "ACTION alone grades the trajectory but decides no pass")
        has_env = RewardBasis.ENVIRONMENT in basis
        if has_env and self.golden_state_hash is None:
            raise _rule("golden_state_hash", "required because ENVIRONMENT is in reward_basis")
        if not has_env and self.golden_state_hash is not None:
            raise _rule("golden_state_hash", "given but ENVIRONMENT is not in reward_basis; "
                        "add ENVIRONMENT or drop the hash")

    def _check_answers(self) -> None:
        if RewardBasis.RESPONSE not in self.reward_basis:
            if self.accepted_answers:
                raise _rule("accepted_answers", "given but RESPONSE is not in reward_basis; they would never be checked")
            return
        if self.response_type is None:
            raise _rule("response_type", "required because RESPONSE is in reward_basis (string, number or judge)")
        if not self.accepted_answers:
            raise _rule("accepted_answers", "RESPONSE needs at least one accepted answer")
        for i, answer in enumerate(self.accepted_answers):
            if not answer.strip():
                raise _rule(f"accepted_answers.{i}", "empty answer")
            if self.response_type is ResponseType.NUMBER and not NUMBER_LITERAL.match(answer.strip()):
                raise _rule(f"accepted_answers.{i}", f"{answer!r} is not a plain decimal number (e.g. '215.79', "
                            "'-3', '1.5e-3'); a number task's golden answer is written without commas or units")

    def _check_golden(self) -> None:
        steps = [a.step for a in self.golden_actions]
        for i, (before, after) in enumerate(zip(steps, steps[1:]), start=1):
            if after < before:
                raise _rule(f"golden_actions.{i}.step", f"{after} comes after step {before}; list actions in step order")
            if after > before + 1:
                raise _rule(f"golden_actions.{i}.step", f"jumps from {before} to {after}; steps are numbered without gaps")
        if steps[0] != 0:
            raise _rule("golden_actions.0.step", f"the first step is {steps[0]}; steps start at 0")
        tools = set(self.available_tools)
        for i, action in enumerate(self.golden_actions):
            if action.tool not in tools:
                raise _rule(f"golden_actions.{i}.tool", f"{action.tool!r} is not in available_tools")
        if self.max_allowed_calls < len(self.golden_actions):
            raise _rule("max_allowed_calls", f"{self.max_allowed_calls} is below the {len(self.golden_actions)} "
                        "golden actions; the golden trajectory itself would score Eff = 0")

    @property
    def n_steps(self) -> int:
        """Sequential steps of the golden trajectory (parallel calls count once; Appendix D)."""
        return self.golden_actions[-1].step + 1


# ---------------------------------------------------------------------------------------------- loading


class TaskLoadError(ValueError):
    """A task file could not be read or holds tasks that do not validate; ``problems`` lists each one."""

    def __init__(self, path: Path, problems: Sequence[str]):
        self.path, self.problems = path, list(problems)
        shown = self.problems[:20]
        more = f"\n  … and {len(self.problems) - len(shown)} more" if len(self.problems) > len(shown) else ""
        super().__init__(f"{path}: {len(self.problems)} problem(s) in the task file:\n  " + "\n  ".join(shown) + more)


def _error_lines(exc: ValidationError) -> list[str]:
    lines = []
    for err in exc.errors(include_url=False):
        loc, msg = [str(part) for part in err["loc"]], err["msg"]
        if err["type"] == "task_rule":  # a cross-field rule: its own path continues the model's location
            loc, msg = loc + err["ctx"]["where"].split("."), err["ctx"]["reason"]
        lines.append(f"{'.'.join(loc)}: {msg}" if loc else msg)
    return lines


def parse_task(raw: Any) -> Task:
    """Validate one task object (a dict, as read from JSON).

    Raises:
        pydantic.ValidationError: with the location of every bad field.
    """
    return Task.model_validate(raw)


def _records(path: Path, text: str) -> tuple[list[tuple[str, Any]], list[str]]:
    """(where, raw task) pairs, and the problems found reading them. ``where`` is 'file:line' or 'file: tasks[i]'."""
    name = path.name
    if path.suffix == ".jsonl":
        records, problems = [], []
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append((f"{name}:{lineno}", json.loads(line)))
            except json.JSONDecodeError as exc:
                problems.append(f"{name}:{lineno}: not valid JSON (column {exc.colno}: {exc.msg})")
        return records, problems
    if path.suffix != ".json":
        raise TaskLoadError(path, [f"unknown task file type {path.suffix!r}; use .json or .jsonl"])
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TaskLoadError(path, [f"{name}:{exc.lineno}: not valid JSON (column {exc.colno}: {exc.msg})"]) from None
    if isinstance(data, Mapping) and "tasks" in data:
        data = data["tasks"]
    if not isinstance(data, list):
        raise TaskLoadError(path, [f"{name}: expected a list of tasks or {{\"tasks\": [...]}}, "
                                   f"got {type(data).__name__}"])
    return [(f"{name}: tasks[{i}]", raw) for i, raw in enumerate(data)], []


def load_tasks(path: Path | str, *, catalog: _Catalog | None = None) -> list[Task]:
    """Read and validate every task of a ``.json`` (a list, or ``{"tasks": [...]}``) or ``.jsonl`` file.

    ``catalog``: also check every tool and argument against it (``validate_against_catalog``), so that a
    golden value its tool's schema rejects, which no predicted call could ever match, stops the load.

    Raises:
        TaskLoadError: the file is missing or unreadable, or any task does not validate, repeats an id or
            (with ``catalog``) disagrees with the catalog; each problem names the task and the field.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskLoadError(path, [f"cannot read the task file: {exc}"]) from exc
    records, problems = _records(path, text)
    tasks: list[Task] = []
    first_seen: dict[str, str] = {}
    for where, raw in records:
        task_id = raw.get("id") if isinstance(raw, Mapping) else None
        label = f"{where} (task {json.dumps(task_id, ensure_ascii=False)})" if isinstance(task_id, str) else where
        try:
            task = parse_task(raw)
        except ValidationError as exc:
            problems.extend(f"{label}: {line}" for line in _error_lines(exc))
            continue
        if task.id in first_seen:
            problems.append(f"{label}: id: duplicate id, first defined at {first_seen[task.id]}")
            continue
        first_seen[task.id] = where
        tasks.append(task)
    if not problems and catalog is not None:
        problems = validate_against_catalog(tasks, catalog)
    if problems:
        raise TaskLoadError(path, problems)
    return tasks


# ---------------------------------------------------------------------------------------------- catalog


class _Catalog(Protocol):
    def __contains__(self, name: object) -> bool: ...
    def get(self, name: str) -> Any: ...
    def names(self) -> list[str]: ...


_PY_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "number": (int, float),
                                          "boolean": (bool,)}
_INTERNAL_PLATFORM = "internal"  # built-in tools (expression, workspace) belong to no upstream platform


def _type_ok(value: Any, type_: str) -> bool:
    if isinstance(value, bool) and type_ != "boolean":
        return False
    return isinstance(value, _PY_TYPES.get(type_, (object,)))


def _unknown(name: str, catalog: _Catalog) -> str:
    close = difflib.get_close_matches(name, catalog.names(), n=3)
    return f"unknown tool {name!r}" + (f"; did you mean {', '.join(close)}?" if close else "")


def _call_problems(where: str, tool: str, args: Mapping[str, Any], catalog: _Catalog) -> list[str]:
    if tool not in catalog:
        return [f"{where}.tool: {_unknown(tool, catalog)}"]
    spec = catalog.get(tool)
    params = {p.name: p for p in spec.params}
    problems = [f"{where}.args.{a}: {tool!r} has no parameter {a!r} (parameters: {', '.join(params) or 'none'})"
                for a in args if a not in params]
    properties = spec.input_schema()["properties"]
    for a in args:
        if a not in params:
            continue
        if not _type_ok(args[a], params[a].type):
            problems.append(f"{where}.args.{a}: {args[a]!r} is not of type {params[a].type}")
            continue
        # The rest of the parameter's schema (its enum): a value it rejects no predicted call could match.
        problems += [f"{where}.args.{a}: {args[a]!r} violates the schema of {tool!r}: {error.message}"
                     for error in Draft202012Validator(properties[a]).iter_errors(args[a])]
    problems += [f"{where}.args: required parameter {p.name!r} of {tool!r} is missing"
                 for p in spec.params if p.required and not p.is_generic and p.name not in args]
    return problems


def _task_problems(task: Task, catalog: _Catalog) -> list[str]:
    problems = [f"available_tools: {_unknown(t, catalog)}" for t in task.available_tools if t not in catalog]
    for i, state_action in enumerate(task.system_state.actions):
        problems += _call_problems(f"system_state.actions.{i}", state_action.tool, state_action.args, catalog)
    pages_past_first = False
    for i, action in enumerate(task.golden_actions):
        problems += _call_problems(f"golden_actions.{i}", action.tool, action.args, catalog)
        if action.tool not in catalog:
            continue
        spec = catalog.get(action.tool)
        if spec.platform != _INTERNAL_PLATFORM and spec.platform not in task.platforms:
            problems.append(f"golden_actions.{i}.tool: {action.tool!r} is a {spec.platform!r} tool but the task's "
                            f"platforms are {list(task.platforms)}")
        page_params = [p.name for p in spec.params if str(p.kind) == "page_no"]
        pages_past_first |= any(isinstance(action.args.get(p), int) and action.args[p] > 1 for p in page_params)
    if pages_past_first and not task.pages:
        problems.append("pages: a golden action asks for a page past the first, so pages must be true")
    return problems


def validate_against_catalog(tasks: Iterable[Task], catalog: _Catalog) -> list[str]:
    """Check every tool name and argument of ``tasks`` against a tool catalog.

    Finds unknown tools (in available_tools, golden actions, system-state actions), arguments a tool
    does not take or of the wrong type, missing required (non-generic) parameters, golden tools from a
    platform the task does not list, and golden paging the ``pages`` flag does not admit.

    Args:
        tasks: validated tasks.
        catalog: an ``mcp_gateway.catalog.Catalog`` (anything with ``in``, ``get`` and ``names``).

    Returns:
        One line per problem, each starting with the task id and the field; empty when all is well.
    """
    return [f"task {task.id!r}: {problem}" for task in tasks for problem in _task_problems(task, catalog)]
