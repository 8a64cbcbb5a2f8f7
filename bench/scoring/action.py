"""ACTION: tool-call correctness and efficiency of a trajectory (paper Appendix B.4, Eq. 3).

    from bench.scoring.action import GoldenCall, PredictedCall, score_action
    score = score_action(
        golden=[GoldenCall("fillTank", {"amount": 20}, value_compare_args=("amount",))],
        predicted=[PredictedCall("fillTank", {"amount": 20}), PredictedCall("fillTank", {"amount": 10})],
        schemas={"fillTank": {"type": "object", "properties": {"amount": {"type": "integer"}},
                              "required": ["amount"]}},
        max_allowed_calls=4,
    )
    score.corr, score.eff, score.action  # 1.0, 0.75, 0.875

Correctness. Each golden action is looked for in the whole predicted trajectory, in any order. A
predicted call is compatible with a golden action when (BFCL's AST checker, applied to JSON values):

* the tool name is identical;
* every parameter the tool's input schema marks required is present;
* no parameter is unexpected, i.e. outside the schema's ``properties`` (the schema is the tool's
  signature; a golden action lists only the arguments it was annotated with, so an optional
  argument the annotator left out is not unexpected);
* each value has its schema type: ``integer`` takes ints only (not bools, not 20.0), ``number`` takes
  ints and floats, ``string`` / ``boolean`` / ``array`` / ``object`` / ``null`` take exactly that, a
  list of types takes any of them, and arrays and objects are checked item by item;
* each argument named in ``value_compare_args`` equals the golden value; strings compare as BFCL's
  ``standardize_string`` does (lower case, without spaces and ``,./-_*^``, single quotes as double),
  inside lists and dicts too; numbers compare by exact value: integers exactly (``2**53 + 1`` is not
  ``2**53``, as corporate codes and KRW amounts need), an int and a float only when they are the
  same number (``20 == 20.0``, which a ``number`` parameter admits); bools never equal numbers.

Each predicted call matches at most one golden action; the assignment is a maximum bipartite matching
(so two identical parallel golden calls need two predicted calls, and a greedy choice can never starve
a later golden action). Corr = matched / len(golden), and 1 when there are no golden actions.

Efficiency (Eq. 3): CR = 1 − Ndup/Ntotal, MPC = Nopt/Ntotal, Eff = (CR + MPC)/2, and Eff = 0 when
Ntotal > max_allowed_calls. Ntotal counts every predicted call (malformed ones too); Ndup counts the
calls that repeat an earlier call with the same tool and the same arguments (the first one is not
redundant) beyond the multiplicity the golden trajectory itself requires: when the golden calls
the same tool with the same arguments k times, the first k identical predicted calls are all needed,
and only the (k+1)-th and later are duplicates; Nopt defaults to the number of golden actions (Appendix D, "Headroom"). ACTION = (Corr +
Eff)/2. Two cases the paper leaves open: MPC is capped at 1 (a trajectory shorter than the golden one
has already lost on Corr, and an uncapped MPC would push ACTION above 1); an empty trajectory for a
task with golden actions gets CR = MPC = 0, since 0/0 says nothing and doing nothing is not efficient.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

__all__ = [
    "ActionScore",
    "ArgProblem",
    "CandidateCheck",
    "GoldenActionLike",
    "GoldenCall",
    "GoldenMatch",
    "Problem",
    "PredictedCall",
    "ToolCallLike",
    "check_call",
    "score_action",
]


class GoldenActionLike(Protocol):
    """What the scorer reads from a golden action; ``bench.task.GoldenAction`` has these fields."""

    @property
    def tool(self) -> str: ...
    @property
    def args(self) -> Mapping[str, Any]: ...
    @property
    def value_compare_args(self) -> Sequence[str]: ...
    @property
    def step(self) -> int: ...


class ToolCallLike(Protocol):
    """What the scorer reads from a predicted call. ``args`` is whatever the model sent."""

    @property
    def tool(self) -> str: ...
    @property
    def args(self) -> Any: ...


@dataclass(frozen=True)
class GoldenCall:
    """A golden action: the call, which of its arguments must match by value, and its step."""

    tool: str
    args: Mapping[str, Any]
    value_compare_args: Sequence[str] = ()
    step: int = 0


@dataclass(frozen=True)
class PredictedCall:
    """A call the model made. ``args`` is normally a dict; anything else (unparsable JSON) never matches."""

    tool: str
    args: Any


class Problem(StrEnum):
    """Why a predicted call to the right tool is not compatible with a golden action."""

    ARGS_NOT_OBJECT = "args_not_object"
    MISSING_PARAM = "missing_param"
    UNEXPECTED_PARAM = "unexpected_param"
    WRONG_TYPE = "wrong_type"
    WRONG_VALUE = "wrong_value"


@dataclass(frozen=True)
class ArgProblem:
    kind: Problem
    param: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind.value} {self.param!r}: {self.detail}"


@dataclass(frozen=True)
class CandidateCheck:
    """One predicted call to the golden action's tool, and what (if anything) keeps it from matching."""

    predicted_index: int
    problems: tuple[ArgProblem, ...]

    @property
    def compatible(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class GoldenMatch:
    """The outcome for one golden action."""

    golden_index: int
    step: int
    tool: str
    matched_index: int | None  # the predicted call assigned to it, or None
    candidates: tuple[CandidateCheck, ...]  # every predicted call to the same tool, in trajectory order

    @property
    def reason(self) -> str:
        if self.matched_index is not None:
            return f"matched predicted call #{self.matched_index}"
        if not self.candidates:
            return f"no predicted call to tool {self.tool!r}"
        compatible = [c.predicted_index for c in self.candidates if c.compatible]
        if compatible:
            return f"compatible calls {compatible} were all assigned to other golden actions"
        closest = min(self.candidates, key=lambda c: len(c.problems))
        return f"closest call #{closest.predicted_index}: " + "; ".join(map(str, closest.problems))


@dataclass(frozen=True)
class ActionScore:
    corr: float
    cr: float
    mpc: float
    eff: float
    action: float
    n_total: int
    n_dup: int
    n_opt: int
    max_allowed_calls: int
    matches: tuple[GoldenMatch, ...]

    @property
    def over_budget(self) -> bool:
        return self.n_total > self.max_allowed_calls


def score_action(
    golden: Sequence[GoldenActionLike],
    predicted: Sequence[ToolCallLike],
    schemas: Mapping[str, Mapping[str, Any]],
    max_allowed_calls: int,
    *,
    n_opt: int | None = None,
) -> ActionScore:
    """Score a trajectory against the golden actions (Appendix B.4).

    Args:
        golden: the task's golden actions, any order; parallel ones may share a step.
        predicted: the calls the model made, in order.
        schemas: JSON Schema of each tool's arguments by tool name; needed for every golden tool.
        max_allowed_calls: the task's call budget; more calls than this and Eff is 0.
        n_opt: the annotated optimal call count; the number of golden actions when None.

    Returns:
        Corr, CR, MPC, Eff, ACTION and a ``GoldenMatch`` per golden action.

    Raises:
        ValueError: a golden action's tool has no schema, a ``value_compare_args`` entry is not among
            its args, or ``max_allowed_calls`` / ``n_opt`` is negative.
    """
    if max_allowed_calls < 0:
        raise ValueError(f"max_allowed_calls must be >= 0, got {max_allowed_calls}")
    n_opt = len(golden) if n_opt is None else n_opt
    if n_opt < 0:
        raise ValueError(f"n_opt must be >= 0, got {n_opt}")
    for i, g in enumerate(golden):
        if g.tool not in schemas:
            raise ValueError(f"golden action #{i} (step {g.step}) calls {g.tool!r}, which has no input schema")
        stray = [a for a in g.value_compare_args if a not in g.args]
        if stray:
            raise ValueError(f"golden action #{i} ({g.tool}, step {g.step}): value_compare_args {stray} "
                             f"are not among its args {sorted(g.args)}")

    checks = [
        tuple(CandidateCheck(j, check_call(g, p, schemas[g.tool])) for j, p in enumerate(predicted) if p.tool == g.tool)
        for g in golden
    ]
    assigned = _maximum_matching([[c.predicted_index for c in cs if c.compatible] for cs in checks])
    matches = tuple(GoldenMatch(i, g.step, g.tool, assigned[i], checks[i]) for i, g in enumerate(golden))

    corr = sum(m.matched_index is not None for m in matches) / len(golden) if golden else 1.0
    n_total = len(predicted)
    required = Counter(_call_key(g) for g in golden)
    n_dup = sum(max(0, seen - max(1, required[key])) for key, seen in Counter(_call_key(p) for p in predicted).items())
    if n_total == 0:
        cr, mpc = (1.0, 1.0) if n_opt == 0 else (0.0, 0.0)
    else:
        cr, mpc = 1.0 - n_dup / n_total, min(1.0, n_opt / n_total)
    eff = 0.0 if n_total > max_allowed_calls else (cr + mpc) / 2
    return ActionScore(corr=corr, cr=cr, mpc=mpc, eff=eff, action=(corr + eff) / 2, n_total=n_total, n_dup=n_dup,
                       n_opt=n_opt, max_allowed_calls=max_allowed_calls, matches=matches)


def check_call(golden: GoldenActionLike, call: ToolCallLike, schema: Mapping[str, Any]) -> tuple[ArgProblem, ...]:
    """Every problem that keeps ``call`` from matching ``golden`` (empty: compatible). Names must already agree."""
    args = call.args
    if not isinstance(args, Mapping):
        return (ArgProblem(Problem.ARGS_NOT_OBJECT, "", f"arguments are {type(args).__name__}, not an object"),)
    properties: Mapping[str, Any] = schema.get("properties", {})
    problems = [ArgProblem(Problem.MISSING_PARAM, name, "required by the schema")
                for name in schema.get("required", ()) if name not in args]
    for name, value in args.items():
        if name not in properties:
            problems.append(ArgProblem(Problem.UNEXPECTED_PARAM, name, "not in the tool's schema"))
            continue
        type_error = _type_error(value, properties[name])
        if type_error:
            problems.append(ArgProblem(Problem.WRONG_TYPE, name, type_error))
    for name in golden.value_compare_args:
        if name not in args:
            if name not in schema.get("required", ()):  # a missing required one is already reported
                problems.append(ArgProblem(Problem.MISSING_PARAM, name, "compared by value but not sent"))
        elif _standardize(args[name]) != _standardize(golden.args[name]):
            problems.append(ArgProblem(Problem.WRONG_VALUE, name,
                                       f"got {args[name]!r}, expected {golden.args[name]!r}"))
    return tuple(problems)


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "array": (list, tuple), "object": (dict,), "null": (type(None),),
}


