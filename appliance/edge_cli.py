"""`kopa edge graph build | stats | show`: EDGE Phase A, the execution-grounded tool graph.

    kopa edge graph build [--sandbox | --bundle REF] [--seed N] [--rounds T] [--trials M] [--run FILE] [--tool NAME ...]
                          [--workers N | --ray ADDRESS]
    kopa edge graph stats RUN [--heldout 2] [--json]     # Figure 4 beside the paper, edges per platform/domain
                              [--plots DIR]              # + DIR/stats.json and Figures 4, 6, 7 as figure-N.svg
    kopa edge graph show TOOL [--run RUN]                # a tool's edges in and out, with their posteriors

A run is one DuckDB file (default ``<home>/edge/graphs/graph-<UTC time>.duckdb``); giving an existing file
to ``build`` resumes it, and a file made with another seed, upstream, settings, tool set or binding proposer is
refused. Bindings come from the ``proposer`` model profile (``KOPA_MODELS__PROPOSER__BASE_URL``/``_MODEL``/``_API_KEY``
or ``kopa.toml`` ``[models.proposer]``) when it has a base URL (``edge.graph.llm_proposer``; its replies are cached
beside the run file), else from the rule proposer.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .config import KopaSettings

if TYPE_CHECKING:
    from mcp_gateway.gateway import Gateway

edge_app = typer.Typer(help="EDGE: execution-grounded tool graph (Phase A) and data synthesis.", no_args_is_help=True)
graph_app = typer.Typer(help="Phase A: the execution-grounded dynamic tool graph.", no_args_is_help=True)
edge_app.add_typer(graph_app, name="graph")
err = Console(stderr=True, soft_wrap=True)


def _out() -> Console:
    """A console sized now, from the terminal (or COLUMNS) this command runs in."""
    return Console()


def _graphs_dir(settings: KopaSettings) -> Path:
    return settings.home_dir / "edge" / "graphs"


def _open_gateway(settings: KopaSettings, upstream: str) -> Gateway:
    """The chat-profile gateway the trials run through: the in-process sandbox, or a bundle replayed (and
    whatever it lacks recorded from the sandbox into a new version). The sandbox's answers are memoized: about
    half of Phase A's trial requests repeat one made before (the world is read-only, so an answer is the request's)."""
    from mcp_gateway.gateway import open_gateway
    from sandbox.memo import REPEAT_CALLERS_MEMO_BYTES

    from .sandbox_service import in_process_sandbox

    sandbox = in_process_sandbox(settings, memo_bytes=REPEAT_CALLERS_MEMO_BYTES)
    if upstream == "sandbox":
        return open_gateway(upstream="sandbox", sandbox=sandbox, profile="chat", home=settings.home_dir)
    from recorder import CassetteStore

    bundle = upstream.removeprefix("bundle:")
    CassetteStore(settings.cassettes_dir).resolve(bundle)  # an unknown bundle is an error, not a new recording
    return open_gateway(upstream="sandbox", sandbox=sandbox, profile="chat", home=settings.home_dir,
                        mode="replay-or-record", cassettes=settings.cassettes_dir, bundle=bundle)


@graph_app.command("build")
def build(
    sandbox: Annotated[bool, typer.Option("--sandbox", help="run the trials against the in-process sandbox "
                                                            "(the default)")] = False,
    bundle: Annotated[str | None, typer.Option(help="replay this bundle (NAME or NAME@VERSION); what it lacks "
                                                    "is recorded from the sandbox into a new version")] = None,
    seed: Annotated[int | None, typer.Option(help="seed of every random choice (default 0)")] = None,
    rounds: Annotated[int | None, typer.Option(help="T, graph-update iterations (Table 9: 100)")] = None,
    trials: Annotated[int | None, typer.Option(help="M, paths per iteration (Table 9: 500)")] = None,
    run: Annotated[Path | None, typer.Option(help="run file; an existing one is resumed")] = None,
    concurrency: Annotated[int, typer.Option(help="paths executed at once", min=1, max=256)] = 8,
    tool: Annotated[list[str] | None, typer.Option(help="build the graph over these tools only (repeatable; "
                                                        "default: the whole catalog)")] = None,
    workers: Annotated[int, typer.Option(help="local processes the paths run in, each with its own runtime over "
                                              "the same world (1: this process)", min=1, max=64)] = 1,
    ray: Annotated[str | None, typer.Option("--ray", help="run the paths as Ray tasks on the cluster at this "
                                                          "address ('local' starts one here)")] = None,
) -> None:
    """Build the skeleton, then refine it by executing sampled paths; resumable, deterministic per seed."""
    from bench.options import stamped_name
    from edge.graph.build import build_graph
    from edge.graph.skeleton import build_skeleton
    from edge.graph.store import GraphStore

    if sandbox and bundle:
        raise typer.BadParameter("give --sandbox or --bundle, not both")
    if ray and workers > 1:
        raise typer.BadParameter("give --workers or --ray, not both")
    if bundle and (ray or workers > 1):
        raise typer.BadParameter("--bundle records what the bundle lacks into a new version from one process; "
                                 "run it without --workers/--ray (or use --sandbox)")
    settings = KopaSettings()
    phase_a = settings.edge.with_options(seed=seed, rounds=rounds, trials=trials)  # options, env, kopa.toml [edge]
    upstream = f"bundle:{bundle}" if bundle else "sandbox"
    path = run or _graphs_dir(settings) / f"{stamped_name('graph')}.duckdb"
    proposer, proposer_id = _proposer(path)
    tools = sorted(set(tool)) if tool else None
    if tools:
        from mcp_gateway.catalog import load_catalog

        known = load_catalog()
        for name in tools:
            known.get(name)  # before the run file exists: an unknown name raises, naming the nearest ones
    meta = {"upstream": upstream, "seed": phase_a.seed, "settings": phase_a.model_dump(exclude={"rounds"}),
            "proposer": proposer_id, "tools": tools}
    store = GraphStore.open(path, expect=meta) if path.exists() else GraphStore.create(path, meta=meta)
    gateway = _open_gateway(settings, upstream)
    catalog = gateway.catalog
    err.print(f"binding proposer: {proposer.describe() if hasattr(proposer, 'describe') else 'rule'}")
    start = store.next_round()
    err.print(f"Phase A run {path} ({upstream}, seed {phase_a.seed}): rounds {start}..{phase_a.rounds - 1}, "
              f"{phase_a.trials} paths each")
    with Progress(TextColumn("[bold]rounds"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[info]}"),
                  TimeElapsedColumn(), console=err) as bar:
        job = bar.add_task("rounds", total=phase_a.rounds, completed=start, info="")

        def on_round(s) -> None:
            rate = f"{100 * s.edge_successes / s.edge_trials:.0f}%" if s.edge_trials else "–"
            bar.update(job, advance=1, info=f"edge success {rate}, pruned {s.pruned}, live {s.live_edges}")

        async def go() -> None:
            try:
                await build_graph(gateway.runtime, catalog, store, phase_a, proposer=proposer,
                                  candidates=lambda: build_skeleton(catalog, k_intra=phase_a.k_intra,
                                                                    k_cross=phase_a.k_cross,
                                                                    seed=phase_a.seed, tools=tools),
                                  concurrency=concurrency, on_round=on_round,
                                  executor=_executor(settings, upstream, workers, ray, concurrency))
            finally:
                await gateway.aclose()

        asyncio.run(go())
    counts = _counts(store, catalog)
    store.close()
    if any(getattr(proposer, "stats", {}).values()):  # zero everywhere: this start admitted nothing
        s = proposer.stats
        err.print(f"binding proposer: {s['llm']:,} edges answered by the model, rule fallback for "
                  f"{s['fallback_invalid']:,} invalid replies and {s['fallback_error']:,} endpoint errors; "
                  f"{s['cached']:,} replies reused from the cache")
    _out().print(f"{counts.admitted:,} edges admitted, {counts.live:,} live, {counts.pruned:,} pruned "
                  f"({100 * counts.pruned_fraction:.1f}%) → {path}")


def _proposer(run: Path) -> tuple[Any, dict[str, str]]:
    """The LLM proposer when the ``proposer`` profile has a base URL (replies cached beside the run), else the rule
    one; and the identity the run records, so that a run is never resumed with another proposer."""
    from edge.graph.proposer import RuleProposer

    llm = KopaSettings().models.proposer
    if not llm.configured:
        return RuleProposer(), {"kind": "rule"}
    from edge.graph.llm_proposer import LLMProposer

    proposer = LLMProposer(llm, cache_path=llm.cache or run.with_name(f"{run.stem}.llm-replies.jsonl"))
    return proposer, proposer.identity


def _executor(settings: KopaSettings, upstream: str, workers: int, ray: str | None, concurrency: int):
    """Where the paths run: None (this event loop), ``workers`` local processes, or Ray tasks; each worker
    opens the same gateway this command does."""
    import functools

    opener = functools.partial(_open_gateway, settings, upstream)
    if ray:
        from edge.graph.pool import RayPaths

        return lambda plans: RayPaths(opener, plans, address=ray, concurrency=concurrency)
    if workers > 1:
        from edge.graph.pool import ProcessPaths

        return lambda plans: ProcessPaths(opener, plans, workers=workers, concurrency=concurrency)
    return None


def _counts(store, catalog):
    from edge.graph.stats import graph_counts

    return graph_counts(store, catalog)


def _latest_run(settings: KopaSettings) -> Path:
    runs = sorted(_graphs_dir(settings).glob("graph-*.duckdb"))
    if not runs:
        raise typer.BadParameter(f"no Phase A run in {_graphs_dir(settings)}; give --run FILE")
    return runs[-1]


@graph_app.command("stats")
def stats(
    run: Annotated[Path, typer.Argument(help="the run file")],
    heldout: Annotated[int, typer.Option(help="held-out executions per edge for Figure 4 (0: skip them)",
                                         min=0)] = 2,
    sample: Annotated[int, typer.Option(help="edges per set tried held-out (a seeded sample; 0: every edge)",
                                        min=0)] = 500,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
    plots: Annotated[Path | None, typer.Option(help="write the JSON (stats.json) and Figures 4, 6 and 7 (figure-4.svg, "
                                                    "figure-6.svg, figure-7.svg) into this folder")] = None,
) -> None:
    """Edges admitted, live and pruned, per platform and domain, and Figure 4's success rates beside the paper's;
    the run's Figures 4, 6 and 7 as data (``--json``) and as SVG plots (``--plots DIR``)."""
    from edge.graph.executor import PathRunner
    from edge.graph.pool import InProcessPaths
    from edge.graph.stats import PAPER_FIGURE_4, edge_evidence, figures, heldout_success, sample_edges
    from edge.graph.store import GraphStore
    from mcp_gateway.catalog import load_catalog

    settings = KopaSettings()
    store = GraphStore.open(run)
    catalog = load_catalog()
    counts = _counts(store, catalog)
    rates: dict[str, Any] = {}
    if heldout:
        edges = store.edges()
        sets = {"skeleton": [e.key for e in edges], "refined": [e.key for e in edges if e.pruned_round is None],
                "pruned": [e.key for e in edges if e.pruned_round is not None]}
        sets = {name: sample_edges(keys, sample, seed=int(store.meta()["seed"])) for name, keys in sets.items()}
        gateway = _open_gateway(settings, store.meta()["upstream"])
        paths = InProcessPaths(PathRunner(gateway.runtime, gateway.catalog, {e.key: e.plan for e in edges}))
        seed = int(store.meta()["seed"]) + 1  # not the run's own seed: held-out draws

        async def measure() -> dict[str, Any]:
            try:
                cache = store.inputs_seen()
                return {name: await heldout_success(paths, keys, seed=seed, per_edge=heldout, cache=cache)
                        for name, keys in sets.items()}
            finally:
                await gateway.aclose()

        rates = asyncio.run(measure())
    evidence = edge_evidence(store)
    figure_data = figures(store, rates, edges=evidence)
    store.close()
    data = {"admitted": counts.admitted, "live": counts.live, "pruned": counts.pruned,
            "pruned_fraction": counts.pruned_fraction, "rounds": counts.rounds, "trials": counts.trials,
            "by_platform": counts.by_platform, "by_domain": counts.by_domain, "cross_platform": counts.cross_platform,
            "heldout": {k: {"edges": v.edges, "executions": v.executions, "successes": v.successes,
                            "rate": v.rate, "paper": PAPER_FIGURE_4[k]} for k, v in rates.items()}, **figure_data}
    if plots is not None:
        from edge.graph.plots import write_figures

        written = write_figures(plots, figure_data, evidence, name=run.stem)
        (plots / "stats.json").write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        err.print(f"stats.json, {', '.join(p.name for p in written.values())} → {plots}")
    if as_json:
        print(json.dumps(data, ensure_ascii=False, indent=1))
        return
    console = _out()
    console.print(f"{counts.rounds} rounds, {counts.trials:,} calls; {counts.admitted:,} edges admitted, "
                  f"{counts.live:,} live (G*), {counts.pruned:,} pruned ({100 * counts.pruned_fraction:.1f}%), "
                  f"{counts.cross_platform:,} live cross-platform")
    if rates:
        table = Table("edge set", "edges", "executions", "success", "paper (Figure 4)", title="held-out execution")
        for name, r in rates.items():
            shown = "–" if r.rate is None else f"{100 * r.rate:.1f}%"
            table.add_row(name, f"{r.edges:,}", f"{r.executions:,}", shown, f"{100 * PAPER_FIGURE_4[name]:.1f}%")
        console.print(table)
    f6, f7 = figure_data["figure_6"], figure_data["figure_7"]
    smooth = [v for v in f6["pass_rate_ma"] if v is not None]
    if smooth:
        step = [v for v in f6["step_success_ma"] if v is not None]
        console.print(f"Figure 6 (moving average over {f6['window']} rounds): trajectory pass rate "
                      f"{100 * smooth[0]:.1f}% → {100 * smooth[-1]:.1f}%, step success {100 * step[0]:.1f}% → "
                      f"{100 * step[-1]:.1f}%; Figure 7: {f7['probed']:,} probed edges, {f7['kept']['edges']:,} kept, "
                      f"{f7['pruned']['edges']:,} pruned")
    by = Table("platform", "live edges", title="G* by source platform")
    for platform, n in counts.by_platform.items():
        by.add_row(platform, f"{n:,}")
    console.print(by)
    dom = Table("domain", "live edges", title="G* by source domain")
    for domain, n in counts.by_domain.items():
        dom.add_row(domain, f"{n:,}")
    console.print(dom)


