"""EDGE Phase B at dataset scale: synthesis wall time, the filter funnel, Tables 10-12 beside the paper.

    python benchmarks/edge_phase_b.py --graph RUN.duckdb [-n 5000] [--seed 0] [--workers 2] [--home ~/.kopa]
                                      [--embeddings] [--no-screen]

Synthesizes ``n`` items from the Phase A run (recording into a throw-away cassette folder), runs the funnel
(replayed validity, answerability, quality, contamination against KOPA-Bench) and prints the time of each
phase, the funnel, and the kept items' statistics beside Tables 10-12. Goal (issue 13): 5,000 items within
±5 points of each Table 12 share, built in <= 20 min on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.task import load_tasks  # noqa: E402
from bench.taskset.build import DEFAULT_TASKS, open_recording_gateway, open_sandbox_gateway  # noqa: E402
from edge.dataset.stats import PAPER_TABLE_12, dataset_stats  # noqa: E402
from edge.filter.contamination import ContaminationAudit, MiniLMEmbedder  # noqa: E402
from edge.filter.funnel import run_funnel  # noqa: E402
from edge.filter.screen import Screen  # noqa: E402
from edge.graph.store import GraphStore  # noqa: E402
from edge.synth.build import RECORDED_AT, synthesize  # noqa: E402
from edge.synth.item import Rejection  # noqa: E402
from edge.synth.validity import validity_problem  # noqa: E402
from mcp_gateway.gateway import open_gateway  # noqa: E402


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cassettes = Path(tmp) / "cassettes"
        store = GraphStore.open(args.graph, read_only=True)
        gateway = open_recording_gateway(args.home, cassettes, "edge-synth", scale=args.scale, stamp=RECORDED_AT)
        catalog = gateway.catalog
        explore = partial(open_sandbox_gateway, args.home, scale=args.scale)
        screen = None if args.no_screen else Screen(catalog=gateway.catalog,
                                                    audit=ContaminationAudit(load_tasks(DEFAULT_TASKS)))
        started = time.perf_counter()
        try:
            done = await synthesize(store, gateway, args.n, args.seed, explore=explore, screen=screen,
                                    workers=args.workers)
        finally:
            await gateway.aclose()
            store.close()
        synth_s = time.perf_counter() - started
        items, abandoned = done.items, done.abandoned
        calls = sum(len(i.task.golden_actions) for i in items)
        print(f"synthesis ({args.workers} worker(s)): {len(items):,} items for {args.n:,} asked in {synth_s:.1f} s "
              f"({len(items) / synth_s:.1f} items/s, {calls:,} golden calls, {done.attempts:,} attempts); "
              f"{sum(abandoned.values()):,} attempts abandoned, most often: "
              + "; ".join(f"{r} ({c})" for r, c in abandoned.most_common(4)))
        print(f"screened: {sum(done.screened.values()):,} made but refused by the screen: "
              + "; ".join(f"{r} ({c})" for r, c in done.screened.most_common(4)))
        replay = open_gateway(upstream="replay", mode="replay", profile="bench", home=args.home, cassettes=cassettes,
                              bundle=items[0].task.bundle)
        embedder = MiniLMEmbedder.load() if args.embeddings else None
        audit = ContaminationAudit(load_tasks(DEFAULT_TASKS), embedder=embedder)

        async def validity(item) -> Rejection | None:
            problem = await validity_problem(item, replay)
            return None if problem is None else Rejection(item_id=item.task.id, stage="validity", reason=problem)

        started = time.perf_counter()
        try:
            result = await run_funnel(items, validity=validity, catalog=catalog, audit=audit)
        finally:
            await replay.aclose()
        print(f"filter: {time.perf_counter() - started:.1f} s; total {time.perf_counter() - started + synth_s:.1f} s")
        print(result.table())
        stats = dataset_stats(result.kept)
        print(stats.table())
        off = {name: round(stats.type_shares[name] - paper, 1) for name, paper in PAPER_TABLE_12.items()
               if abs(stats.type_shares[name] - paper) > 5}
        print("Table 12 within ±5 points of every share" if not off else f"Table 12 beyond ±5 points: {off}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--graph", type=Path, required=True, help="Phase A run file")
    parser.add_argument("-n", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--embeddings", action="store_true", help="the contamination audit also uses MiniLM")
    parser.add_argument("--workers", type=int, default=2, help="processes running synthesis attempts")
    parser.add_argument("--no-screen", action="store_true", help="count every item made toward the quotas")
    parser.add_argument("--home", type=Path, default=Path(os.environ.get("KOPA_HOME", "~/.kopa")).expanduser())
    asyncio.run(main(parser.parse_args()))
