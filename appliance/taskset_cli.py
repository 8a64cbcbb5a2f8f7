"""`kopa bench build-tasks | stats | audit`: write, describe and check the KOPA-Bench task set.

    kopa bench build-tasks [--out bench/tasks/kopa-bench.jsonl] [--cassettes cassettes] [--bundle kopa-default]
    kopa bench stats TASKS      # Table 6 beside the paper's figures
    kopa bench audit TASKS      # catalog, reward basis, leakage, near-duplicates; exit 1 on errors
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from .bench_cli import bench_app
from .config import KopaSettings

console = Console()


@bench_app.command("build-tasks")
def build_tasks(
    out: Annotated[Path | None, typer.Option(help="task file to write (default: the shipped "
                                                  "bench/tasks/kopa-bench.jsonl)")] = None,
    cassettes: Annotated[Path | None, typer.Option(help="cassettes folder the bundle is recorded into "
                                                        "(default: the shipped cassettes/)")] = None,
    bundle: Annotated[str, typer.Option(help="bundle name; a new version is recorded")] = "kopa-default",
) -> None:
    """Run every task template against the sandbox world, record the bundle and write the pinned task file."""
    from bench.taskset.build import DEFAULT_CASSETTES, DEFAULT_TASKS, build_task_set

    settings = KopaSettings()
    out = out or DEFAULT_TASKS
    tasks = asyncio.run(build_task_set(out=out, cassettes=cassettes or DEFAULT_CASSETTES, bundle=bundle,
                                       home=settings.home_dir, scale=settings.sandbox.scale))
    console.print(f"{len(tasks)} tasks → {out}, pinned to {tasks[0].bundle}")


@bench_app.command("stats")
def stats(tasks: Annotated[Path, typer.Argument(help="task file (JSONL or JSON list)")]) -> None:
    """Per-domain steps, tool calls, headroom, available tools and parallel %, beside the paper's Table 6."""
    from bench.task import load_tasks
    from bench.taskset.stats import format_table, task_set_stats

    typer.echo(format_table(task_set_stats(load_tasks(_existing(tasks)))))


@bench_app.command("audit")
def audit(tasks: Annotated[Path, typer.Argument(help="task file (JSONL or JSON list)")]) -> None:
    """Check every task against the tool catalog, for leakage and near-duplicates; print the statistics."""
    from bench.task import load_tasks
    from bench.taskset.audit import audit_tasks
    from bench.taskset.stats import format_table, task_set_stats
    from mcp_gateway.catalog import load_catalog

    task_list = load_tasks(_existing(tasks))
    findings = audit_tasks(task_list, load_catalog())
    for finding in findings:
        console.print(str(finding), style="red" if finding.severity == "error" else "yellow", highlight=False)
    typer.echo(format_table(task_set_stats(task_list)))
    errors = sum(f.severity == "error" for f in findings)
    console.print(f"{len(task_list)} tasks: {errors} error(s), {len(findings) - errors} warning(s)")
    if errors:
        raise typer.Exit(1)


def _existing(path: Path) -> Path:
    if not path.is_file():
        raise ValueError(f"{path}: no such task file")
    return path
