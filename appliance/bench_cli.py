"""`kopa bench`: run KOPA-Bench.

    kopa bench run --agent oracle|first-page|openai|local --tasks FILE [--rollouts 4] [--seeds 0,1,2]
                   [--concurrency N] [--run-dir DIR] [--upstream replay|sandbox|live] [--no-resume]

A run replays the cassette bundle its tasks are pinned to; ``--upstream sandbox|live`` runs against an
unrecorded upstream instead and says so in run.json. The run directory defaults to
``<home>/runs/bench-<UTC stamp>``; give an existing one to resume an interrupted run.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .config import KopaSettings

bench_app = typer.Typer(help="KOPA-Bench: run agents on benchmark tasks and score them.", no_args_is_help=True)
console = Console()
err = Console(stderr=True, soft_wrap=True)

AGENT_NAMES = ("oracle", "first-page", "openai", "local")


def parse_seeds(text: str) -> list[int]:
    """'0,1,2' → [0, 1, 2]; a one-line error for anything else."""
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"--seeds {text!r}: give comma-separated integers, e.g. 0,1,2") from None
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds {text!r}: give at least one seed, none twice")
    return seeds


@bench_app.command("run")
def run(
    agent: Annotated[str, typer.Option(help=f"agent: {' | '.join(AGENT_NAMES)}")],
    tasks: Annotated[Path, typer.Option(help="task set (JSONL), all pinned to one cassette bundle")],
    rollouts: Annotated[int, typer.Option(help="rollouts per task and seed (pass@k uses k = rollouts)")] = 4,
    seeds: Annotated[str, typer.Option(help="comma-separated seeds, e.g. 0,1,2")] = "0",
    concurrency: Annotated[int, typer.Option(help="episodes run at once")] = 1,
    run_dir: Annotated[Path | None, typer.Option(help="where episodes.jsonl and run.json go "
                                                      "(default <home>/runs/bench-<UTC stamp>)")] = None,
    upstream: Annotated[str, typer.Option(help="replay (the tasks' bundle) | sandbox | live")] = "replay",
    resume: Annotated[bool, typer.Option("--resume/--no-resume", help="skip episodes already in the run dir")]
    = True,
) -> None:
    """Run every (task, seed, rollout) episode and print pass@1, pass@k and Action."""
    from bench.runner import UPSTREAMS
    from bench.task import load_tasks

    if agent not in AGENT_NAMES:
        raise ValueError(f"--agent {agent!r}: choose one of {', '.join(AGENT_NAMES)}")
    if upstream not in UPSTREAMS:
        raise ValueError(f"--upstream {upstream!r}: choose one of {', '.join(UPSTREAMS)}")
    if rollouts < 1:
        raise ValueError(f"--rollouts {rollouts}: give at least 1")
    if concurrency < 1:
        raise ValueError(f"--concurrency {concurrency}: give at least 1")
    seed_list = parse_seeds(seeds)
    if not tasks.is_file():
        raise ValueError(f"--tasks {tasks}: no such file")
    settings = KopaSettings()
    task_list = load_tasks(tasks)
    out_dir = run_dir or settings.home_dir / "runs" / f"bench-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"
    result = asyncio.run(_run(settings, agent, task_list, tasks, rollouts=rollouts, seeds=seed_list,
                              concurrency=concurrency, out_dir=out_dir, upstream=upstream, resume=resume))
    _print_summary(result)


async def _run(settings: KopaSettings, agent_name: str, tasks: list, tasks_file: Path, *, rollouts: int,
               seeds: list[int], concurrency: int, out_dir: Path, upstream: str, resume: bool):
    from bench.agents import LocalAgent, make_agent
    from bench.runner import REPLAY_STATS_FILE, open_bench_gateway, run_benchmark, run_bundle

    bundle = run_bundle(tasks)  # before any model server or gateway is started
    if upstream != "replay":
        err.print(f"[yellow]running against the {upstream} upstream, not the recorded bundle {bundle}[/yellow]")
    async with AsyncExitStack() as stack:
        agent = (await stack.enter_async_context(LocalAgent()) if agent_name == "local" else make_agent(agent_name))
        gateway = open_bench_gateway(
            bundle, upstream=upstream, home=settings.home_dir, cassettes=settings.cassettes_dir,
            seed=settings.sandbox.seed, world_version=settings.sandbox.world, scale=settings.sandbox.scale,
            key_file=settings.gateway.key_file, stats_file=out_dir / REPLAY_STATS_FILE)
        stack.push_async_callback(gateway.aclose)
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("{task.fields[passed]} passed"), TimeElapsedColumn(), console=err) as bar:
            job = bar.add_task(f"{agent_name} on {tasks_file.name}", total=None, passed=0)
            passed = 0

            def progress(done: int, total: int, outcome) -> None:
                nonlocal passed
                passed += bool(outcome is not None and outcome.passed)
                bar.update(job, completed=done, total=total, passed=passed)

            return await run_benchmark(tasks, agent, gateway, rollouts=rollouts, seeds=seeds, out_dir=out_dir,
                                       concurrency=concurrency, resume=resume, upstream=upstream,
                                       tasks_file=tasks_file, agent_name=agent_name, progress=progress,
                                       judge=_judge())


def _judge():
    """The LLM judge RESPONSE falls back to, when KOPA_JUDGE_ENABLED is set (off by default)."""
    from bench.scoring.judge import JudgeConfig, LLMJudge

    config = JudgeConfig.from_env()
    return LLMJudge(config) if config.enabled else None


def _print_summary(result) -> None:
    summary, config = result.summary, result.config
    ks = sorted(summary.pass_at)
    table = Table("domain", "tasks", *(f"pass@{k}" for k in ks), "Action",
                  title=f"{config.agent} · {config.bundle} · {config.upstream} · seeds {list(config.seeds)} · "
                        f"{config.rollouts} rollout(s)")

    def pct(value: float | None) -> str:
        return "–" if value is None else f"{100 * value:.1f}"

    for domain, row in summary.by_domain.items():
        table.add_row(domain, str(row.n_tasks), *(pct(row.pass_at[k]) for k in ks), pct(row.action))
    table.add_row("[bold]all[/bold]", str(summary.n_tasks), *(pct(summary.pass_at[k]) for k in ks),
                  pct(summary.action))
    console.print(table)
    if summary.seed_ci is not None:
        ci = summary.seed_ci
        console.print(f"pass@1 over {ci.n} seeds: {pct(ci.mean)} ± {pct(ci.half_width)} "
                      f"({ci.confidence:.0%} CI)")
    console.print(f"{result.ran} episode(s) run, {result.skipped} resumed; "
                  f"{len(result.errors)} ended with an error → {result.out_dir}")