def _type_error(value: Any, schema: Mapping[str, Any]) -> str | None:
    """BFCL's type check on JSON values: exact types (bool is not an int), ints allowed for number."""
    declared = schema.get("type")
    if declared is None or declared == "any":
        return None
    names = [declared] if isinstance(declared, str) else list(declared)
    unknown = [n for n in names if n not in _JSON_TYPES]
    if unknown:
        raise ValueError(f"schema type {unknown} is not a JSON Schema type; use one of {sorted(_JSON_TYPES)}")
    if not any(type(value) in _JSON_TYPES[n] for n in names):
        return f"expected {'/'.join(names)}, got {_json_type_name(value)} {value!r}"
    if isinstance(value, (list, tuple)) and "items" in schema:
        for k, item in enumerate(value):
            error = _type_error(item, schema["items"])
            if error:
                return f"item {k}: {error}"
    if isinstance(value, dict):
        for key, item in value.items():
            sub = schema.get("properties", {}).get(key)
            error = _type_error(item, sub) if sub is not None else None
            if error:
                return f"key {key!r}: {error}"
    return None


def _json_type_name(value: Any) -> str:
    for name, types in _JSON_TYPES.items():
        if type(value) in types and not (name == "number" and type(value) is int):
            return name
    return type(value).__name__


