"""Run one sampled path for real through ``ToolRuntime`` and classify every call (Table 7).

    runner = PathRunner(runtime, catalog, plans, retries=2)
    records, observed = await runner.run(path, rng, trial=(round_no, m), cache=observations)

Hop 0 calls the path's first tool with arguments from ``first_arguments`` (the rule-based source-argument
generator: values seen before for that tool, else each required parameter's enum or the example its
description gives). Each later hop takes one record of the previous result (seeded choice), fills the
next tool's parameters from the edge's source plan (UPSTREAM: that record's field; CLARIFY: one of the
proposed candidates) and calls it. A path stops at the first call that fails; only hops ≥ 1 are
evidence about an edge. Environmental faults are retried (``retries`` times) before they count, so a
flaky upstream weakens an edge only by Table 7's small environmental weights.

A call that succeeds but returns no record counts as ``missing_field`` for the edge: the bound value
selected nothing upstream, which is what a wrong binding (a name fed into a code parameter) looks like.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mcp_gateway.catalog import Catalog
from mcp_gateway.catalog.spec import ToolSpec
from mcp_gateway.runtime.result import Outcome, ToolResult
from mcp_gateway.runtime.runtime import ToolRuntime

from .proposer import candidates
from .sampler import EdgeKey
from .store import TrialRecord


def first_arguments(spec: ToolSpec, rng: np.random.Generator,
                    seen: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any] | None:
    """Arguments for a path's first tool, or None when a required parameter has no value to try.

    Inputs that answered before are reused first; else each required parameter takes one of the values the
    proposer would try for it (default, enum, the examples its description gives).
    """
    if seen:
        return dict(seen[int(rng.integers(len(seen)))])
    args: dict[str, Any] = {}
    for p in spec.params:
        if p.is_generic or not p.required:
            continue
        values = candidates(p)
        if not values:
            return None
        args[p.name] = _typed(values[int(rng.integers(len(values)))], p.type)
    return args


def _typed(value: str, type_: str) -> Any:
    if type_ in ("integer", "number"):
        try:
            return int(value) if type_ == "integer" else float(value)
        except ValueError:
            return value  # the gateway answers schema_mismatch: that is the evidence
    return value


def bind_arguments(plan: Sequence[Mapping[str, Any]], record: Mapping[str, Any], spec: ToolSpec,
                   rng: np.random.Generator) -> dict[str, Any]:
    """The next tool's arguments from an edge's source plan and one record of the previous result."""
    types = {p.name: p.type for p in spec.params}
    args: dict[str, Any] = {}
    for source in plan:
        param, kind = source["param"], source["kind"]
        if kind == "upstream":
            value = record.get(source["field"])
            if value is not None and value != "":
                args[param] = _coerce(value, types.get(param, "string"))
        elif source.get("candidates"):
            candidates = source["candidates"]
            args[param] = _typed(str(candidates[int(rng.integers(len(candidates)))]), types.get(param, "string"))
    return args


def _coerce(value: Any, type_: str) -> Any:
    """A record's value in the parameter's type (records are text on most platforms)."""
    if type_ == "string":
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False) if isinstance(
            value, (dict, list)) else str(value)
    if type_ in ("integer", "number") and isinstance(value, str):
        return _typed(value, type_)
    return value


@dataclass(frozen=True)
class Observation:
    tool: str
    inputs: dict[str, Any]
    first_record: dict[str, Any]


class PathRunner:
    def __init__(self, runtime: ToolRuntime, catalog: Catalog, plans: Mapping[EdgeKey, Sequence[Mapping[str, Any]]],
                 *, retries: int = 2, session: str = "edge-phase-a"):
        self.runtime, self.catalog, self.plans = runtime, catalog, plans
        self.retries, self.session = retries, session

    async def _call(self, tool: str, args: dict[str, Any]) -> tuple[ToolResult, int]:
        attempts = 0
        while True:
            attempts += 1
            result = await self.runtime.call(tool, args, self.session)
            if not result.outcome.retryable or attempts > self.retries:
                return result, attempts

    async def run(self, path: Sequence[EdgeKey], rng: np.random.Generator, *, trial: tuple[int, int],
                  cache: Mapping[str, Sequence[Mapping[str, Any]]]) -> tuple[list[TrialRecord], list[Observation]]:
        """The path's calls as trial records (hop 0 first), and the (input, first record) pairs it observed."""
        round_no, m = trial
        if not path:
            return [], []
        records: list[TrialRecord] = []
        observed: list[Observation] = []
        first = path[0][0]
        args = first_arguments(self.catalog.get(first), rng, cache.get(first, ()))
        if args is None:
            return [TrialRecord(round_no, m, 0, None, first, {}, Outcome.MISSING_FIELD.value)], []
        result, attempts = await self._call(first, args)
        records.append(_record(round_no, m, 0, None, first, args, result, attempts))
        for hop, (source, target) in enumerate(path, start=1):
            if not result.outcome.ok or not result.records:
                break
            row = result.records[int(rng.integers(len(result.records)))]
            observed.append(Observation(source, args, result.records[0]))
            args = bind_arguments(self.plans[(source, target)], row, self.catalog.get(target), rng)
            result, attempts = await self._call(target, args)
            records.append(_record(round_no, m, hop, source, target, args, result, attempts))
        if result.outcome.ok and result.records:  # the last tool called answered too
            observed.append(Observation(records[-1].target, dict(records[-1].inputs), result.records[0]))
        return records, observed


def edge_outcome(result: ToolResult) -> Outcome:
    """The Table 7 class of an edge execution (an empty success is a binding that selected nothing)."""
    if result.outcome.ok and not result.records:
        return Outcome.MISSING_FIELD
    return result.outcome


def _record(round_no: int, m: int, hop: int, source: str | None, target: str, args: dict[str, Any],
            result: ToolResult, attempts: int) -> TrialRecord:
    outcome = edge_outcome(result) if hop else result.outcome
    return TrialRecord(round_no, m, hop, source, target, args, outcome.value, result.upstream_code,
                       (result.upstream or {}).get("url"), attempts)
