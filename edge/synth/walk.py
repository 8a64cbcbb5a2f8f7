"""Posterior-weighted walks over the refined graph G* (the live edges of a Phase A run).

    graph = LiveGraph.from_store(store, catalog)
    walk = graph.walk(rng, edges=3)       # None when no start tool has inputs to begin with

A walk starts at a tool with known working inputs (Phase A's ``inputs_seen``, only those that set a
non-generic value, so the first call is a semantic success) and follows live edges, each step choosing
among the current tool's outgoing edges with probability proportional to the edge's posterior mean. It
never revisits a tool and stops early where no edge leaves. Realtime tools and tools that write state are
left out: their answers are not reproducible from a recording. Every list is sorted, so the same store and
generator give the same walk.

These choices keep the walks informative on a catalog where hundreds of same-schema tools (Seoul's and
Gyeonggi's district datasets) dominate G*:

* a **pass-through** edge, whose every bound output field is also a parameter of its source and whose source
  takes nothing else (a district code the source can only be filtered by, handed on), carries only what the
  question already gave: it executes, so Phase A keeps it, but a trajectory over it has a decorative step.
  Walks skip it.
* the start tool is drawn platform first, then tool, so each platform starts walks as often as any other. A walk
  asked for k edges starts at one of the platform's tools from which k edges lead on (its ``reach``: the longest
  walk out of it, revisiting no tool and taking no relay), or at its farthest-reaching ones; each step keeps to
  edges whose target still reaches as far as the walk wants to go (or as far as any option does). Looking one
  edge ahead, a third of the walks asked for 3-5 edges on the refined full-catalog graph ended after one.
* a **relay** edge, whose key (the first field it binds) is named like a parameter the edge the walk came by
  filled, gives back the value the walk arrived with (a rest area's code from its menus to its conveniences, a
  district code from one year's table to the next): the call between the two junctions is decorative. Walks do
  not take one, and ``run_chain`` ends a chain before a junction whose key value was already known.
* start tools and edges already used by kept items are discounted (``uses``), so the dataset covers the graph
  rather than repeating its likeliest path with other arguments (which the near-duplicate filter drops).

Start inputs are those a user knows (Appendix J): an opaque identifier among Phase A's inputs (a bill id, a
rest-area code, a district code beside the district's name) is left out where the call does not require it and
something else still selects, so a chain starts from a name, a region or a year and discovers the identifiers.
A tool whose every known input needs one keeps them (the realiser may still name the thing from the records).

``exclude_platforms`` (held-out platforms, Table 14) drops every tool of those platforms from G*: no walk, and no
SEM, CMP or COND template (they draw their tools from the same graph), can call one.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from edge.graph.store import GraphStore, StoredEdge

from .user_terms import opaque

__all__ = ["MAX_WALK_EDGES", "START_BROADEN", "LiveGraph", "Walk", "edge_key", "pass_through", "relay"]

MAX_WALK_EDGES = 5
START_BROADEN = 0.7  # how often a walk's first call keeps only part of its known inputs (start_args)


@dataclass(frozen=True)
class Walk:
    start: str
    start_args: dict[str, Any]
    edges: tuple[StoredEdge, ...] = ()

    @property
    def tools(self) -> list[str]:
        return [self.start, *(e.target for e in self.edges)]


@dataclass
class LiveGraph:
    outgoing: dict[str, list[StoredEdge]]
    inputs: dict[str, list[dict[str, Any]]]  # tool → semantic start inputs, oldest first
    run: str = ""
    starts: list[str] = field(default_factory=list)
    platform_of: dict[str, str] = field(default_factory=dict)  # start tool → platform
    _reach: dict[str, int] = field(default_factory=dict, init=False, repr=False)

    def reach(self, tool: str) -> int:
        """The most edges a walk can take from ``tool`` (no tool revisited, no relay), at most ``MAX_WALK_EDGES``."""
        if tool not in self._reach:
            self._reach[tool] = self._depth(tool, None, {tool}, MAX_WALK_EDGES)
        return self._reach[tool]

    def _next(self, node: str, came_by: StoredEdge | None, seen: set[str]) -> list[StoredEdge]:
        """The edges a walk at ``node`` (reached by ``came_by``) may take: to a tool not yet seen, and not a relay."""
        return [e for e in self.outgoing.get(node, ()) if e.target not in seen and not relay(came_by, e)]

    def _depth(self, node: str, came_by: StoredEdge | None, seen: set[str], most: int) -> int:
        """The longest walk on from ``node`` avoiding ``seen``, up to ``most`` edges (search stops once found)."""
        best = 0
        for edge in self._next(node, came_by, seen):
            if best == most:
                break
            best = max(best, 1 + (self._depth(edge.target, edge, seen | {edge.target}, most - 1) if most > 1 else 0))
        return best

    def pick_start(self, rng: np.random.Generator, uses: Mapping[str, int] | None = None, *, edges: int = 1) -> str:
        """A platform uniformly, then one of its start tools reaching ``edges`` edges (or its farthest-reaching
        ones), each weighted 1 / (1 + items already started there)."""
        platforms = sorted({self.platform_of.get(t, "") for t in self.starts})
        platform = platforms[int(rng.integers(len(platforms)))]
        tools = self._reaching([t for t in self.starts if self.platform_of.get(t, "") == platform], edges,
                               depth=self.reach)
        weights = np.array([1.0 / (1 + (uses or {}).get(t, 0)) for t in tools])
        return tools[int(rng.choice(len(tools), p=weights / weights.sum()))]

    @classmethod
    def from_store(cls, store: GraphStore, catalog: Any, *, exclude_platforms: Collection[str] = ()) -> LiveGraph:
        def usable(tool: str) -> bool:
            spec = catalog.get(tool)
            return (not spec.realtime and not spec.writes_state and spec.endpoint is not None
                    and spec.platform not in exclude_platforms)

        seen_inputs = store.inputs_seen()
        outgoing: dict[str, list[StoredEdge]] = {}
        for edge in store.edges(live_only=True):  # sorted by (source, target)
            if usable(edge.source) and usable(edge.target) and \
                    not pass_through(edge, catalog.get(edge.source), seen_inputs.get(edge.source, ())):
                outgoing.setdefault(edge.source, []).append(edge)
        inputs = {tool: _user_known([a for a in seen if _semantic(a, catalog.get(tool))], catalog.get(tool))
                  for tool, seen in sorted(seen_inputs.items()) if tool in catalog and usable(tool)}
        inputs = {t: _unique(a) for t, a in inputs.items() if a}
        starts = sorted(t for t in outgoing if t in inputs)
        return cls(outgoing, inputs, store.path.name, starts, {t: catalog.get(t).platform for t in starts})

    def start_args(self, tool: str, rng: np.random.Generator, *, broaden: float = 0.0) -> dict[str, Any]:
        """Inputs seen to work for ``tool``; with probability ``broaden`` only a random part of them, so the
        first call returns more than the one entity Phase A bound (what makes FAN and DRV junctions)."""
        seen = dict(self.inputs[tool][int(rng.integers(len(self.inputs[tool])))])
        if len(seen) > 1 and rng.random() < broaden:
            keys = sorted(seen)
            kept = rng.choice(len(keys), size=int(rng.integers(1, len(keys))), replace=False)
            seen = {keys[i]: seen[keys[i]] for i in sorted(kept.tolist())}
        return seen

    def walk(self, rng: np.random.Generator, *, edges: int, start: str | None = None,
             broaden: float = START_BROADEN, uses: Mapping[str, int] | None = None) -> Walk | None:
        """A walk of 1..``edges`` edges (fewer where the graph ends), or None when there is nowhere to start.

        ``uses`` counts start tools and edges (``edge_key``) in the items kept so far: each choice is discounted
        by 1 / (1 + uses), so a dataset spreads over the graph instead of re-walking its likeliest paths.
        """
        uses = uses or {}
        if not 1 <= edges <= MAX_WALK_EDGES:
            raise ValueError(f"a walk has 1..{MAX_WALK_EDGES} edges, asked {edges}")
        if start is None:
            if not self.starts:
                return None
            start = self.pick_start(rng, uses, edges=edges)
        elif start not in self.inputs or start not in self.outgoing:
            return None
        args = self.start_args(start, rng, broaden=broaden)
        path: list[StoredEdge] = []
        node, seen = start, {start}
        while len(path) < edges:
            options = self._next(node, path[-1] if path else None, seen)
            if not options:
                break
            if wanted := edges - len(path) - 1:  # edges still wanted after this one: go as far as any option can
                options = self._reaching(options, wanted, depth=lambda e: self._depth(
                    e.target, e, seen | {e.target}, wanted))
            weights = np.array([max(e.posterior.mean, 1e-9) / (1 + uses.get(edge_key(e), 0)) for e in options])
            edge = options[int(rng.choice(len(options), p=weights / weights.sum()))]
            path.append(edge)
            node = edge.target
            seen.add(node)
        return Walk(start, args, tuple(path))

    @staticmethod
    def _reaching(items: list, edges: int, *, depth: Any) -> list:
        """The ``items`` whose ``depth`` is at least ``edges``; else those of the greatest depth."""
        depths = [depth(i) for i in items]
        far = min(edges, max(depths))
        return [i for i, d in zip(items, depths, strict=True) if d >= far]


def edge_key(edge: Any) -> str:
    """The key ``uses`` counts an edge by (a StoredEdge, or a Junction crossing it)."""
    return f"{edge.source}->{edge.target}"


def relay(came_by: Any, edge: Any) -> bool:
    """``edge``'s key (its first bound field, the one that types a junction) is named like a parameter ``came_by``
    filled: the target's records give back the value the walk arrived with (a rest area's code from its menu to its
    conveniences, a district code from one year's table to the next), so the call between the two junctions would
    be decorative. ``run_chain`` checks the values that actually cross."""
    if came_by is None:
        return False
    key = next((s["field"].lower() for s in edge.plan if s["kind"] == "upstream" and s.get("field")), None)
    return key is not None and key in {s["param"].lower() for s in came_by.plan if s["kind"] == "upstream"}


def pass_through(edge: StoredEdge, source: Any, seen: Sequence[Mapping[str, Any]] = ()) -> bool:
    """Every output field the edge binds is a parameter of its source, the source takes no other input, and no
    input Phase A saw work for the source (``seen``) leaves one of those parameters unset: any call of the source
    was given the value the edge hands on.

    A source with another input (a bill vote list asked by assembly term, a district statistic asked by category)
    can discover the bound value from its records, and so can one seen to work without it (the rest areas' menus
    asked by route alone carry every rest area's code): such an edge stays, and ``run_chain`` drops a trajectory
    only where the values that actually crossed were given by the question.
    """
    params = {p.name.lower() for p in source.params}
    fields = {s["field"].lower() for s in edge.plan if s["kind"] == "upstream" and s.get("field")}
    if not fields or not fields <= params:
        return False
    if any(not p.is_generic and p.name.lower() not in fields for p in source.params):
        return False
    return not any(_semantic(args, source) and not fields <= _set(args) for args in seen)


def _set(args: Mapping[str, Any]) -> set[str]:
    """The parameters ``args`` gives a value, lower-cased."""
    return {k.lower() for k, v in args.items() if v not in (None, "")}


def _semantic(args: Mapping[str, Any], spec: Any) -> bool:
    """The inputs set at least one non-generic parameter (else the call is only a generic success)."""
    generic = {p.name for p in spec.params if p.is_generic}
    return any(k not in generic and v not in (None, "") for k, v in args.items())


def _user_known(seen: Sequence[dict[str, Any]], spec: Any) -> list[dict[str, Any]]:
    """``seen`` without the opaque identifiers a call can do without; where none is left that still sets a
    non-generic parameter, ``seen`` as it was."""
    def known(args: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in args.items()
                if (p := spec.param(k)) is None or p.required or not opaque(p, v)}

    kept = [k for a in seen if _semantic(k := known(a), spec)]
    return kept or list(seen)


def _unique(seen: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for args in seen:
        if args not in out:
            out.append(args)
    return out