_BFCL_STRIP = re.compile(r"[ ,./\-_*^]")


def _standardize(value: Any) -> Any:
    """A comparable form: BFCL's string standardization, applied inside lists and dicts."""
    if isinstance(value, str):
        return ("str", _BFCL_STRIP.sub("", value).lower().replace("'", '"'))
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("num", value)  # exact: Python compares int with int, and int with float, without rounding
    if isinstance(value, float):
        return ("num", value if math.isfinite(value) else repr(value))
    if isinstance(value, (list, tuple)):
        return ("list", tuple(_standardize(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((str(k), _standardize(v)) for k, v in value.items())))
    return ("other", repr(value))


def _call_key(call: ToolCallLike | GoldenActionLike) -> tuple[str, str]:
    """Identity for duplicate counting: the tool and its exact arguments (key order ignored)."""
    try:
        body = json.dumps(call.args, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        body = repr(call.args)
    return call.tool, body


def _maximum_matching(edges: list[list[int]]) -> list[int | None]:
    """Kuhn's augmenting paths: golden i -> one of edges[i]; earlier calls are preferred, deterministically."""
    owner: dict[int, int] = {}  # predicted index -> golden index

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(edges)):
        augment(i, set())
    assigned: list[int | None] = [None] * len(edges)
    for j, i in owner.items():
        assigned[i] = j
    return assigned
