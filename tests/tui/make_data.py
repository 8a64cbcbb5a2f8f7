"""Write the console's committed fixture data under tests/tui/data (run once; the output is committed).

    .venv/bin/python -m tests.tui.make_data

* ``tasks.jsonl`` (four shipped KOPA-Bench tasks, four domains; the first-page agent fails two) and ``tasks-small.jsonl`` (two of them);
* ``runs/oracle`` and ``runs/first-page``: real replayed runs of those four tasks, their times fixed;
* ``cassettes/tiny``: two versions of a small bundle recorded through the gateway from world v1, then v2
  (so a drift report between them has entries), ``recorded_at`` stamped and ``created_at`` fixed.

What needs no upstream (the metadata DB, the EDGE graph and dataset, the training job) is built per test
session from code by ``tests.tui.fixture_home``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

from bench.agents import make_agent
from bench.runner import open_bench_gateway, run_benchmark
from bench.task import load_tasks
from bench.taskset.build import DEFAULT_CASSETTES, DEFAULT_TASKS
from mcp_gateway.gateway import open_gateway
from tests.conftest import TEST_DATA_DIR, sandbox_upstream

DATA = Path(__file__).resolve().parent / "data"
TASK_IDS = ("trf-001", "fin-001", "pol-001", "dst-001")  # first-page fails the last two
SMALL_IDS = ("trf-001", "fin-001")
STAMP = "2026-11-30T09:00:00.000Z"
BUNDLE_TIMES = {"v1": "2026-11-30T09:00:00.000Z", "v2": "2026-12-01T09:00:00.000Z"}
RUN_TIMES = {"oracle": ("2026-12-01T10:00:00+00:00", "2026-12-01T10:00:05+00:00"),
             "first-page": ("2026-12-02T10:00:00+00:00", "2026-12-02T10:00:04+00:00")}
CALLS = [  # each touches an item of world v2's changelog, or is a control
    ("search_school_info", {"ATPT_OFCDC_SC_CODE": "T10", "numOfRows": 5}),
    ("gg_aed_location", {"SIGUN_CD": "41590", "numOfRows": 5}),
    ("search_laws", {"query": "민법", "numOfRows": 5}),
]


def write_tasks() -> None:
    lines = {json.loads(line)["id"]: line for line in DEFAULT_TASKS.read_text(encoding="utf-8").splitlines()}
    (DATA / "tasks.jsonl").write_text("".join(lines[i] + "\n" for i in TASK_IDS), encoding="utf-8")
    (DATA / "tasks-small.jsonl").write_text("".join(lines[i] + "\n" for i in SMALL_IDS), encoding="utf-8")


async def write_run(agent: str) -> None:
    out = DATA / "runs" / agent
    shutil.rmtree(out, ignore_errors=True)
    tasks_file = DATA / "tasks.jsonl"
    tasks = load_tasks(tasks_file)
    gateway = open_bench_gateway(tasks[0].bundle, cassettes=DEFAULT_CASSETTES)
    try:
        await run_benchmark(tasks, make_agent(agent), gateway, rollouts=2, seeds=[0], out_dir=out,
                            tasks_file=tasks_file, agent_name=agent)
    finally:
        await gateway.aclose()
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    run["started_at"], run["finished_at"] = RUN_TIMES[agent]
    run["config"]["tasks_file"] = "tasks.jsonl"
    (out / "run.json").write_text(json.dumps(run, ensure_ascii=False, indent=1), encoding="utf-8")
    (out / "replay-stats.json").unlink(missing_ok=True)


async def write_bundle() -> None:
    cassettes = DATA / "cassettes"
    shutil.rmtree(cassettes, ignore_errors=True)
    for version in ("v1", "v2"):
        gateway = open_gateway(sandbox=sandbox_upstream(version), home=TEST_DATA_DIR, mode="record",
                               cassettes=cassettes, bundle="tiny", record_stamp=STAMP)
        try:
            for tool, args in CALLS:
                await gateway.runtime.call(tool, args, "fixture")
        finally:
            await gateway.aclose()
        head = (cassettes / "tiny" / "HEAD").read_text().strip()
        manifest = cassettes / "tiny" / head / "manifest.json"
        manifest.chmod(0o644)
        data = json.loads(manifest.read_text(encoding="utf-8"))
        data["created_at"] = BUNDLE_TIMES[version]
        manifest.write_text(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        manifest.chmod(0o444)
    (cassettes / "tiny" / ".lock").unlink(missing_ok=True)


def main() -> None:
    DATA.mkdir(parents=True, exist_ok=True)
    write_tasks()
    for agent in RUN_TIMES:
        asyncio.run(write_run(agent))
    asyncio.run(write_bundle())
    print(f"wrote {DATA}")


if __name__ == "__main__":
    main()
