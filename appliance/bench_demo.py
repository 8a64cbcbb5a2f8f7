"""`kopa bench demo`: the benchmark on the embedded defaults — no network, no GPU, no keys.

    kopa bench demo [--out DIR] [--rollouts 4] [--local-per-domain 1] [--local-max-turns 4] [--no-local]

Runs the shipped KOPA-Bench task set by replaying the cassette bundle it is pinned to (recorded from the
sandbox world by ``kopa bench build-tasks``): the oracle and the first-page baseline on every task, and the
local model (SmolLM2-135M under llama.cpp, started and stopped here) on the first task of each domain,
since a 135M model on two CPU cores takes one to two minutes an episode (six episodes of four turns:
about 7.5 minutes on a quiet machine, ``benchmarks/local_model_speed.py``).
Each run gets ``report.md`` and a self-contained ``report.html``; first-page is compared against the
oracle; a table sums them up, with each agent's episodes that ended with an error (endpoint timeout, turn
limit, …) counted by kind apart from its wrong answers, and one example message per kind below it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .bench_cli import bench_app, run_agent
from .config import KopaSettings

console = Console()


@bench_app.command("demo")
def demo(
    out: Annotated[Path | None, typer.Option(help="folder for the three runs (default <home>/runs/demo-<stamp>)")]
    = None,
    rollouts: Annotated[int, typer.Option(help="rollouts per task for oracle and first-page", min=1)] = 4,
    local_per_domain: Annotated[int, typer.Option(help="tasks per domain for the local model", min=1)] = 1,
    local_max_turns: Annotated[int, typer.Option(help="assistant turns per local-model episode", min=1)] = 4,
    local: Annotated[bool, typer.Option("--local/--no-local", help="also run the local model")] = True,
) -> None:
    """Oracle, first-page and the local model on the shipped task set, replayed; HTML reports and a comparison."""
    from bench.options import BenchRunOptions, new_unique_dir, stamped_name
    from bench.report import compare_runs, comparison_markdown, load_run, run_error_groups, write_report
    from bench.taskset.build import DEFAULT_TASKS

    out_dir = out or new_unique_dir(KopaSettings().home_dir / "runs", stamped_name("demo"))
    plan = [BenchRunOptions(agent=agent, tasks=DEFAULT_TASKS, rollouts=rollouts, run_dir=out_dir / agent)
            for agent in ("oracle", "first-page")]
    if local:
        plan.append(BenchRunOptions(agent="local", tasks=DEFAULT_TASKS, rollouts=1, per_domain=local_per_domain,
                                    max_turns=local_max_turns, run_dir=out_dir / "local"))
    rows = []
    shown: set[str] = set()  # the three runs replay one bundle: what its gateway says is said once
    for options in plan:
        result = run_agent(options, shown=shown)
        _, html = write_report(load_run(result.out_dir), result.out_dir)
        rows.append((options.agent, result, html))
    comparison = compare_runs(load_run(out_dir / "oracle"), load_run(out_dir / "first-page"))
    (out_dir / "compare-oracle-first-page.md").write_text(comparison_markdown(comparison), encoding="utf-8")

    table = Table("agent", "tasks", "episodes", "pass@1", "pass@k", "Action", "model errors", "report",
                  title=f"KOPA-Bench on {DEFAULT_TASKS.name}, replaying {rows[0][1].config.bundle}")
    notes = []
    for agent, result, html in rows:
        s = result.summary
        k = max(s.pass_at)
        groups = run_error_groups(result.out_dir)
        table.add_row(agent, str(s.n_tasks), str(s.n_episodes), f"{100 * s.pass_at[1]:.1f}",
                      f"{100 * s.pass_at[k]:.1f} (k={k})", "–" if s.action is None else f"{100 * s.action:.1f}",
                      escape(", ".join(f"{g.count} {g.kind}" for g in groups) or "0"), str(html))
        notes += [f"{agent}: {g.count} × {escape(g.kind)}, e.g. {escape(g.example)}" for g in groups]
    console.print(table)
    for note in notes:  # a model that could not answer is not a wrong answer: say why
        console.print(note, soft_wrap=True)
    console.print(f"first-page against the oracle: {out_dir / 'compare-oracle-first-page.md'}")
