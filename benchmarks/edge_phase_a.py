"""EDGE Phase A on the catalog against the in-process sandbox: wall time, trials/s, and held-out execution
success of the skeleton beside the refined graph G* (paper Figure 4: 50.2% → 62.7%, pruned 14.8%).

    python benchmarks/edge_phase_a.py [--rounds 100] [--trials 500] [--fractions 0.25,0.5,1] [--seed 0]
                                      [--explore-floor N]
                                      [--workers 2 | --ray ADDRESS] [--heldout 2 --heldout-edges 2000]
                                      [--concurrency 8] [--home ~/.kopa]

For each fraction of the catalog's tools (a seeded sample), it builds the skeleton, admits the rule-based
proposer's bindings and runs the rounds into a fresh run file, then measures held-out success on every
edge of a seeded sample of each set with a seed the rounds never used. ``--workers N`` runs the paths in N
local processes (one runtime each over the same world file), ``--ray`` as Ray tasks; 1 worker runs them on
this process's event loop. Goal on 2 cores: the full catalog at T=100, M=500 in
<= 15 min.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
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
from edge.graph.pool import InProcessPaths, ProcessPaths, RayPaths  # noqa: E402
from edge.graph.proposer import RuleProposer  # noqa: E402
from edge.settings import PhaseASettings  # noqa: E402
from edge.graph.skeleton import build_skeleton  # noqa: E402
from edge.graph.stats import graph_counts, heldout_success, sample_edges  # noqa: E402
from edge.graph.store import GraphStore  # noqa: E402
from mcp_gateway.gateway import open_gateway  # noqa: E402
from sandbox import InProcessSandbox  # noqa: E402
from sandbox.memo import REPEAT_CALLERS_MEMO_BYTES  # noqa: E402


def open_sandbox_gateway(home: Path, scale: float):
    """The chat-profile gateway over the in-process sandbox, its answers memoized as `kopa edge graph build`'s are
    (module-level: worker processes call it too)."""
    sandbox = InProcessSandbox(home, scale=scale, memo_bytes=REPEAT_CALLERS_MEMO_BYTES)
    return open_gateway(upstream="sandbox", sandbox=sandbox, profile="chat", home=home)


def executor_for(args: argparse.Namespace, gateway, catalog):
    """Where the paths run, from --workers / --ray."""
    opener = functools.partial(open_sandbox_gateway, args.home, args.scale)
    if args.ray:
        return lambda plans: RayPaths(opener, plans, address=args.ray, concurrency=args.concurrency)
    if args.workers > 1:
        return lambda plans: ProcessPaths(opener, plans, workers=args.workers, concurrency=args.concurrency)
    return lambda plans: InProcessPaths(PathRunner(gateway.runtime, catalog, plans), concurrency=args.concurrency)


async def one(fraction: float, args: argparse.Namespace, folder: Path) -> None:
    gateway = open_sandbox_gateway(args.home, args.scale)
    catalog = gateway.catalog
    names = sorted(catalog.names())
    tools = sorted(random.Random(args.seed).sample(names, round(fraction * len(names))))
    settings = PhaseASettings(rounds=args.rounds, trials=args.trials, seed=args.seed,
                              explore_floor=args.explore_floor)
    # the meta `kopa edge graph build` writes, so a kept run reads with `kopa edge graph stats|show`
    store = GraphStore.create(folder / f"run-{fraction:g}.duckdb", meta={
        "upstream": "sandbox", "seed": args.seed, "settings": settings.model_dump(exclude={"rounds"}),
        "proposer": {"kind": "rule"}, "tools": tools if fraction < 1 else None})
    started = time.perf_counter()
    skeleton = build_skeleton(catalog, k_intra=settings.k_intra, k_cross=settings.k_cross,
                              seed=settings.seed, tools=tools)
    skeleton_s = time.perf_counter() - started
    round_times: list[float] = []
    try:
        summaries = await build_graph(gateway.runtime, catalog, store, settings, proposer=RuleProposer(),
                                      candidates=lambda: skeleton, executor=executor_for(args, gateway, catalog),
                                      on_round=lambda s: round_times.append(time.perf_counter()))
        wall = time.perf_counter() - started
        calls = sum(s.trials for s in summaries)
        counts = graph_counts(store, catalog)
        print(f"{fraction:>5.0%} of {len(names):,} tools: skeleton {len(skeleton):,} candidates ({skeleton_s:.1f} s), "
              f"{counts.admitted:,} admitted; {args.rounds} rounds x {args.trials} paths: {wall:.1f} s, "
              f"{calls:,} calls, {calls / wall:.0f} calls/s; live {counts.live:,}, pruned {counts.pruned:,} "
              f"({100 * counts.pruned_fraction:.1f}%)")
        tried = [e.posterior.trials for e in store.edges()]
        print(f"       edges tried 0 / 1 / >= n_min ({settings.n_min}) times: "
              + " / ".join(f"{100 * share:.1f}%" for share in (
                  sum(t == 0 for t in tried) / len(tried), sum(t == 1 for t in tried) / len(tried),
                  sum(t >= settings.n_min for t in tried) / len(tried))))
        steady = (round_times[-1] - round_times[0]) / (len(round_times) - 1) if len(round_times) > 1 else None
        if steady:
            print(f"       admission and first round {round_times[0] - started:.1f} s; then {steady:.1f} s a round "
                  f"-> {args.rounds} rounds ~ {(round_times[0] - started + steady * (args.rounds - 1)) / 60:.1f} min")
        if args.heldout:
            edges = store.edges()
            paths = executor_for(args, gateway, catalog)({e.key: e.plan for e in edges})
            sets = {"skeleton": [e.key for e in edges], "G*": [e.key for e in edges if e.pruned_round is None],
                    "pruned": [e.key for e in edges if e.pruned_round is not None]}
            cache = store.inputs_seen()
            started = time.perf_counter()
            for name, keys in sets.items():
                h = await heldout_success(paths, sample_edges(keys, args.heldout_edges, seed=args.seed),
                                          seed=args.seed + 1, per_edge=args.heldout, cache=cache)
                rate = "–" if h.rate is None else f"{100 * h.rate:.1f}%"
                print(f"       held-out {name:<9} {h.edges:>6,} edges, {h.executions:>6,} executions, success {rate}")
            paths.close()
            print(f"       held-out trials: {time.perf_counter() - started:.1f} s")
    finally:
        store.close()
        await gateway.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--trials", type=int, default=500)
    parser.add_argument("--fractions", default="0.25,0.5,1")
    parser.add_argument("--explore-floor", type=int, default=None,
                        help="trials each edge gets before Thompson sampling chooses (None: n_min; 0: Eq. 2 alone)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--heldout", type=int, default=2, help="held-out executions per edge (0: skip)")
    parser.add_argument("--heldout-edges", type=int, default=2000, help="edges sampled per set (0: every edge)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="local worker processes")
    parser.add_argument("--ray", default=None, help="run the paths as Ray tasks on this cluster ('local': start one)")
    parser.add_argument("--concurrency", type=int, default=8, help="paths in flight per process")
    parser.add_argument("--scale", type=float, default=1.0, help="world scale (1: the full world)")
    parser.add_argument("--keep", type=Path, default=None, help="keep the run files in this folder")
    parser.add_argument("--home", type=Path, default=Path(os.environ.get("KOPA_HOME", "~/.kopa")).expanduser())
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)  # --keep: the run files stay, for `kopa edge graph stats|show`
        folder.mkdir(parents=True, exist_ok=True)
        for fraction in (float(f) for f in args.fractions.split(",")):
            asyncio.run(one(fraction, args, folder))


if __name__ == "__main__":
    main()
