"""KOPA-Bench harness overhead: the oracle over the whole task set, 4 rollouts, replaying the shipped bundle.

    python benchmarks/bench_harness.py [--tasks bench/tasks/kopa-bench.jsonl] [--rollouts 4] [--seeds 0]
                                       [--concurrency 4]

The oracle spends no time thinking, so the wall time is the harness's own: session reset, system-state
actions, the golden calls through ToolRuntime and strict replay, the three scorers, transcripts and the
resumable episodes.jsonl. No sandbox process and no network: replay needs only the cassettes folder.
Goal on this machine (2 cores): <= 60 s for 145 tasks x 4 rollouts.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.agents import OracleAgent  # noqa: E402
from bench.runner import open_bench_gateway, run_benchmark, run_bundle  # noqa: E402
from bench.task import load_tasks  # noqa: E402


async def main(args: argparse.Namespace) -> None:
    tasks = load_tasks(args.tasks)
    seeds = [int(s) for s in args.seeds.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        gateway = open_bench_gateway(run_bundle(tasks), home=Path(tmp) / "home", cassettes=args.cassettes)
        opened = time.perf_counter() - started
        try:
            run = await run_benchmark(tasks, OracleAgent(), gateway, rollouts=args.rollouts, seeds=seeds,
                                      out_dir=Path(tmp) / "run", concurrency=args.concurrency, agent_name="oracle")
        finally:
            await gateway.aclose()
        total = time.perf_counter() - started
    episodes = len(run.episodes)
    calls = sum(len(t.golden_actions) for t in tasks) * args.rollouts * len(seeds)
    print(f"oracle over {len(tasks)} tasks x {args.rollouts} rollouts x {len(seeds)} seed(s) = {episodes} episodes, "
          f"{calls} tool calls, concurrency {args.concurrency}")
    print(f"bundle open {opened:.2f} s; whole run {total:.1f} s ({episodes / total:.0f} episodes/s, "
          f"{1000 * total / episodes:.1f} ms/episode); pass@1 {run.summary.pass_at[1]:.3f} "
          f"(goal: <= 60 s on 2 cores)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=Path, default=REPO / "bench" / "tasks" / "kopa-bench.jsonl")
    parser.add_argument("--cassettes", type=Path, default=REPO / "cassettes")
    parser.add_argument("--rollouts", type=int, default=4)
    parser.add_argument("--seeds", default="0")
    parser.add_argument("--concurrency", type=int, default=4)
    asyncio.run(main(parser.parse_args()))
