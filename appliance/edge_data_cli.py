"""`kopa edge synth | filter | export | stats`: EDGE Phase B, from the Phase A graph to a training dataset.

    kopa edge synth --graph RUN [-n 5000] [--seed 0] [--workers N] [--out DIR]   # trajectories, queries, answers
                    [--exclude-platform ID ...]                     # hold platforms out (Table 14)
    kopa edge filter DIR [--no-embeddings]                          # the three stages + contamination audit
    kopa edge export DIR                                            # verl parquet + SFT JSONL + the bundle
    kopa edge stats DIR [--json]                                    # Tables 10-13 and the funnel beside the paper

A dataset folder (default ``<home>/edge/datasets/<graph run>-s<seed>-n<n>``) is written in that order:
``items.jsonl`` and ``synth.json``; ``kept.jsonl``, ``rejections.jsonl`` and ``funnel.json``; ``train.parquet``,
``sft.jsonl`` and ``export.json``. No file is ever overwritten: running a step again needs a new folder.
Synthesis explores the in-process sandbox and records the golden calls of the items it keeps into a new version
of the ``edge-synth`` bundle in ``<home>/cassettes``; the items are pinned to it, and filtering and export replay
it strictly. By default it screens each item with the filter's rules as it makes it and fills Table 12's quotas
with those that pass: ``kopa edge filter`` then keeps n items in that mix (the refused ones stay in
``items.jsonl``, so the funnel shows them).
Queries come from the ``writer`` model profile's endpoint when it has a base URL (``KOPA_MODELS__WRITER__*``,
``kopa.toml`` ``[models.writer]``), else from the rule-based Korean realiser; the quality judge from the ``judge``
profile when set, else rule checks only.
``--exclude-platform`` holds a platform out of the corpus (Table 14): no item calls any of its tools; synth.json
records it, and ``filter`` and ``stats`` report the KOPA-Bench tasks on it beside Table 13 (and drop any item that
calls it).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from .config import KopaSettings
from .edge_cli import edge_app

err = Console(stderr=True, soft_wrap=True)
SYNTH_BUNDLE = "edge-synth"


def _out() -> Console:
    return Console()


def _datasets_dir(settings: KopaSettings) -> Path:
    return settings.home_dir / "edge" / "datasets"


def _replay_gateway(settings: KopaSettings, bundle: str):
    from mcp_gateway.gateway import open_gateway

    return open_gateway(upstream="replay", mode="replay", profile="bench", home=settings.home_dir,
                        cassettes=settings.cassettes_dir, bundle=bundle)


def _one_bundle(items) -> str:
    bundles = sorted({i.task.bundle for i in items})
    if len(bundles) != 1:
        raise typer.BadParameter(f"the items are pinned to {len(bundles)} bundles ({', '.join(bundles[:3])}); "
                                 "a dataset folder holds one synthesis run")
    return bundles[0]


@edge_app.command("synth")
def synth(
    graph: Annotated[Path, typer.Option(help="the Phase A run file (kopa edge graph build)")],
    n: Annotated[int, typer.Option("-n", "--n", help="items to synthesize, split over Table 12's types",
                                   min=1)] = 5000,
    seed: Annotated[int, typer.Option(help="seed of every choice")] = 0,
    out: Annotated[Path | None, typer.Option(help="dataset folder (default <home>/edge/datasets/...)")] = None,
    workers: Annotated[int, typer.Option(help="local processes running attempts (same items for any number)",
                                         min=1, max=64)] = 1,
    screen: Annotated[bool, typer.Option(help="fill the quotas with items that pass the filter's rules, so the "
                                               "filtered dataset has n items in Table 12's mix")] = True,
    exclude_platform: Annotated[list[str] | None, typer.Option(
        "--exclude-platform", help="hold this platform out: no item calls any of its tools (repeatable; Table 14's "
                                   "held-out evaluation)")] = None,
) -> None:
    """Typed trajectories over G*, executed against the sandbox and recorded, with Korean queries and answers."""
    from functools import partial

    from bench.task import load_tasks
    from bench.taskset.build import DEFAULT_TASKS, open_recording_gateway, open_sandbox_gateway
    from edge.dataset.items_io import write_json, write_lines
    from edge.filter.contamination import ContaminationAudit
    from edge.filter.screen import Screen
    from edge.graph.store import GraphStore
    from edge.synth.build import RECORDED_AT, synthesize
    from edge.synth.llm_writer import query_writer
    from edge.synth.platforms import held_out_platforms

    settings = KopaSettings()
    try:
        held_out = held_out_platforms(exclude_platform or ())
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--exclude-platform") from None
    folder = out or _datasets_dir(settings) / f"{graph.stem}-s{seed}-n{n}"
    if (folder / "items.jsonl").exists():
        raise typer.BadParameter(f"{folder} already holds a synthesis run; give another --out")
    store = GraphStore.open(graph, read_only=True)
    writer = query_writer(settings.models.writer)
    gateway = open_recording_gateway(settings.home_dir, settings.cassettes_dir, SYNTH_BUNDLE,
                                     scale=settings.sandbox.scale, stamp=RECORDED_AT)
    explore = partial(open_sandbox_gateway, settings.home_dir, scale=settings.sandbox.scale)
    audit = ContaminationAudit(load_tasks(DEFAULT_TASKS), catalog=gateway.catalog, held_out=held_out)
    screening = Screen(catalog=gateway.catalog, audit=audit) if screen else None
    err.print(f"synthesizing {n:,} items from {graph} (seed {seed}, {workers} worker(s); queries by "
              f"{'the rule-based realiser' if writer is None else f'the chat endpoint {writer.settings.model}'}) into {folder}"
              + (f"; held out: {', '.join(held_out)}" if held_out else ""))
    started = time.perf_counter()

    async def go():
        try:
            return await synthesize(store, gateway, n, seed, explore=explore, writer=writer, screen=screening,
                                    workers=workers, exclude_platforms=held_out)
        finally:
            await gateway.aclose()

    try:
        done = asyncio.run(go())
    finally:
        store.close()
    wall = time.perf_counter() - started
    items = done.items
    write_lines(folder / "items.jsonl", items)
    write_json(folder / "synth.json", {"graph": str(graph), "seed": seed, "n": n, "items": len(items),
                                       "bundle": items[0].task.bundle if items else None, "wall_s": round(wall, 1),
                                       "workers": workers, "attempts": done.attempts,
                                       "excluded_platforms": list(done.excluded_platforms),
                                       "abandoned": dict(done.abandoned.most_common()),
                                       "screened": dict(done.screened.most_common())})
    _out().print(f"{len(items):,} items in {wall:.1f} s ({done.attempts:,} attempts, "
                 f"{sum(done.abandoned.values()):,} abandoned, {sum(done.screened.values()):,} made but refused by "
                 f"the screen) → {folder / 'items.jsonl'}")


@edge_app.command("filter")
def filter_(
    folder: Annotated[Path, typer.Argument(help="dataset folder (kopa edge synth)")],
    embeddings: Annotated[bool, typer.Option(help="the contamination audit also compares MiniLM embeddings")] = True,
) -> None:
    """Execution validity (replayed), answerability and leakage, quality, and the contamination audit."""
    from bench.task import load_tasks
    from bench.taskset.build import DEFAULT_TASKS
    from edge.dataset.items_io import read_items, write_json, write_lines
    from edge.filter.contamination import ContaminationAudit, MiniLMEmbedder
    from edge.filter.funnel import run_funnel
    from edge.filter.quality import quality_judge
    from edge.synth.item import Rejection
    from edge.synth.validity import validity_problem
    from mcp_gateway.catalog import load_catalog

    settings = KopaSettings()
    items = read_items(folder / "items.jsonl")
    if (folder / "kept.jsonl").exists():
        raise typer.BadParameter(f"{folder} is filtered already (kept.jsonl exists)")
    catalog = load_catalog()
    judge = quality_judge(settings.models.judge)
    audit = ContaminationAudit(load_tasks(DEFAULT_TASKS), embedder=MiniLMEmbedder.load() if embeddings else None,
                               catalog=catalog, held_out=_held_out(folder))
    gateway = _replay_gateway(settings, _one_bundle(items)) if items else None

    async def validity(item) -> Rejection | None:
        problem = await validity_problem(item, gateway)
        return None if problem is None else Rejection(item_id=item.task.id, stage="validity", reason=problem)

    async def go():
        try:
            return await run_funnel(items, validity=validity, catalog=catalog, judge=judge, audit=audit)
        finally:
            if gateway is not None:
                await gateway.aclose()

    result = asyncio.run(go())
    write_lines(folder / "kept.jsonl", result.kept)
    write_lines(folder / "rejections.jsonl", result.rejections)
    write_json(folder / "funnel.json", {"counts": result.counts, "reasons": result.reasons,
                                        "judge": result.judge_stats, "embeddings": embeddings})
    _out().print(_funnel_table(result.counts))
    _out().print(f"{len(result.kept):,} of {len(items):,} items kept → {folder / 'kept.jsonl'}")


def _held_out(folder: Path) -> tuple[str, ...]:
    """The platforms the synthesis run held out (synth.json; none for a folder written before the option)."""
    from edge.dataset.items_io import read_json

    synth = folder / "synth.json"
    return tuple(read_json(synth).get("excluded_platforms") or ()) if synth.exists() else ()


def _funnel_table(counts: dict[str, dict[str, int]]) -> Table:
    table = Table("stage", "in", "rejected", "out", title="filter funnel")
    for stage, c in counts.items():
        table.add_row(stage, f"{c['in']:,}", f"{c['rejected']:,}", f"{c['out']:,}")
    return table


@edge_app.command("export")
def export(
    folder: Annotated[Path, typer.Argument(help="a filtered dataset folder (kopa edge filter)")],
    slips: Annotated[float, typer.Option(min=0.0, max=1.0, help=(
        "share of SFT rows that first make their first keyed call without the key, get the gateway's error and "
        "then make it right; the slipped call is shown, not learnt"))] = 0.0,
) -> None:
    """The kept items as verl parquet and SFT JSONL, with the bundle their rollouts replay.

    Prompts and tool results are shaped by kopa.toml's ``[episode]`` (``max_description_chars``,
    ``max_tool_tokens``) as the bench shows them; export.json records the limits and the slips used."""
    from edge.dataset.export import bundle_for, export_sft, export_verl, replay_items
    from edge.dataset.items_io import read_items, write_json
    from mcp_gateway.catalog import load_catalog

    settings = KopaSettings()
    items = read_items(folder / "kept.jsonl")
    if not items:
        raise typer.BadParameter(f"{folder / 'kept.jsonl'} holds no item to export")
    catalog = load_catalog()
    bundle = bundle_for(items, settings.cassettes_dir, SYNTH_BUNDLE)
    gateway = _replay_gateway(settings, f"{bundle.name}@{bundle.version}")

    async def go():
        try:
            return await replay_items(items, gateway, limits=settings.episode, slips=slips)
        finally:
            await gateway.aclose()

    replays = asyncio.run(go())
    parquet = export_verl(items, folder / "train.parquet", replays=replays, catalog=catalog)
    sft = export_sft(items, folder / "sft.jsonl", replays=replays, catalog=catalog)
    write_json(folder / "export.json", {"items": len(items), "bundle": f"{bundle.name}@{bundle.version}",
                                        "verl": parquet.name, "sft": sft.name,
                                        "limits": settings.episode.model_dump(mode="json"), "slips": slips,
                                        "slipped": sum(r.slip is not None for r in replays.values())})
    _out().print(f"{len(items):,} items → {parquet} and {sft}; rollouts replay {bundle.name}@{bundle.version}")


@edge_app.command("stats")
def stats(
    folder: Annotated[Path, typer.Argument(help="dataset folder")],
    embeddings: Annotated[bool, typer.Option(help="Table 13's cosine figures with MiniLM")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Tables 10-12 of the kept items (or of all items before filtering), Table 13, and the filter funnel."""
    from bench.task import load_tasks
    from bench.taskset.build import DEFAULT_TASKS
    from edge.dataset.items_io import read_items, read_json
    from edge.dataset.stats import dataset_stats
    from edge.filter.contamination import ContaminationAudit, MiniLMEmbedder
    from mcp_gateway.catalog import load_catalog

    kept = folder / "kept.jsonl"
    items = read_items(kept if kept.exists() else folder / "items.jsonl")
    figures = dataset_stats(items)
    audit = ContaminationAudit(load_tasks(DEFAULT_TASKS), embedder=MiniLMEmbedder.load() if embeddings else None,
                               catalog=load_catalog(), held_out=_held_out(folder))
    report = audit.report(items)
    funnel: dict[str, Any] = read_json(folder / "funnel.json") if (folder / "funnel.json").exists() else {}
    if as_json:
        print(json.dumps({"items": len(items), "filtered": kept.exists(), "tables_10_12": figures.as_json(),
                          "table_13": report.as_json(), "funnel": funnel.get("counts")}, ensure_ascii=False,
                         indent=1))
        return
    console = _out()
    console.print(f"{len(items):,} items ({'kept by the filter' if kept.exists() else 'before filtering'})")
    for title, rows in (("Tables 10-12: ours beside the paper", figures.rows()),
                        ("Table 13: contamination against KOPA-Bench", report.rows())):
        table = Table("figure", "ours", "paper", title=title)
        for row in rows:
            table.add_row(*row)
        console.print(table)
    if funnel.get("counts"):
        console.print(_funnel_table(funnel["counts"]))
