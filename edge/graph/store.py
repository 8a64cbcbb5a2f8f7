"""One DuckDB file per Phase A run: the graph, every trial, the observed (input, first record) cache.

    store = GraphStore.create(path, meta={"bundle": "kopa-default@2a28…", "seed": 0, "settings": {...}})
    store.add_edges(edges)                     # the admitted skeleton, each with its prior
    store.commit_round(round_no, trials, posteriors, pruned)   # one transaction per round
    store = GraphStore.open(path)              # resume: store.next_round(), store.posteriors()

A round is written in one transaction, so a run killed mid-round leaves the file at the end of the
previous round: resuming re-runs that round from its seed and gets the same trials. An existing file is
never overwritten by ``create``; opening a file of another run configuration is refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from .posterior import EdgePosterior
from .sampler import EdgeKey

SCHEMA_VERSION = 1

_DDL = """
CREATE TABLE meta (key VARCHAR PRIMARY KEY, value JSON);
CREATE TABLE edges (
    source VARCHAR, target VARCHAR, similarity DOUBLE, cross_platform BOOLEAN, feasibility DOUBLE, plan JSON,
    prior_alpha DOUBLE, prior_beta DOUBLE, alpha DOUBLE, beta DOUBLE, trials INTEGER,
    pruned_round INTEGER, PRIMARY KEY (source, target));
CREATE TABLE trials (
    round INTEGER, trial INTEGER, hop INTEGER, source VARCHAR, target VARCHAR, inputs JSON, outcome VARCHAR,
    upstream_code VARCHAR, fingerprint VARCHAR, attempts INTEGER, PRIMARY KEY (round, trial, hop));
CREATE TABLE observations (tool VARCHAR, inputs JSON, first_record JSON, round INTEGER, PRIMARY KEY (tool, inputs));
CREATE TABLE rounds (round INTEGER PRIMARY KEY, paths INTEGER, trials INTEGER, successes INTEGER, pruned INTEGER);
"""


class GraphStoreError(RuntimeError):
    """The run file is missing, belongs to another configuration, or is not a Phase A run."""


@dataclass(frozen=True)
class StoredEdge:
    source: str
    target: str
    similarity: float
    cross_platform: bool
    feasibility: float
    plan: Any  # the binding proposal's source plan, as JSON data
    prior: EdgePosterior
    posterior: EdgePosterior
    pruned_round: int | None

    @property
    def key(self) -> EdgeKey:
        return (self.source, self.target)


@dataclass(frozen=True)
class TrialRecord:
    """One call of a sampled path: hop 0 is the path's first tool (no incoming edge), hop i ≥ 1 runs edge i."""

    round: int
    trial: int
    hop: int
    source: str | None
    target: str
    inputs: Mapping[str, Any]
    outcome: str
    upstream_code: str | None = None
    fingerprint: str | None = None
    attempts: int = 1


