"""EDGE Phase A on the catalog against the in-process sandbox: wall time, trials/s, and held-out execution
success of the skeleton beside the refined graph G* (paper Figure 4: 50.2% → 62.7%, pruned 14.8%).

    python benchmarks/edge_phase_a.py [--rounds 100] [--trials 500] [--fractions 0.25,0.5,1] [--seed 0]
                                      [--heldout 2] [--concurrency 8] [--home ~/.kopa]

For each fraction of the catalog's tools (a seeded sample), it builds the skeleton, admits the rule-based
proposer's bindings and runs the rounds into a fresh run file, then measures held-out success on every
edge of each set with a seed the rounds never used. Goal on 2 cores: the full catalog at T=100, M=500 in
<= 15 min.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from edge.graph.build import build_graph  # noqa: E402
from edge.graph.executor import PathRunner  # noqa: E402
from edge.graph.proposer import RuleProposer  # noqa: E402
from edge.graph.settings import PhaseASettings  # noqa: E402
from edge.graph.skeleton import build_skeleton  # noqa: E402
from edge.graph.stats import graph_counts, heldout_success  # noqa: E402
from edge.graph.store import GraphStore  # noqa: E402
from mcp_gateway.gateway import open_gateway  # noqa: E402
from sandbox import InProcessSandbox  # noqa: E402


async def one(fraction: float, args: argparse.Namespace, folder: Path) -> None:
    gateway = open_gateway(upstream="sandbox", sandbox=InProcessSandbox(args.home, scale=args.scale), profile="chat",
                           home=args.home)
    catalog = gateway.catalog
    names = sorted(catalog.names())
    tools = sorted(random.Random(args.seed).sample(names, round(fraction * len(names))))
    settings = PhaseASettings(rounds=args.rounds, trials=args.trials, seed=args.seed)
    store = GraphStore.create(folder / f"run-{fraction:g}.duckdb", meta={"seed": args.seed})
    started = time.perf_counter()
    skeleton = build_skeleton(catalog, k_intra=settings.k_intra, k_cross=settings.k_cross, s_min=settings.s_min,
                              seed=settings.seed, tools=tools)
    skeleton_s = time.perf_counter() - started
    try:
        summaries = await build_graph(gateway.runtime, catalog, store, settings, proposer=RuleProposer(),
                                      candidates=lambda: skeleton, concurrency=args.concurrency)
        wall = time.perf_counter() - started
        calls = sum(s.trials for s in summaries)
        counts = graph_counts(store, catalog)
        print(f"{fraction:>5.0%} of {len(names):,} tools: skeleton {len(skeleton):,} candidates ({skeleton_s:.1f} s), "
              f"{counts.admitted:,} admitted; {args.rounds} rounds x {args.trials} paths: {wall:.1f} s, "
              f"{calls:,} calls, {calls / wall:.0f} calls/s; live {counts.live:,}, pruned {counts.pruned:,} "
              f"({100 * counts.pruned_fraction:.1f}%)")
        if args.heldout:
            edges = store.edges()
            runner = PathRunner(gateway.runtime, catalog, {e.key: e.plan for e in edges})
            sets = {"skeleton": [e.key for e in edges], "G*": [e.key for e in edges if e.pruned_round is None],
                    "pruned": [e.key for e in edges if e.pruned_round is not None]}
            cache = store.inputs_seen()
            for name, keys in sets.items():
                h = await heldout_success(runner, keys, seed=args.seed + 1, per_edge=args.heldout, cache=cache,
                                          concurrency=args.concurrency)
                rate = "–" if h.rate is None else f"{100 * h.rate:.1f}%"
                print(f"       held-out {name:<9} {h.edges:>6,} edges, {h.executions:>6,} executions, success {rate}")
    finally:
        store.close()
        await gateway.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--trials", type=int, default=500)
    parser.add_argument("--fractions", default="0.25,0.5,1")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--heldout", type=int, default=2, help="held-out executions per edge (0: skip)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--scale", type=float, default=1.0, help="world scale (1: the full world)")
    parser.add_argument("--home", type=Path, default=Path(os.environ.get("KOPA_HOME", "~/.kopa")).expanduser())
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for fraction in (float(f) for f in args.fractions.split(",")):
            asyncio.run(one(fraction, args, Path(tmp)))


if __name__ == "__main__":
    main()
