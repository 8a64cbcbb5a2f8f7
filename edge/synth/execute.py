"""Run a trajectory for real through the bench-profile runtime, as a ``Draft`` (golden calls, key placeholders).

    executed = await run_chain(draft, walk, want=TaskType.DRV, rng=rng)       # a sequential walk over G*
    executed = await run_semantic(draft, graph, rng) / run_comparison(...) / run_conditional(...)

A chain calls the walk's start tool, then crosses each edge: the cardinality n of the bound field's values
in the source's records types the junction (SEQ passes the one value, FAN calls the target once per value in
one parallel step, DRV first selects records by an operator computed here from the real records). The
wanted type steers what a junction may be: a junction that would change the type ends the chain there (or
abandons it when it is the first). A later hop that fails (no record, too many pages, no operator) ends the chain
at the hop before it, its calls taken back from the draft: a long walk is not thrown away for its last edge. A
MIXED chain goes on past a fan-out: every branch crosses the next edge with its one value, in one parallel step. The non-sequential templates call tools with inputs Phase A saw work:
SEM two tools with shared arguments in parallel, CMP one tool with different arguments in parallel, COND a
check on one call's result deciding which of two calls runs next.

Every golden call must be a semantic success with records, and a result may span at most ``MAX_PAGES``
pages; anything else raises ``Abandon`` with the reason. The ``Trace`` holds what the realiser may say
(start inputs, tools, fields, operators, pivots) and the values that crossed junctions, which it must not; and,
for a user-given identifier no user knows, the name the world's records give it (``spoken``: a district code's
district, a rest-area code's rest area), so the question can name the thing instead of citing its code.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench.taskset.draft import MAX_PAGE, Draft, DraftError
from edge.graph.executor import bind_arguments
from mcp_gateway.runtime.result import Outcome

from .item import FAN_BUDGET, FinalType, Junction, JunctionType, TaskType
from .junctions import EXTREMES, as_date, as_number, derive, distinct_values, junction_type, pivots
from .user_terms import compass, name_field, opaque, position_field, spoken_code
from .walk import LiveGraph, Walk

__all__ = ["MAX_PAGES", "Abandon", "Executed", "Hop", "Trace", "classify", "run_chain", "run_comparison",
           "run_conditional", "run_semantic", "untied"]

MAX_PAGES = 3  # a result needing more pages makes a trajectory too long to be a useful item
_CODE_LIKE = re.compile(r"(cd|code|no|id|seq|num|yn|url|link|tel|addr)$", re.IGNORECASE)


class Abandon(Exception):
    """The walk or template cannot become an item; the message is the reason (counted by the builder)."""


@dataclass(frozen=True)
class Hop:
    junction: Junction
    given: dict[str, Any]  # target parameters filled from the plan's candidates (the user states them)
    op_field: str | None = None  # the field a DRV operator reads (may differ from the bound field)
    values: tuple[str, ...] = ()  # bound values that went on (after a DRV's selection)
    each: bool = False  # crossed by every branch of an earlier fan-out
    fanned: bool = False  # ... and each branch called the target once for each of its values (not one)


@dataclass
class Trace:
    kind: str  # chain | sem | cmp | cond
    start: str
    start_args: dict[str, Any]
    hops: list[Hop] = field(default_factory=list)
    final: dict[str, Any] = field(default_factory=dict)
    others: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    bound_values: list[str] = field(default_factory=list)
    spoken: dict[str, tuple[str, str]] = field(default_factory=dict)  # opaque given value → (name's label, name)
    named_from: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # value → (tool, code field, name field)
    lookups: list[Hop] = field(default_factory=list)  # name → code calls added before a named value's first use

    def user_given(self) -> set[str]:
        """The values the question states: the start inputs and every hop's user-given arguments."""
        return {str(v) for v in [*self.start_args.values(), *(v for h in self.hops for v in h.given.values())]}

    def name_identifiers(self, spec: Any, args: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> None:
        """Learn the world's names for the opaque identifiers among ``args``, from the records they returned."""
        for param, value in sorted(args.items()):
            p = spec.param(param)
            if p is not None and not p.is_generic and opaque(p, value) and str(value).strip() not in self.spoken:
                if (found := name_field(spec, param, value, records)) is not None:
                    code, name, what, said = found
                    self.spoken[str(value).strip()] = (what, said)
                    self.named_from[str(value).strip()] = (spec.name, code, name)


@dataclass
class Executed:
    trace: Trace
    junctions: list[Junction]
    final: FinalType | None
    task_type: TaskType
    recipe: dict[str, Any]  # call indices are the draft's (``answer.remap`` turns them into golden ones)
    answer: tuple[str, ...]  # accepted answers, the first the canonical one
    number: bool
    expression: str | None = None  # the answer's calculation (``answer.arithmetic``): a closing evaluate_expression


def classify(junctions: Sequence[Junction], final: FinalType | None) -> TaskType:
    """Table 12's class: one pattern gives its name, several give MIXED.

    Patterns are the junction types crossed and a CMP or COND final. A junction is typed by the cardinality of
    its field (§3.3), so a DRV whose selection keeps several values (≤ φ), one downstream call each, is the DRV
    pattern alone: the paper's DRV items are single-junction trajectories (§5: FAN and DRV are 398 of its 613
    single-junction sequential ones). A SEM final is the plain lookup that ends every chain: it is a pattern of
    its own only in a trajectory without junctions (the semantic-parallel template).
    """
    patterns = list(dict.fromkeys(j.type.value for j in junctions))
    if final in (FinalType.CMP, FinalType.COND) or (final is FinalType.SEM and not junctions):
        patterns.append(final.value)
    if not patterns:
        raise ValueError("a trajectory without junctions needs a SEM, CMP or COND final")
    return TaskType(patterns[0]) if len(patterns) == 1 else TaskType.MIXED


# ----------------------------------------------------------------------------------------------- calls


async def fetch(draft: Draft, tool: str, args: dict[str, Any], step: int) -> tuple[list[dict[str, Any]], list[int], int]:
    """Every record of one result as golden calls: page 1 at ``step``, the rest together at ``step + 1``.

    Returns (records, the draft's call indices, the next free step).
    """
    spec = draft.spec(tool)
    size = spec.endpoint.max_page_size if spec.endpoint is not None else MAX_PAGE
    first = await _call(draft, tool, args, step, 1, size)
    pages = math.ceil((first.total_count or len(first.records)) / size)
    if pages > MAX_PAGES:
        raise Abandon(f"{tool} returned {first.total_count} records, {pages} pages (at most {MAX_PAGES})")
    records, calls = list(first.records), [len(draft.calls) - 1]
    for page in range(2, pages + 1):
        records += (await _call(draft, tool, args, step + 1, page, size)).records
        calls.append(len(draft.calls) - 1)
    return records, calls, step + (2 if pages > 1 else 1)


async def _call(draft: Draft, tool: str, args: dict[str, Any], step: int, page: int, size: int) -> Any:
    try:
        result = await draft.call(tool, args, step=step, page=page, size=size)
    except DraftError as exc:
        raise Abandon(f"call failed: {exc}") from None
    if result.outcome is not Outcome.SEMANTIC_SUCCESS:
        raise Abandon(f"{tool}({args}) was a {result.outcome.value}, not a semantic success")
    if not result.records:
        raise Abandon(f"{tool}({args}) returned no record")
    return result


# ----------------------------------------------------------------------------------------------- fields


# what identifies or reaches one record (a person's Hanja name, their aides, a phone number) or remarks on it,
# rather than sorting records into kinds: no user selects "the member whose 한자 이름 is 李亨賢", "whose 비서관 is
# 허용영" or "the filings whose 비고 is 연" (DART's one-letter remark marks)
_RECORD_DETAIL = ("코드", "번호", "ID", "주소", "URL", "한자", "영문", "보좌관", "비서관", "전화", "이메일", "팩스",
                  "호실", "홈페이지", "사진", "비고")


def _code_like(name: str, description: str) -> bool:
    return bool(_CODE_LIKE.search(name)) or any(w in description for w in _RECORD_DETAIL)


# where a record is on the map: a user asks for a place's coordinates and picks the northernmost or westernmost
# (``compass``), but selects no bank by "경도가 126.924229를 넘지 않는"; a bare X/Y is no direction at all
_COORDINATE = re.compile(r"위도|경도|좌표")


def _descriptions(draft: Draft, tool: str) -> dict[str, str]:
    return {f.name: f.description_ko for f in draft.spec(tool).output}


def _numeric(records: Sequence[Mapping[str, Any]], name: str) -> bool:
    values = [r.get(name) for r in records if r.get(name) not in (None, "")]
    return len(values) >= 2 and all(as_number(v) is not None for v in values) and len(set(map(str, values))) >= 2


def _dated(records: Sequence[Mapping[str, Any]], name: str) -> bool:
    values = [r.get(name) for r in records if r.get(name) not in (None, "")]
    return len(values) >= 2 and all(as_date(v) is not None for v in values)


def _enum(records: Sequence[Mapping[str, Any]], name: str) -> bool:
    return 2 <= len(distinct_values(records, name)) <= 12


def derivations(draft: Draft, tool: str, records: Sequence[Mapping[str, Any]],
                bound: str) -> dict[str, list[tuple[str, Any]]]:
    """Operator → the (field, pivot) choices that leave 1..φ distinct bound values (the bounded subset).

    A threshold, equality or date operator takes the pivots that leave 2..φ values where its field has any, and
    those that leave one only where it has none: a process node that narrows thousands of records to a handful
    and calls the next tool for each is the paper's DRV (§3.3, "selects a bounded subset"); max, min and
    most-frequent select one by definition, and they stay in the operator mix.
    """
    described = _descriptions(draft, tool)
    limit = FAN_BUDGET
    out: dict[str, list[tuple[str, Any]]] = {}

    def pivoted(op: str, name: str) -> list[Any]:
        return (pivots(records, op, field=name, bound=bound, phi=limit, least=2)
                or pivots(records, op, field=name, bound=bound, phi=limit))

    def keep(op: str, name: str, pivot: Any = None) -> None:
        if _keeps_a_few(records, op, name, pivot, bound):
            out.setdefault(op, []).append((name, pivot))

    for name, description in sorted(described.items()):
        extreme_only = position_field(description) or compass(description) is not None  # no 'order ≥ 296'
        if name == bound or _code_like(name, description) or (_COORDINATE.search(description) and not extreme_only):
            continue
        if _numeric(records, name) and not _dated(records, name):
            for op in ("max", "min"):
                keep(op, name)
            for op in () if extreme_only else ("ge", "le"):
                for pivot in pivoted(op, name):
                    out.setdefault(op, []).append((name, pivot))
        elif _dated(records, name):
            for op in ("latest", "earliest"):
                keep(op, name)
            for pivot in pivoted("date_after", name):
                out.setdefault("date_after", []).append((name, pivot))
        elif _enum(records, name):
            for pivot in pivoted("eq", name):
                out.setdefault("eq", []).append((name, pivot))
    keep("most_frequent", bound)
    return out


def _primary(plan: Sequence[Mapping[str, Any]], records: Sequence[Mapping[str, Any]]) -> tuple[str, str] | None:
    """(param, field) of the plan's upstream binding whose field takes the most distinct values in the records (the
    first in plan order on a tie): the one that picks what the target is asked about. A vote list hands on the
    assembly term every record shares and the bill's id: the junction is the bill's (892 values, a DRV), not the
    term's (one value, which made "one bill" a record-order pick no question could say)."""
    best: tuple[int, str, str] | None = None
    for source in plan:
        if source["kind"] == "upstream" and (n := len(distinct_values(records, source["field"]))):
            if best is None or n > best[0]:
                best = (n, source["param"], source["field"])
    return None if best is None else best[1:]


def _check_determined(plan: Sequence[Mapping[str, Any]], records: Sequence[Mapping[str, Any]], bound: str,
                      value: str, edge: Any) -> None:
    """Every other upstream field the plan binds takes one value over the records carrying ``value`` in ``bound``:
    else which one the target is asked with would be the first record's, a pick no question can say.

    Raises:
        Abandon: another bound field varies with the same ``value``.
    """
    carrying = [r for r in records if str(r.get(bound)).strip() == value]
    for source in plan:
        if source["kind"] == "upstream" and source["field"] != bound \
                and len(distinct_values(carrying, source["field"])) > 1:
            raise Abandon(f"{edge.source} → {edge.target}: {source['field']} varies among the records whose {bound} "
                          f"is {value!r}")


def _label_field(draft: Draft, tool: str, records: Sequence[Mapping[str, Any]], bound: str) -> str:
    """A name-like field to label a branch by (the answer a CMP gives), else the bound field."""
    for name, description in sorted(_descriptions(draft, tool).items()):
        if name != bound and ("명" in description or "이름" in description) and not _code_like(name, description) \
                and distinct_values(records, name):
            return name
    return bound


# ------------------------------------------------------------------------------------------------ chain


def _allowed(want: TaskType, jt: JunctionType, crossed: Sequence[Junction]) -> bool:
    if want is TaskType.SEQ:
        return jt is JunctionType.SEQ
    if want is TaskType.FAN:
        return jt is JunctionType.FAN and not crossed
    if want is TaskType.DRV:
        return jt is JunctionType.DRV if not crossed else jt is JunctionType.SEQ
    return True  # MIXED: anything; past a fan-out, each branch goes on alone (_hop_each)


async def run_chain(draft: Draft, walk: Walk, *, want: TaskType, rng: np.random.Generator) -> Executed:
    """Execute ``walk`` steering it toward ``want`` (SEQ, FAN, DRV or MIXED)."""
    records, calls, step = await fetch(draft, walk.start, walk.start_args, 0)
    trace = Trace("chain", walk.start, dict(walk.start_args))
    trace.name_identifiers(draft.spec(walk.start), walk.start_args, records)
    junctions: list[Junction] = []
    branches: list[tuple[str, list[dict[str, Any]], list[int]]] = [("", records, calls)]
    for edge in walk.edges:
        cross = _hop if len(branches) == 1 else _hop_each
        if not junctions:  # the first hop makes or breaks the attempt
            step, branches, stop = await cross(draft, edge, trace, junctions, branches, step, want, rng)
        else:  # a later one that fails ends the chain at the hop before it, its calls taken back
            mark = _Mark.of(draft, trace)
            try:
                step, branches, stop = await cross(draft, edge, trace, junctions, branches, step, want, rng)
            except Abandon:
                mark.restore(draft, trace)
                break
        if stop:
            break
    if not junctions:
        raise Abandon(f"{walk.start}: the walk crossed no junction")
    return _chain_final(draft, trace, junctions, branches, want, rng)


@dataclass(frozen=True)
class _Mark:
    """How far the draft and the trace were before a hop (to take a failed later hop back)."""

    calls: int
    platforms: int
    bound: int

    @classmethod
    def of(cls, draft: Draft, trace: Trace) -> _Mark:
        return cls(len(draft.calls), len(draft.platforms), len(trace.bound_values))

    def restore(self, draft: Draft, trace: Trace) -> None:
        del draft.calls[self.calls:]
        del draft.platforms[self.platforms:]
        del trace.bound_values[self.bound:]
        for extra in ("page_records", "invocations"):  # SynthDraft's per-call lists
            if isinstance(getattr(draft, extra, None), list):
                del getattr(draft, extra)[self.calls:]


async def _hop(draft: Draft, edge: Any, trace: Trace, junctions: list[Junction], branches: list, step: int,
               want: TaskType, rng: np.random.Generator) -> tuple[int, list, bool]:
    """Cross one edge: (next step, the branches after it, whether the chain stops)."""
    source_records = branches[0][1]
    primary = _primary(edge.plan, source_records)
    if primary is None:
        raise Abandon(f"{edge.source} → {edge.target}: no bound field has a value in the records")
    param, bound = primary
    values = distinct_values(source_records, bound)
    jt = junction_type(len(values))
    if not _allowed(want, jt, junctions):
        if junctions:
            return step, branches, True
        raise Abandon(f"{want.value} wanted, but the first junction {edge.source}.{bound} is {jt.value} "
                      f"(n={len(values)})")
    operator = pivot = op_field = None
    chosen = values
    if jt is JunctionType.DRV:
        options = derivations(draft, edge.source, source_records, bound)
        if not options:
            raise Abandon(f"{edge.source}.{bound} (n={len(values)}): no DRV operator selects ≤ φ values")
        # one selection drawn uniformly among every (operator, field, pivot) the records allow: a field with many
        # pivots offers many bounded subsets, and max, min and most-frequent one each
        selections = [(op, name, value) for op in sorted(options) for name, value in options[op]]
        operator, op_field, pivot = selections[int(rng.integers(len(selections)))]
        chosen = distinct_values(derive(source_records, operator, field=op_field, pivot=pivot), bound)
    spec = draft.spec(edge.target)
    label_field = _label_field(draft, edge.source, source_records, bound)
    next_branches = []
    given: dict[str, Any] = {}
    for value in chosen:
        _check_determined(edge.plan, source_records, bound, value, edge)
        representative = next(r for r in source_records if str(r.get(bound)).strip() == value)
        args = bind_arguments(edge.plan, representative, spec, rng)
        given = {s["param"]: args[s["param"]] for s in edge.plan if s["kind"] != "upstream" and s["param"] in args}
        trace.bound_values += _check_informative(edge, args, spec, value, trace)
        got, got_calls, after = await fetch(draft, edge.target, args, step)
        trace.name_identifiers(spec, given, got)
        label = str(representative.get(label_field) or value)
        next_branches.append((label, got, got_calls))
    step = after if len(chosen) == 1 else step + 1 + any(len(c) > 1 for _, _, c in next_branches)
    junction = Junction(source=edge.source, target=edge.target, field=bound, param=param,
                        cardinality=len(values), type=jt, operator=operator, pivot=pivot)
    junctions.append(junction)
    trace.hops.append(Hop(junction, given, op_field, tuple(chosen)))
    if len(next_branches) > 1:  # only a MIXED chain goes on past a fan-out, each branch on its own
        return step, next_branches, want is not TaskType.MIXED
    return step, next_branches, False


async def _hop_each(draft: Draft, edge: Any, trace: Trace, junctions: list[Junction], branches: list, step: int,
                    want: TaskType, rng: np.random.Generator) -> tuple[int, list, bool]:
    """Cross one edge from every branch of a fan-out, in one parallel step, every branch asking the target for the
    same user-given arguments, so one question covers all. A branch carrying one value crosses a SEQ junction. Where
    branches carry 2..φ values, each value of each branch is called: a fan-out inside each branch ("each member's
    sponsored bills, each bill's detail"). Where they carry more than φ, one selection applies in each: one that
    keeps one value (its largest, smallest, latest, earliest or most frequent: "each member's bill referred last") or
    a threshold that keeps 1..φ in every branch ("each member's bills proposed after …", a fan-out inside each
    branch again): a DRV junction in the middle of the chain.

    A fan-out inside the branches makes one branch per value; the chain ends in their sum (``_chain_final``), and no
    fan-out goes inside those (at most φ × φ calls a step).
    """
    spec = draft.spec(edge.target)
    bounds = []
    for _, records, _ in branches:
        if (primary := _primary(edge.plan, records)) is None:
            raise Abandon(f"{edge.source} → {edge.target}: a branch's records fill no bound field")
        bounds.append(primary)
    if len(set(bounds)) > 1:
        raise Abandon(f"{edge.source} → {edge.target}: the branches cross it by different fields")
    (param, bound), = set(bounds)
    counts = [len(distinct_values(records, bound)) for _, records, _ in branches]
    operator = op_field = pivot = None
    if max(counts) > FAN_BUDGET:
        operator, op_field, pivot = _selection_in_each(draft, edge.source, [records for _, records, _ in branches],
                                                       bound, counts, rng)
    picked = [records if operator is None else derive(records, operator, field=op_field, pivot=pivot)
              for _, records, _ in branches]
    fanned = any(len(distinct_values(records, bound)) > 1 for records in picked)
    if fanned and any(h.fanned for h in trace.hops):
        raise Abandon(f"{edge.source} → {edge.target}: a fan-out inside branches that are a fan-out's inside a fan-out")
    next_branches, givens = [], []
    for (label, _, _), records in zip(branches, picked):
        label_field = _label_field(draft, edge.source, records, bound) if fanned else None
        for value in distinct_values(records, bound):
            _check_determined(edge.plan, records, bound, value, edge)
            representative = next(r for r in records if str(r.get(bound)).strip() == value)
            args = bind_arguments(edge.plan, representative, spec, rng)
            givens.append({s["param"]: args[s["param"]] for s in edge.plan
                           if s["kind"] != "upstream" and s["param"] in args})
            trace.bound_values += _check_informative(edge, args, spec, value, trace)
            got, got_calls, _ = await fetch(draft, edge.target, args, step)
            trace.name_identifiers(spec, givens[-1], got)
            sub = f" {representative.get(label_field) or value}" if label_field else ""
            next_branches.append((f"{label}{sub}", got, got_calls))
    if any(g != givens[0] for g in givens):
        raise Abandon(f"{edge.source} → {edge.target}: the branches ask it with different arguments")
    n = max(counts)
    junction = Junction(source=edge.source, target=edge.target, field=bound, param=param, cardinality=n,
                        type=junction_type(n), operator=operator, pivot=pivot)
    junctions.append(junction)
    trace.hops.append(Hop(junction, givens[0], op_field, (), each=True, fanned=fanned))
    return step + 1 + any(len(c) > 1 for _, _, c in next_branches), next_branches, False


# the operators that select one value: usable in every branch alike
_ONE_VALUE = ("max", "min", "latest", "earliest", "most_frequent")
# the operators that keep the records past a pivot: usable in every branch where each keeps 1..φ values
_THRESHOLDS = ("ge", "le", "date_after", "eq")


def _selects_one(records: Sequence[Mapping[str, Any]], operator: str, name: str, bound: str) -> bool:
    """``operator`` on ``name`` keeps one ``bound`` value of ``records``, and by what it says: no other value ties
    with the largest (smallest, latest, earliest) or with the most frequent one. ``derive`` breaks a tie by record
    order, which no question can say."""
    if len(distinct_values(derive(records, operator, field=name), bound)) != 1:  # what the chain hands on
        return False
    if operator == "most_frequent":
        counts = Counter(str(r.get(name)).strip() for r in records if r.get(name) not in (None, ""))
        top = counts.most_common(2)
        return len(top) == 1 or top[0][1] > top[1][1]
    read, pick = EXTREMES[operator]
    scored = [(v, r) for r in records if (v := read(r.get(name))) is not None]
    best = pick(v for v, _ in scored)
    return len(distinct_values([r for v, r in scored if v == best], bound)) == 1


def _keeps_a_few(records: Sequence[Mapping[str, Any]], operator: str, name: str, pivot: Any, bound: str) -> bool:
    """``operator`` on ``name`` (at ``pivot``, for a threshold) keeps 1..φ ``bound`` values of ``records``."""
    return 1 <= len(distinct_values(derive(records, operator, field=name, pivot=pivot), bound)) <= FAN_BUDGET


def _selection_in_each(draft: Draft, tool: str, branches: Sequence[Sequence[Mapping[str, Any]]], bound: str,
                       counts: Sequence[int], rng: np.random.Generator) -> tuple[str, str, Any]:
    """(operator, field, pivot) of one selection that applies alike in every branch, drawn uniformly among those
    that do: one that leaves exactly one ``bound`` value in each (pivot None), or a threshold (its pivot found on the
    widest branch) that leaves 1..φ in each. The junction is typed by its widest branch (§3.3: DRV past φ values); a
    narrower branch goes through the same selection.

    Raises:
        Abandon: no selection applies in every branch.
    """
    widest = branches[counts.index(max(counts))]
    options = derivations(draft, tool, widest, bound)
    choices = [(op, name, None) for op in _ONE_VALUE for name, _ in options.get(op, ())
               if all(_selects_one(records, op, name, bound) for records in branches)]
    choices += [(op, name, pivot) for op in _THRESHOLDS for name, pivot in options.get(op, ())
                if all(_keeps_a_few(records, op, name, pivot, bound) for records in branches)]
    if not choices:
        raise Abandon(f"{tool}.{bound} (n={max(counts)}): no selection applies in every branch")
    return choices[int(rng.integers(len(choices)))]


def _check_informative(edge: Any, args: Mapping[str, Any], spec: Any, key: str, trace: Trace) -> list[str]:
    """The values crossing a junction (``args``: the target's, bound from the source's records), once it is known to
    hand on something the trajectory did not know before its source's call. One whose every crossing value the
    question gives is decorative; so is a relay, whose key (``key``: the value of the bound field that types it) an
    earlier junction already handed on (a rest area's code passed from its menus to its conveniences, a district code
    from one year's table to the next), or the question gave while the other values only narrow the target's call
    (a law's promulgation number from one law search to the other, with the ministry's code as a filter): the target
    could have been asked with the key directly. The other values crossing beside such a key (the rest area's name,
    the law's ministry) are the same entity's. A new value the target requires (a bill's id beside the assembly term
    the question gave) is what the junction discovers: that one stays.

    Raises:
        Abandon: the junction is decorative.
    """
    upstream = [s["param"] for s in edge.plan if s["kind"] == "upstream" and s["param"] in args]
    crossing = [str(args[p]) for p in upstream]
    given = trace.user_given()
    if set(crossing) <= given:
        raise Abandon(f"{edge.source} → {edge.target}: every value crossing it is one the question gives")
    if key in given and not any((p := spec.param(name)) is not None and p.required and str(args[name]) not in given
                                for name in upstream):
        raise Abandon(f"{edge.source} → {edge.target}: a relay, its key {key!r} is one the question gives")
    if key in trace.bound_values:
        raise Abandon(f"{edge.source} → {edge.target}: a relay, its key {key!r} crossed an earlier junction")
    return crossing


def _chain_final(draft: Draft, trace: Trace, junctions: list[Junction], branches: list, want: TaskType,
                 rng: np.random.Generator) -> Executed:
    if len(branches) > 1:
        groups = [{"label": label, "calls": calls} for label, _, calls in branches]
        counts = [len(records) for _, records, _ in branches]
        # comparing the branches adds a pattern; FAN alone sums them, and so does a chain whose branches all returned
        # as many records: their comparison answers 0 whatever was asked (a bill's detail is one record per bill;
        # 258 of 1,029 items, 2026-12-07)
        # a fan-out within a fan-out's branches is summed: a CMP would answer a branch-within-a-branch's label
        if want is TaskType.MIXED and len(set(counts)) > 1 and not any(h.fanned for h in trace.hops):
            pick = untied(("max", "min", "diff")[int(rng.integers(3))], counts)
            recipe = {"op": "compare", "groups": groups, "measure": "count", "pick": pick}
            trace.final = {"kind": "compare", "pick": pick, "tool": junctions[-1].target}
            final = FinalType.CMP
        else:
            recipe = {"op": "count", "calls": [i for g in groups for i in g["calls"]]}
            trace.final = {"kind": "sum", "tool": junctions[-1].target}
            final = FinalType.SEM
        return _executed(trace, junctions, final, recipe, branches)
    _, records, calls = branches[0]
    tool = junctions[-1].target
    lookup = _lookup(draft, tool, records, calls, trace, rng)
    single = classify(junctions, FinalType.SEM)
    if want is TaskType.MIXED and single is not TaskType.MIXED:
        if lookup[0]["op"] != "field":  # "if there are 23 or more, the count; else just the count" asks no condition
            raise Abandon(f"{tool}: a threshold would decide between the count and the count (no one-valued field)")
        n = len(records)  # a COND final turns a one-pattern chain into a MIXED one
        threshold = max(1, n + int(rng.integers(-1, 2)))
        cmp = ("ge", "le")[int(rng.integers(2))]
        holds = n >= threshold if cmp == "ge" else n <= threshold
        count = {"op": "count", "calls": calls}
        recipe = {"op": "cond", "test": {"calls": calls, "measure": "count", "cmp": cmp, "threshold": threshold},
                  "taken": "then" if holds else "else", "then": lookup[0], "else": count}
        trace.final = {"kind": "cond_tail", "tool": tool, "cmp": cmp, "threshold": threshold, "then": lookup[1]}
        return _executed(trace, junctions, FinalType.COND, recipe, branches)
    trace.final = lookup[1]
    return _executed(trace, junctions, FinalType.SEM, lookup[0], branches)


def untied(pick: str, counts: Sequence[int]) -> str:
    """``pick`` ("max", "min" or "diff") where it names one branch, else the other extreme that does, else "diff",
    which is always one number. A tie at the last step had abandoned chains after all their calls were made: 12 of
    40 MIXED attempts walking 4 edges from the assembly's committee list (committee → members → … → bills)."""
    for option in (pick, "max", "min"):
        if option == "diff" or counts.count((max if option == "max" else min)(counts)) == 1:
            return option
    return "diff"


def _lookup(draft: Draft, tool: str, records: list[dict[str, Any]], calls: list[int], trace: Trace,
            rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, Any]]:
    """(recipe, final description) of a plain lookup: a field with one value over the records, else the count."""
    described = _descriptions(draft, tool)
    bound = set(trace.bound_values)
    fields = [name for name, d in sorted(described.items())
              if not _code_like(name, d) and len(values := distinct_values(records, name)) == 1
              and values[0] not in bound and len(values[0]) <= 60]
    if fields and rng.random() < 0.6:
        name = fields[int(rng.integers(len(fields)))]
        kind = "number" if as_number(records[0].get(name)) is not None else "string"
        return ({"op": "field", "calls": calls, "field": name, "type": kind},
                {"kind": "field", "tool": tool, "field": name})
    return {"op": "count", "calls": calls}, {"kind": "count", "tool": tool}