@graph_app.command("show")
def show(
    tool: Annotated[str, typer.Argument(help="tool name")],
    run: Annotated[Path | None, typer.Option(help="run file (default: the newest in <home>/edge/graphs)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """A tool's edges out and in, with their bindings, posteriors and state."""
    from edge.graph.store import GraphStore
    from mcp_gateway.catalog import load_catalog

    catalog = load_catalog()
    if tool not in catalog:
        catalog.get(tool)  # raises with the nearest names
    store = GraphStore.open(run or _latest_run(KopaSettings()))
    edges = [e for e in store.edges() if tool in e.key]
    store.close()
    edges = sorted(edges, key=lambda e: (e.source != tool, -e.posterior.mean))
    if as_json:
        print(json.dumps([{"source": e.source, "target": e.target, "plan": list(e.plan), "feasibility": e.feasibility,
                           "alpha": e.posterior.alpha, "beta": e.posterior.beta, "trials": e.posterior.trials,
                           "mean": e.posterior.mean, "pruned_round": e.pruned_round} for e in edges],
                         ensure_ascii=False, indent=1))
        return
    table = Table("direction", "other tool", "binding", "feasibility", "α", "β", "trials", "mean", "state",
                  title=f"edges of {tool}")
    for e in edges:
        binding = ", ".join(f"{p['param']}←{p['field']}" if p["kind"] == "upstream" else f"{p['param']}?"
                            for p in e.plan)
        state = "live" if e.pruned_round is None else f"pruned r{e.pruned_round}"
        table.add_row("out →" if e.source == tool else "← in", e.target if e.source == tool else e.source, binding,
                      f"{e.feasibility:.2f}", f"{e.posterior.alpha:.1f}", f"{e.posterior.beta:.1f}",
                      str(e.posterior.trials), f"{e.posterior.mean:.2f}", state)
    _out().print(table if edges else f"{tool} has no edge in this run")
