"""Name lookups: a golden call that turns a name the question gives into the identifier a later call takes.

    await add_lookups(draft, executed, graph)    # or Abandon("named input without a lookup (tool.param)")

The realiser says an identifier no user knows by the world's name for it (``Trace.spoken``: "시군명이 성남시인",
not "시군코드가 41130인"), so an agent reading the question has to find the code itself, as the paper's chains do
(name → code → records). For each such identifier the trajectory's calls take from the question, the first call
taking it gets a lookup at its step, and that call and every later one move a step on. The lookup is a tool whose
records hold the code and its name, called with the name: the tool whose records gave the name, or the source of
a G* edge into the consuming tool that binds the code (search_laws → get_law_text's 법령ID, which the question
would otherwise cite as it is). Its records, selected by the name, must carry that one code; the binding is a
junction like any other (SEQ, or FAN/DRV by the codes the search returned, with an ``eq`` selection by the name).

A named identifier with no such lookup drops the attempt (``NO_LOOKUP``): its golden trajectory would start from a
code the question never gave, teaching a model to make it up. One the question cites as it is stays, for the
quality stage to judge.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from bench.taskset.draft import Draft, DraftError

from .execute import Abandon, Executed, Hop, Trace, _Mark, classify, fetch
from .item import Junction
from .junctions import derive, distinct_values, junction_type
from .user_terms import label, opaque
from .walk import LiveGraph

__all__ = ["NO_LOOKUP", "add_lookups"]

NO_LOOKUP = "named input without a lookup"


@dataclass(frozen=True)
class _Need:
    value: str
    tool: str  # the first golden call that takes it
    param: str
    step: int
    args: dict[str, Any]


@dataclass(frozen=True)
class _Found:
    junction: Junction
    name_field: str
    name: str


async def add_lookups(draft: Draft, executed: Executed, graph: LiveGraph) -> None:
    """Put a name lookup before the first use of each identifier the question names or cites (see the module).

    Raises:
        Abandon: an identifier the question names has no lookup.
    """
    trace = executed.trace
    needs = _needs(draft, trace)
    for step in sorted({n.step for n in needs}, reverse=True):  # the latest first: earlier shifts move it on
        mark = len(draft.calls)
        for need in (n for n in needs if n.step == step):
            found = await _lookup(draft, need, trace, graph)
            if found is None:
                if need.value in trace.spoken:
                    raise Abandon(f"{NO_LOOKUP} ({need.tool}.{need.param})")
                continue
            trace.spoken.setdefault(need.value, (_label(draft, found), found.name))
            _rename_branch(executed, need.value, trace.spoken[need.value][1])
            trace.bound_values.append(need.value)
            trace.lookups.append(Hop(found.junction, {}, found.name_field, (need.value,)))
            executed.junctions.insert(0, found.junction)
        if len(draft.calls) > mark:
            _shift(draft, mark, step, 1 + any(c.step > step for c in draft.calls[mark:]))
    if trace.lookups:
        executed.task_type = classify(executed.junctions, executed.final)


def _givens(trace: Trace) -> Iterator[Mapping[str, Any]]:
    yield trace.start_args
    yield from (h.given for h in trace.hops)
    yield from (args for _, args in trace.others)


def _needs(draft: Draft, trace: Trace) -> list[_Need]:
    """The identifiers the question gives, each at its first golden call (in step order, then call order)."""
    given = {str(v).strip() for args in _givens(trace) for v in args.values()}
    needs: dict[str, _Need] = {}
    for call in sorted(draft.calls, key=lambda c: c.step):
        spec = draft.spec(call.tool)
        for name, value in sorted(call.args.items()):
            text, p = str(value).strip(), spec.param(name)
            if text in given and text not in needs and p is not None and not p.is_generic and opaque(p, text):
                needs[text] = _Need(text, call.tool, name, call.step, dict(call.args))
    return list(needs.values())


def _candidates(need: _Need, trace: Trace, graph: LiveGraph) -> list[tuple[str, str]]:
    """(lookup tool, its field holding the code): where the name came from, then G* edges binding the code."""
    out = []
    if (source := trace.named_from.get(need.value)) is not None:
        out.append(source[:2])
    for tool in sorted(graph.outgoing):
        for edge in graph.outgoing[tool]:
            if edge.target == need.tool:
                out += [(tool, s["field"]) for s in edge.plan
                        if s["kind"] == "upstream" and s["param"] == need.param and s.get("field")]
    return list(dict.fromkeys(out))


async def _lookup(draft: Draft, need: _Need, trace: Trace, graph: LiveGraph) -> _Found | None:
    """The first candidate whose call by the name returns the code (its calls kept), or None (none kept)."""
    for tool, code_field in _candidates(need, trace, graph):
        named = await _name(draft, tool, code_field, need, trace)
        if named is None:
            continue
        name_field, name, param = named
        spec = draft.spec(tool)
        args = {param: name}
        missing = [p.name for p in spec.params if p.required and not p.is_generic and p.name != param]
        if any(m not in need.args for m in missing):
            continue
        args |= {m: need.args[m] for m in missing}
        mark = _Mark.of(draft, trace)
        try:
            records, _, _ = await fetch(draft, tool, args, need.step)
        except Abandon:
            mark.restore(draft, trace)
            continue
        codes = distinct_values(records, code_field)
        if distinct_values(derive(records, "eq", field=name_field, pivot=name), code_field) != [need.value]:
            mark.restore(draft, trace)  # the name does not single the code out
            continue
        selects = len(codes) > 1
        junction = Junction(source=tool, target=need.tool, field=code_field, param=need.param,
                            cardinality=len(codes), type=junction_type(len(codes)),
                            operator="eq" if selects else None, pivot=name if selects else None)
        return _Found(junction, name_field, name)
    return None


async def _name(draft: Draft, tool: str, code_field: str, need: _Need,
                trace: Trace) -> tuple[str, str, str] | None:
    """(name field, the code's name, the parameter that takes it) for ``tool``, or None."""
    spec = draft.spec(tool)
    source = trace.named_from.get(need.value)
    if source is not None and any(f.name == source[2] for f in spec.output):  # the name the question says
        param = _name_param(spec, source[2])
        return (source[2], trace.spoken[need.value][1], param) if param else None
    by_code = next((p.name for p in spec.params if p.name.lower() == code_field.lower() and not p.is_generic), None)
    args = {p.name: need.args[p.name] for p in spec.params if p.required and p.name in need.args and not p.is_generic}
    try:  # a record of the code, to read its name from (a search by the code, else the tool's first page)
        result = await draft.explore(tool, args | ({by_code: need.value} if by_code else {}))
    except DraftError:
        return None
    record = next((r for r in result.records if str(r.get(code_field, "")).strip() == need.value), None)
    if record is None:
        return None
    for f in sorted(spec.output, key=lambda f: f.name):
        name = str(record.get(f.name) or "").strip()
        param = _name_param(spec, f.name) if f.name != code_field and name else None
        if param is not None and not opaque(spec.param(param), name):
            return f.name, name, param
    return None


def _name_param(spec: Any, field: str) -> str | None:
    """The parameter that takes a name field's value: one of the same name, or one whose description asks for
    what the field's label says ('검색어(법령명 또는 사건명…)' for 법령명한글, labelled 법령명)."""
    out = next((f for f in spec.output if f.name == field), None)
    said = label(out.description_ko) if out is not None else ""
    if out is None or not said.endswith(("명", "이름")):
        return None
    for p in sorted(spec.params, key=lambda p: p.name):
        if not p.is_generic and (p.name.lower() == field.lower() or (len(said) >= 2 and said in p.description_ko)):
            return p.name
    return None


def _label(draft: Draft, found: _Found) -> str:
    out = next(f for f in draft.spec(found.junction.source).output if f.name == found.name_field)
    return label(out.description_ko) or found.name_field


def _rename_branch(executed: Executed, value: str, name: str) -> None:
    """A comparison's branch labelled by the code now answers by the name the question says instead."""
    for group in executed.recipe.get("groups", ()):
        if group["label"] == value:
            group["label"] = name
    executed.answer = tuple(name if a == value else a for a in executed.answer)


def _shift(draft: Draft, mark: int, step: int, by: int) -> None:
    """Move the calls made before ``mark`` at ``step`` or later ``by`` steps on (the lookups took their place)."""
    for i in range(mark):
        if draft.calls[i].step >= step:
            draft.calls[i].step += by
            invocations = getattr(draft, "invocations", None)
            if invocations is not None:
                invocations[i] = dataclasses.replace(invocations[i], step=invocations[i].step + by)