def _executed(trace: Trace, junctions: list[Junction], final: FinalType, recipe: dict[str, Any],
              branches: list) -> Executed:
    from .answer import arithmetic, recompute, response_type

    by_call: dict[int, list[dict[str, Any]]] = {}
    for _, records, calls in branches:
        by_call[calls[0]] = records  # page 1's index carries every page's records; the other pages none
        for extra in calls[1:]:
            by_call[extra] = []
    flat = _records_view(recipe, by_call)
    answer = _safe(recompute, recipe, flat)
    return Executed(trace, junctions, final, classify(junctions, final), recipe,
                    (answer,), response_type(recipe).value == "number", arithmetic(recipe, flat))


def _records_view(recipe: Mapping[str, Any], by_call: Mapping[int, list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    """A records-by-call list for the draft indices the recipe reads (others empty)."""
    size = max(by_call, default=-1) + 1
    return [by_call.get(i, []) for i in range(size)]


def _safe(fn: Any, *args: Any) -> str:
    from .answer import RecipeError

    try:
        return fn(*args)
    except RecipeError as exc:
        raise Abandon(f"no single answer: {exc}") from None


# -------------------------------------------------------------------------------------- templates


def _tools_with_inputs(graph: LiveGraph) -> list[str]:
    return sorted(graph.inputs)


COND_PARTNERS = 6  # a COND's branches are drawn from the check's this many closest tools of its platform


def _title_words(spec: Any) -> set[str]:
    """The words of a tool's title, its description's first sentence ('서울시 노원구 미용업 인허가 정보')."""
    return set(re.split(r"[\s,·()]+", spec.description_ko.split(".")[0])) - {""}


def _sharing(graph: LiveGraph, tool: str, given: Mapping[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    """Known inputs of ``tool`` that share the most values with ``given`` (the same city, and the same status too
    where they can), drawn uniformly among those; any known inputs where none shares one."""
    said = {str(v) for v in given.values()}
    shared = [len(said & {str(v) for v in a.values()}) for a in graph.inputs[tool]]
    if not shared or max(shared) == 0:
        return graph.start_args(tool, rng)
    best = [a for a, n in zip(graph.inputs[tool], shared) if n == max(shared)]
    return dict(best[int(rng.integers(len(best)))])


def _params(draft: Draft, tool: str) -> set[str]:
    return {p.name for p in draft.spec(tool).params if not p.is_generic}


async def run_semantic(draft: Draft, graph: LiveGraph, rng: np.random.Generator) -> Executed:
    """SEM: two or three tools of one platform called in parallel with the same (user-given) arguments; their
    records counted together (the paper's template fixes no number of targets, and its answers enumerate them)."""
    tools = _tools_with_inputs(graph)
    if not tools:
        raise Abandon("no tool with known inputs")
    first = tools[int(rng.integers(len(tools)))]
    args = graph.start_args(first, rng)
    platform = draft.spec(first).platform
    pool = sorted({t for t in [*graph.outgoing, *(e.target for es in graph.outgoing.values() for e in es),
                               *graph.inputs]})
    partners = [t for t in pool if t != first and draft.spec(t).platform == platform and set(args) <= _params(draft, t)
                and not draft.spec(t).realtime]
    if not partners:
        raise Abandon(f"SEM: no other tool of {platform} takes {sorted(args)}")
    size = min(len(partners), 1 + int(rng.integers(2)))
    others = [partners[i] for i in sorted(rng.choice(len(partners), size=size, replace=False).tolist())]
    branches = []
    for tool in (first, *others):
        got, calls, _ = await fetch(draft, tool, args, 0)
        branches.append(("", got, calls))
    trace = Trace("sem", first, dict(args), others=[(t, dict(args)) for t in others], final={"kind": "sum"})
    trace.name_identifiers(draft.spec(first), args, branches[0][1])
    recipe = {"op": "count", "calls": [i for _, _, calls in branches for i in calls]}
    return _executed(trace, [], FinalType.SEM, recipe, branches)


async def run_comparison(draft: Draft, graph: LiveGraph, rng: np.random.Generator) -> Executed:
    """CMP: one tool called in parallel with 2-3 different user-given arguments; the record counts compared."""
    tools = [t for t in _tools_with_inputs(graph) if len(graph.inputs[t]) >= 2]
    if not tools:
        raise Abandon("CMP: no tool with two different known inputs")
    tool = tools[int(rng.integers(len(tools)))]
    seen = graph.inputs[tool]
    k = min(len(seen), 2 + int(rng.integers(2)))
    picks = sorted(rng.choice(len(seen), size=k, replace=False).tolist())
    variants = [dict(seen[i]) for i in picks]
    differing = sorted({key for v in variants for key in v if any(w.get(key) != v.get(key) for w in variants)})
    branches = []
    names = Trace("cmp", tool, {})
    for args in variants:
        got, calls, _ = await fetch(draft, tool, args, 0)
        names.name_identifiers(draft.spec(tool), args, got)
        label = str(args.get(differing[0], "")) if len(differing) == 1 else ""
        branches.append((label, got, calls))
    if len(differing) == 1:  # the answer names a branch as the question does: a code's word, an identifier's name
        p = draft.spec(tool).param(differing[0])
        branches = [(_said(p, label, names.spoken), got, calls) for label, got, calls in branches]
    labels = [b[0] for b in branches]
    counts = [len(got) for _, got, _ in branches]
    if len(set(counts)) == 1:
        raise Abandon(f"CMP: every input of {tool} returned {counts[0]} records: the comparison answers nothing")
    if len(differing) == 1 and all(labels) and len(set(labels)) == len(labels):
        pick = untied(("max", "min", "diff")[int(rng.integers(3))] if k == 2 else ("max", "min")[int(rng.integers(2))],
                      counts)
    elif k == 2:
        pick = "diff"
    else:
        raise Abandon(f"CMP: {k} inputs of {tool} differ in {differing}, no one label per branch")
    groups = [{"label": label, "calls": calls} for label, _, calls in branches]
    recipe = {"op": "compare", "groups": groups, "measure": "count", "pick": pick}
    trace = Trace("cmp", tool, variants[0], others=[(tool, v) for v in variants],
                  final={"kind": "compare", "pick": pick, "tool": tool, "key": _label_key(differing, variants)},
                  spoken=names.spoken)
    return _executed(trace, [], FinalType.CMP, recipe, branches)


def _said(param: Any, value: str, spoken: Mapping[str, tuple[str, str]]) -> str:
    """``value`` as the realiser says it (``realise.say``): its code table's word, the world's name, or itself."""
    if value and param is not None and (word := spoken_code(param, value)) is not None:
        return word[1]
    return spoken[value][1] if value in spoken else value


def _label_key(differing: list[str], variants: list[dict[str, Any]]) -> str | None:
    """The one argument that tells the branches apart, when every branch sets it (else the question names each
    branch by all its conditions)."""
    if len(differing) == 1 and all(differing[0] in v for v in variants):
        return differing[0]
    return None


async def run_conditional(draft: Draft, graph: LiveGraph, rng: np.random.Generator) -> Executed:
    """COND: one call's record count against a threshold decides which of two further calls runs; its count
    is the answer. The three tools are one platform's, and the branches ask about what the check asked about where
    their known inputs share a value with its (a city, a district, a route): "수원시의 … 13건 이상이라면 수원시의 …",
    not a budget in Suwon deciding between hospitals in Seoul."""
    tools = _tools_with_inputs(graph)
    if len(tools) < 3:
        raise Abandon("COND: fewer than three tools with known inputs")
    test_tool = tools[int(rng.integers(len(tools)))]
    platform = draft.spec(test_tool).platform
    partners = [t for t in tools if t != test_tool and draft.spec(t).platform == platform]
    if len(partners) < 2:
        raise Abandon(f"COND: fewer than two other tools of {platform} with known inputs")
    # the closest in what they are about ("서울시 노원구 …" beside "서울시 노원구 …"), ties in a seeded order
    words = _title_words(draft.spec(test_tool))
    partners = [partners[i] for i in rng.permutation(len(partners)).tolist()]
    partners.sort(key=lambda t: -len(words & _title_words(draft.spec(t))))
    close = partners[:COND_PARTNERS]
    then_tool, else_tool = (close[i] for i in rng.choice(len(close), size=2, replace=False).tolist())
    test_args = graph.start_args(test_tool, rng)
    then_args, else_args = _sharing(graph, then_tool, test_args, rng), _sharing(graph, else_tool, test_args, rng)
    got, calls, step = await fetch(draft, test_tool, test_args, 0)
    n = len(got)
    threshold = max(1, n + int(rng.integers(-1, 2)))
    cmp = ("ge", "le")[int(rng.integers(2))]
    holds = n >= threshold if cmp == "ge" else n <= threshold
    tool, args = (then_tool, then_args) if holds else (else_tool, else_args)
    branch, branch_calls, _ = await fetch(draft, tool, args, step)
    taken = "then" if holds else "else"
    count = {"op": "count", "calls": branch_calls}
    recipe = {"op": "cond", "test": {"calls": calls, "measure": "count", "cmp": cmp, "threshold": threshold},
              "taken": taken, "then": count if holds else None, "else": None if holds else count}
    trace = Trace("cond", test_tool, dict(test_args), others=[(then_tool, then_args), (else_tool, else_args)],
                  final={"kind": "cond", "cmp": cmp, "threshold": threshold})
    trace.name_identifiers(draft.spec(test_tool), test_args, got)
    trace.name_identifiers(draft.spec(tool), args, branch)
    return _executed(trace, [], FinalType.COND, recipe, [("", got, calls), ("", branch, branch_calls)])