class GraphStore:
    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path):
        self.con, self.path = con, path

    @classmethod
    def create(cls, path: Path | str, *, meta: Mapping[str, Any]) -> GraphStore:
        path = Path(path)
        if path.exists():
            raise GraphStoreError(f"{path} already exists; resume it with GraphStore.open, or choose a new path")
        path.parent.mkdir(parents=True, exist_ok=True)
        con = duckdb.connect(str(path))
        con.execute(_DDL)
        con.executemany("INSERT INTO meta VALUES (?, ?)",
                        [(k, json.dumps(v, ensure_ascii=False)) for k, v in {**meta, "schema": SCHEMA_VERSION}.items()])
        return cls(con, path)

    @classmethod
    def open(cls, path: Path | str, *, expect: Mapping[str, Any] | None = None, read_only: bool = False) -> GraphStore:
        """Open a run to resume or read; ``expect``: meta values that must match (bundle, seed, settings).
        ``read_only``: several processes may read one run at once (synthesis); none may while a build writes it."""
        path = Path(path)
        if not path.is_file():
            raise GraphStoreError(f"no Phase A run at {path}")
        try:
            con = duckdb.connect(str(path), read_only=read_only)
            store = cls(con, path)
            meta = store.meta()
        except duckdb.IOException as exc:
            if "lock" in str(exc).lower():
                raise GraphStoreError(f"{path} is in use by another process (a graph build, or a reader while "
                                      f"this one would write): {exc}") from exc
            raise GraphStoreError(f"{path} is not a Phase A run file: {exc}") from exc
        except duckdb.Error as exc:
            raise GraphStoreError(f"{path} is not a Phase A run file: {exc}") from exc
        if meta.get("schema") != SCHEMA_VERSION:
            raise GraphStoreError(f"{path} has schema {meta.get('schema')!r}; this version reads {SCHEMA_VERSION}")
        differ = {k: (meta.get(k), v) for k, v in (expect or {}).items() if meta.get(k) != v}
        if differ:
            shown = "; ".join(f"{k}: run has {a!r}, asked {b!r}" for k, (a, b) in sorted(differ.items()))
            store.close()
            raise GraphStoreError(f"{path} belongs to another configuration ({shown})")
        return store

    def close(self) -> None:
        self.con.close()

    def meta(self) -> dict[str, Any]:
        return {k: json.loads(v) for k, v in self.con.execute("SELECT key, value FROM meta").fetchall()}

    # ------------------------------------------------------------------------------------------ edges

    def add_edges(self, rows: Iterable[tuple[str, str, float, bool, float, Any, EdgePosterior]]) -> int:
        """(source, target, similarity, cross_platform, feasibility, plan, prior) per admitted edge."""
        rows = list(rows)
        self._insert("edges", {
            "source": [r[0] for r in rows], "target": [r[1] for r in rows], "similarity": [r[2] for r in rows],
            "cross_platform": [r[3] for r in rows], "feasibility": [r[4] for r in rows],
            "plan": [json.dumps(r[5], ensure_ascii=False) for r in rows],
            "prior_alpha": [r[6].alpha for r in rows], "prior_beta": [r[6].beta for r in rows],
            "alpha": [r[6].alpha for r in rows], "beta": [r[6].beta for r in rows], "trials": [0] * len(rows),
            "pruned_round": pa.nulls(len(rows), pa.int32())})
        return len(rows)

    def _insert(self, table: str, columns: dict[str, Any]) -> None:
        """Rows in bulk through Arrow (DuckDB's executemany goes row by row: minutes for a 30,000-edge graph)."""
        batch = pa.table(columns)  # noqa: F841  (DuckDB reads the local variable by name)
        self.con.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT * FROM batch")

    def edges(self, *, live_only: bool = False) -> list[StoredEdge]:
        where = " WHERE pruned_round IS NULL" if live_only else ""
        rows = self.con.execute("SELECT source, target, similarity, cross_platform, feasibility, plan, prior_alpha, "
                                f"prior_beta, alpha, beta, trials, pruned_round FROM edges{where} "
                                "ORDER BY source, target").fetchall()
        return [StoredEdge(s, t, sim, cross, feas, json.loads(plan), EdgePosterior(pa, pb),
                           EdgePosterior(a, b, n), pruned) for s, t, sim, cross, feas, plan, pa, pb, a, b, n, pruned in rows]

    def posteriors(self, *, live_only: bool = True) -> dict[EdgeKey, EdgePosterior]:
        where = " WHERE pruned_round IS NULL" if live_only else ""
        rows = self.con.execute(f"SELECT source, target, alpha, beta, trials FROM edges{where} ORDER BY source, target")
        return {(s, t): EdgePosterior(a, b, n) for s, t, a, b, n in rows.fetchall()}

    # ----------------------------------------------------------------------------------------- rounds

    def next_round(self) -> int:
        done = self.con.execute("SELECT max(round) FROM rounds").fetchone()[0]
        return 0 if done is None else done + 1

    def commit_round(self, round_no: int, *, paths: int, trials: Sequence[TrialRecord],
                     posteriors: Mapping[EdgeKey, EdgePosterior], pruned: Iterable[EdgeKey],
                     observations: Iterable[tuple[str, Mapping[str, Any], Mapping[str, Any]]] = ()) -> None:
        """Everything a round produced, in one transaction (a kill before the commit loses only this round)."""
        pruned = list(pruned)
        self.con.execute("BEGIN TRANSACTION")
        try:
            self._insert("trials", {
                "round": [t.round for t in trials], "trial": [t.trial for t in trials], "hop": [t.hop for t in trials],
                "source": pa.array([t.source for t in trials], pa.string()), "target": [t.target for t in trials],
                "inputs": [json.dumps(dict(t.inputs), ensure_ascii=False, sort_keys=True) for t in trials],
                "outcome": [t.outcome for t in trials],
                "upstream_code": pa.array([t.upstream_code for t in trials], pa.string()),
                "fingerprint": pa.array([t.fingerprint for t in trials], pa.string()),
                "attempts": [t.attempts for t in trials]})
            changed = sorted(posteriors.items())
            moved = pa.table({"s": [k[0] for k, _ in changed], "t": [k[1] for k, _ in changed],  # noqa: F841
                              "a": [p.alpha for _, p in changed], "b": [p.beta for _, p in changed],
                              "n": pa.array([p.trials for _, p in changed], pa.int32())})
            self.con.execute("UPDATE edges SET alpha = moved.a, beta = moved.b, trials = moved.n FROM moved "
                             "WHERE edges.source = moved.s AND edges.target = moved.t")
            cut = pa.table({"s": [k[0] for k in pruned], "t": [k[1] for k in pruned]})  # noqa: F841
            self.con.execute("UPDATE edges SET pruned_round = ? FROM cut WHERE edges.source = cut.s "
                             "AND edges.target = cut.t", [round_no])
            seen: dict[tuple[str, str], Mapping[str, Any]] = {}
            for tool, inputs, record in observations:  # the first record seen for an input is the one kept
                seen.setdefault((tool, json.dumps(dict(inputs), ensure_ascii=False, sort_keys=True)), record)
            fresh = pa.table({"tool": [k[0] for k in seen], "inputs": [k[1] for k in seen],  # noqa: F841
                              "first_record": [json.dumps(dict(r), ensure_ascii=False) for r in seen.values()]})
            self.con.execute("INSERT INTO observations SELECT tool, inputs, first_record, ? FROM fresh "
                             "WHERE (tool, inputs) NOT IN (SELECT (tool, inputs) FROM observations)", [round_no])
            successes = sum(t.outcome in ("semantic_success", "generic_success") for t in trials)
            self.con.execute("INSERT INTO rounds VALUES (?, ?, ?, ?, ?)",
                             [round_no, paths, len(trials), successes, len(pruned)])
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise

    def trials(self) -> list[TrialRecord]:
        rows = self.con.execute("SELECT round, trial, hop, source, target, inputs, outcome, upstream_code, fingerprint, "
                                "attempts FROM trials ORDER BY round, trial, hop").fetchall()
        return [TrialRecord(r, t, h, s, tg, json.loads(i), o, c, f, a) for r, t, h, s, tg, i, o, c, f, a in rows]

    def observations(self, tool: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        rows = self.con.execute("SELECT inputs, first_record FROM observations WHERE tool = ? ORDER BY round, inputs",
                                [tool]).fetchall()
        return [(json.loads(i), json.loads(r)) for i, r in rows]

    def inputs_seen(self) -> dict[str, list[dict[str, Any]]]:
        """Every tool's inputs that answered with a record, oldest first (the first-call argument source)."""
        seen: dict[str, list[dict[str, Any]]] = {}
        for tool, inputs in self.con.execute("SELECT tool, inputs FROM observations ORDER BY round, tool, inputs").fetchall():
            seen.setdefault(tool, []).append(json.loads(inputs))
        return seen

    def first_calls(self) -> dict[str, int]:
        """How many paths each tool started (hop 0), whatever the call returned."""
        return dict(self.con.execute("SELECT target, count(*) FROM trials WHERE hop = 0 GROUP BY target").fetchall())

    def rounds(self) -> list[tuple[int, int, int, int, int]]:
        """(round, paths, trials, successes, pruned) per committed round."""
        return self.con.execute("SELECT round, paths, trials, successes, pruned FROM rounds ORDER BY round").fetchall()
