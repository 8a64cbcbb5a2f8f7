"""A deterministic appliance home for the console's tests: fixed times, fixed sizes, no upstream needed.

    settings = build_fixture_home(tmp_path)   # KopaSettings(home=tmp_path) over:

* ``cassettes/tiny``: two committed versions (world v1, then v2) of a small bundle (``data/``, ``make_data.py``);
* ``runs/oracle``, ``runs/first-page``: two committed benchmark runs, recorded here in the metadata DB;
* ``logs/audit.jsonl``: audit lines as the gateway writes them;
* ``edge/graphs/graph-fixture.duckdb``: a four-edge Phase A run over two rounds, one edge pruned;
* ``edge/datasets/graph-fixture-s0-n3``: three synthesized items, filtered (funnel.json);
* a finished SFT job and a running GRPO job with their steps.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

from appliance.bench_records import record_bench_run
from appliance.config import KopaSettings
from appliance.metadb import open_metadb
from edge.dataset.items_io import write_json, write_lines
from edge.graph.posterior import EdgePosterior
from edge.graph.store import GraphStore, TrialRecord
from edge.synth.item import TaskType
from tests.edge.filter.items import bench, junction, wrap
from train.records import add_step, ensure_tables, finish_run, start_run

DATA = Path(__file__).resolve().parent / "data"
EDGES = [("find_dart_corp_code", "get_dart_convertible_bond_issuance_decision", "corp_code"),
         ("search_school_info", "get_school_class_info", "SD_SCHUL_CODE"),
         ("list_rest_area_locations", "get_rest_area_best_foods", "stdRestCd"),
         ("search_laws", "search_subway_stations", "query")]
AUDIT = [  # (tool, outcome, upstream code, latency ms, session)
    ("search_laws", "semantic_success", "00", 12.5, "a1b2c3d4e5"),
    ("search_school_info", "semantic_success", "INFO-000", 8.0, "a1b2c3d4e5"),
    ("get_dart_convertible_bond_issuance_decision", "rate_limit", "429", 3004.0, "f6e5d4c3b2"),
    ("search_subway_stations", "generic_success", "INFO-200", 4.2, "f6e5d4c3b2"),
    ("gg_aed_location", "endpoint_unavailable", "404", 15.0, "0a0b0c0d0e"),
]


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def build_fixture_home(root: Path) -> KopaSettings:
    settings = KopaSettings(home=root)
    shutil.copytree(DATA / "cassettes", settings.cassettes_dir)
    for path in settings.cassettes_dir.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)  # copies of read-only files: the sign test adds a file
    engine = open_metadb(settings.metadb_url)
    try:
        for agent in ("oracle", "first-page"):
            run_dir = root / "runs" / agent
            shutil.copytree(DATA / "runs" / agent, run_dir)
            record_bench_run(engine, run_dir)
        ensure_tables(engine)
        done = start_run(engine, str(root / "train" / "sft-small"), recipe="sft_1gpu_small", kind="sft",
                         model="Qwen3.5-0.8B", dataset="edge-fixture", started_at=_time("2026-12-01T12:00:00"))
        for step in range(1, 4):
            add_step(engine, done.id, {"step": step, "step_time_s": 12.0 + step})
        finish_run(engine, done.id, 0)
        running = start_run(engine, str(root / "train" / "grpo-small"), recipe="grpo_1gpu_small", kind="grpo",
                            model="Qwen3.5-0.8B", dataset="edge-fixture", started_at=_time("2026-12-02T12:00:00"))
        for step in range(1, 13):  # a GRPO job mid-run: its steps stream in
            add_step(engine, running.id, {"step": step, "reward": round(0.05 * step + 0.04 * (step % 3), 3),
                                          "pass_rate": 0.05 * step, "kl": round(0.0008 * step, 4),
                                          "step_time_s": 30.0 + (step % 4)})
    finally:
        engine.dispose()
    _audit(root / "logs" / "audit.jsonl")
    _graph(root / "edge" / "graphs" / "graph-fixture.duckdb")
    _dataset(root / "edge" / "datasets" / "graph-fixture-s0-n3")
    return settings


def _audit(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [{"correlation_id": f"{i:032x}", "session_id": session, "toolset": "all", "tool": tool, "outcome": outcome,
              "upstream_code": code, "latency_ms": ms, "request_id": i, "upstream": None}
             for i, (tool, outcome, code, ms, session) in enumerate(AUDIT)]
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")


def _graph(path: Path) -> None:
    store = GraphStore.create(path, meta={"seed": 0, "upstream": "sandbox", "settings": {}})
    try:
        prior = EdgePosterior(1.0, 1.0)
        store.add_edges((s, t, 0.5, s.split("_")[0] != t.split("_")[0], 0.6,
                         [{"param": p, "kind": "upstream", "field": p}], prior) for s, t, p in EDGES)
        for round_no in (0, 1):
            trials = []
            for i, (source, target, _param) in enumerate(EDGES):
                # the last edge fails in round 1 and is pruned there
                outcome = "schema_mismatch" if (i, round_no) == (3, 1) else "semantic_success"
                trials.append(TrialRecord(round_no, i, 0, None, source, {}, "semantic_success"))
                trials.append(TrialRecord(round_no, i, 1, source, target, {"n": i}, outcome))
            posteriors = {(s, t): EdgePosterior(1.0 + 2 * (i < 3) * (round_no + 1), 1.0 + (i == 3) * (round_no + 1),
                                                round_no + 1) for i, (s, t, _p) in enumerate(EDGES)}
            pruned = [(EDGES[3][0], EDGES[3][1])] if round_no == 1 else []
            store.commit_round(round_no, paths=len(EDGES), trials=trials, posteriors=posteriors, pruned=pruned)
    finally:
        store.close()


def _dataset(folder: Path) -> None:
    folder.mkdir(parents=True)
    b = bench()
    items = [
        wrap(b["trf-001"], task_type=TaskType.DRV, call_records=(12, 1, 8, 1),
             junctions=(junction("get_rest_area_fuel_prices", "list_rest_area_locations", "serviceAreaCode",
                                 "serviceAreaCode", 40),)),
        wrap(b["fin-001"], task_type=TaskType.SEQ, call_records=(1, 1, 3, 1)),
        wrap(b["dst-001"], task_type=TaskType.MIXED, call_records=(30, 25, 2, 2, 1, 1, 1, 1)),
    ]
    write_lines(folder / "items.jsonl", items)
    write_lines(folder / "kept.jsonl", items[:2])
    write_json(folder / "funnel.json", {"counts": {
        "validity": {"in": 3, "rejected": 0, "out": 3}, "answerability": {"in": 3, "rejected": 1, "out": 2},
        "quality": {"in": 2, "rejected": 0, "out": 2}, "contamination": {"in": 2, "rejected": 0, "out": 2}}})
