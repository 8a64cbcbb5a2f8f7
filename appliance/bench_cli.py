"""`kopa bench`: run KOPA-Bench, report on runs, compare two, list them.

    kopa bench run --agent oracle|first-page|openai|local|endpoint --tasks FILE [--rollouts 4] [--seeds 0,1,2]
                   [--concurrency N] [--run-dir DIR] [--upstream replay|sandbox|live] [--no-resume]
                   [--base-url URL --model NAME]   (openai: the endpoint; endpoint: its model server)
                   [--mode replay-or-record]       (with --upstream sandbox: misses recorded into a new version)
    kopa bench report RUN_DIR [--out DIR]            report.md and report.html (inline SVG plots)
    kopa bench compare RUN_A RUN_B [--out FILE.md]   B against A: pass@1, pass@k, Action, flipped tasks
    kopa bench list [--limit 20]                     recent runs from the metadata DB

A run replays the cassette bundle its tasks are pinned to; ``--upstream sandbox|live`` runs against an
unrecorded upstream instead and says so in run.json. ``--mode replay-or-record --upstream sandbox`` is the
coverage pass: the pinned version is replayed, and the requests it lacks (a model taking another valid path)
go to the sandbox and are committed as a new bundle version whose parent is the pinned one. ``--agent endpoint``
plays each episode through the agent endpoint (``appliance.serving``: the server-side tool loop) over the
model server at ``--base-url``, or the local SmolLM2 started for the run. Every run ends with its replay
misses counted apart from model errors (``coverage.json`` in the run directory). The run itself is
``bench.run_flow.run_bench``, which the console's bench job calls too; the flags' defaults and checks are
``bench.options.BenchRunOptions``'s. The run directory defaults to
``<home>/runs/bench-<UTC stamp>``; give an existing one to resume an interrupted run. Each run is recorded in
the metadata DB (``KopaSettings.metadb_url``) when it starts and again when it stops, one row per directory.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from bench.agents.registry import AGENTS
from bench.options import BenchRunOptions, parse_seeds
from bench.run_flow import COVERAGE_FILE, bundle_folder, first_per_domain, run_coverage

from .config import KopaSettings

__all__ = ["COVERAGE_FILE", "bench_app", "bundle_folder", "first_per_domain", "parse_seeds", "run_agent",
           "run_coverage"]

bench_app = typer.Typer(help="KOPA-Bench: run agents on benchmark tasks and score them.", no_args_is_help=True)
console = Console()
err = Console(stderr=True, soft_wrap=True)

# The flags default to the options' defaults (``BenchRunOptions``, the one place of both defaults and checks).
_DEFAULT = BenchRunOptions


@bench_app.command("run")
def run(
    agent: Annotated[str, typer.Option(help="agent: " + " | ".join(f"{name} ({entry.kind})"
                                                                   for name, entry in AGENTS.items()))],
    tasks: Annotated[Path | None, typer.Option(help="task set (JSONL), all pinned to one cassette bundle "
                                                    "(default: the shipped KOPA-Bench set)")] = _DEFAULT.tasks,
    rollouts: Annotated[int, typer.Option(help="rollouts per task and seed (pass@k uses k = rollouts)")]
    = _DEFAULT.rollouts,
    seeds: Annotated[str | None, typer.Option(help="how many seeds (8 → 0-7), or a list: 0,3,5 (default: seed 0)",
                                              show_default=False)] = None,
    concurrency: Annotated[int, typer.Option(help="episodes run at once")] = _DEFAULT.concurrency,
    run_dir: Annotated[Path | None, typer.Option(help="where episodes.jsonl and run.json go "
                                                      "(default <home>/runs/bench-<UTC stamp>)")] = _DEFAULT.run_dir,
    upstream: Annotated[str, typer.Option(help="replay (the tasks' bundle) | sandbox | live")] = _DEFAULT.upstream,
    resume: Annotated[bool, typer.Option("--resume/--no-resume", help="skip episodes already in the run dir")]
    = _DEFAULT.resume,
    cassettes: Annotated[Path | None, typer.Option(help="cassettes folder holding the tasks' bundle (default: "
                                                        "<home>/cassettes if it has it, else the shipped cassettes/)")]
    = _DEFAULT.cassettes,
    per_domain: Annotated[int | None, typer.Option(help="only the first N tasks of each domain (a quick run)")]
    = _DEFAULT.per_domain,
    max_turns: Annotated[int | None, typer.Option(help="assistant turns per episode for openai/local/endpoint "
                                                       "(default 15, Appendix I)")] = _DEFAULT.max_turns,
    base_url: Annotated[str | None, typer.Option(help="openai: the chat endpoint (…/v1; else [models.agent] "
                                                      "base_url, KOPA_MODELS__AGENT__BASE_URL); endpoint: its model "
                                                      "server (default: the local SmolLM2)")]
    = _DEFAULT.base_url,
    model: Annotated[str | None, typer.Option(help="the model name at --base-url (else [models.agent] model, "
                                                   "KOPA_MODELS__AGENT__MODEL)")] = _DEFAULT.model,
    mode: Annotated[str, typer.Option(help="replay (strict) | replay-or-record (with --upstream sandbox: the "
                                           "coverage pass, misses recorded into a new bundle version)")]
    = _DEFAULT.mode,
    strict_catalog: Annotated[bool, typer.Option("--strict-catalog", help="refuse to start when the tasks' bundle "
                                                 "pins another tool catalog than this one (exit 2)")]
    = _DEFAULT.strict_catalog,
) -> None:
    """Run every (task, seed, rollout) episode and print pass@1, pass@k and Action."""
    result = run_agent(BenchRunOptions(
        agent=agent, tasks=tasks, rollouts=rollouts, seeds=_DEFAULT.seeds if seeds is None else parse_seeds(seeds),
        concurrency=concurrency, run_dir=run_dir, upstream=upstream, resume=resume, cassettes=cassettes,
        per_domain=per_domain, max_turns=max_turns, base_url=base_url, model=model, mode=mode,
        strict_catalog=strict_catalog))
    _print_summary(result)
    _print_coverage(result.out_dir)


def run_agent(options: BenchRunOptions, *, shown: set[str] | None = None):
    """One benchmark run as ``kopa bench run`` makes it (``bench.run_flow.run_bench``, as the console's bench job
    does, with a progress bar on stderr and the metadata DB rows); its ``RunResult``. ``options.tasks`` defaults
    to the shipped KOPA-Bench set, ``options.run_dir`` to a new ``<home>/runs/bench-<stamp>``. ``shown``: notices
    already printed by earlier runs of one command (each run's gateway says the same about the same bundle), not
    printed again; the ones this run prints are added.

    Raises:
        ValueError: the task file is missing or does not load, the judge profile is incomplete, or the run fails
            to start (its bundle, the coverage pass's HEAD).
    """
    from bench.run_flow import run_bench
    from bench.taskset.build import DEFAULT_TASKS

    settings = KopaSettings()

    def notice(text: str, warning: bool) -> None:
        if shown is not None:
            if text in shown:
                return
            shown.add(text)
        err.print(f"[yellow]{escape(text)}[/yellow]" if warning else escape(text))

    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[passed]} passed"), TimeElapsedColumn(), console=err) as bar:
        job = bar.add_task(f"{options.agent} on {(options.tasks or DEFAULT_TASKS).name}", total=None, passed=0,
                           visible=False)
        passed = 0

        def progress(done: int, total: int, outcome) -> None:
            nonlocal passed
            passed += bool(outcome is not None and outcome.passed)
            bar.update(job, completed=done, total=total, passed=passed, visible=True)

        return run_bench(options, settings, record=lambda run_dir: _record(settings, run_dir), notice=notice,
                         progress=progress)


def _print_coverage(run_dir: Path) -> None:
    c = json.loads((run_dir / COVERAGE_FILE).read_text(encoding="utf-8"))
    console.print(f"replay misses: {c['replay_misses']} call(s) in {c['episodes_with_replay_miss']} episode(s), "
                  f"{c['recorded_misses']} recorded; model errors: {c['model_errors']} episode(s)")
    _print_error_kinds(c.get("error_kinds", []))


def _print_error_kinds(kinds: list[dict]) -> None:
    """One line per kind of episode error: count, kind and the first one's message."""
    for kind in kinds:
        console.print(f"  {kind['count']} × {escape(kind['kind'])}: e.g. {escape(kind['example'])}", soft_wrap=True)


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
    coverage = result.out_dir / COVERAGE_FILE
    if coverage.is_file():  # run_agent writes it; it counts every episode of the directory, resumed ones too
        c = json.loads(coverage.read_text(encoding="utf-8"))
        if "passed" in c:
            console.print(f"{c['episodes']} episode(s): {c['passed']} passed, {c['wrong_answers']} wrong or no "
                          f"answer, {c['model_errors']} model error(s)"
                          + (" — " + ", ".join(f"{k['kind']} {k['count']}" for k in c["error_kinds"])
                             if c["error_kinds"] else ""))


def _record(settings: KopaSettings, run_dir: Path) -> None:
    """Record the run directory in the metadata DB; a DB that cannot be written costs a warning, not the run."""
    from sqlalchemy.exc import SQLAlchemyError

    from .bench_records import record_bench_run
    from .metadb import open_metadb

    try:
        engine = open_metadb(settings.metadb_url)
        try:
            record_bench_run(engine, run_dir)
        finally:
            engine.dispose()
    except (SQLAlchemyError, OSError, ValueError) as exc:
        err.print(f"[yellow]warning:[/yellow] the run was not recorded in the metadata DB "
                  f"({escape(settings.metadb_url)}): {escape(str(exc))}")


@contextmanager
def _one_line_errors() -> Iterator[None]:
    """A bad input ends the command with one line on stderr and exit code 2 (as ``kopa``'s main does)."""
    try:
        yield
    except (ValueError, OSError) as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from None


@bench_app.command("report")
def report(
    run_dir: Annotated[Path, typer.Argument(help="a `kopa bench run` directory (run.json, episodes.jsonl)")],
    out: Annotated[Path | None, typer.Option(help="where report.md and report.html go (default RUN_DIR)")] = None,
) -> None:
    """Write report.md and a self-contained report.html (plots inline) for a run directory."""
    from bench.report import load_run, write_report

    with _one_line_errors():
        run_report = load_run(run_dir)
        md_path, html_path = write_report(run_report, out or run_dir)
    if not run_report.complete:
        err.print(f"[yellow]warning:[/yellow] {escape(str(run_dir))}: the run is {run_report.status}; "
                  "the report says so")
    print(f"wrote {md_path}")
    print(f"wrote {html_path}")


@bench_app.command("compare")
def compare(
    run_a: Annotated[Path, typer.Argument(help="run directory A (the baseline)")],
    run_b: Annotated[Path, typer.Argument(help="run directory B (deltas are B − A)")],
    out: Annotated[Path | None, typer.Option(help="also write the comparison to this Markdown file")] = None,
) -> None:
    """Print run B against run A: overall and per-domain pass@1, pass@k and Action, and the tasks that flipped."""
    from bench.report import compare_runs, comparison_markdown, load_run

    with _one_line_errors():
        comparison = compare_runs(load_run(run_a), load_run(run_b))
        text = comparison_markdown(comparison)
        if out is not None:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8")
    for warning in comparison.warnings:
        err.print(f"[yellow]warning:[/yellow] {escape(warning)}")
    print(text, end="")
    if out is not None:
        print(f"wrote {out}")


@bench_app.command("list")
def list_runs(
    limit: Annotated[int, typer.Option(help="how many runs, most recent first", min=1)] = 20,
) -> None:
    """List recent benchmark runs recorded in the metadata DB."""
    from .bench_records import recent_bench_runs
    from .metadb import open_metadb

    settings = KopaSettings()
    with _one_line_errors():
        engine = open_metadb(settings.metadb_url)
        try:
            runs = recent_bench_runs(engine, limit)
        finally:
            engine.dispose()
    if not runs:
        print(f"no benchmark runs recorded in {settings.metadb_url}")
        return
    headers = ("id", "started", "agent", "bundle", "upstream", "seeds × rollouts", "tasks", "episodes", "pass@1",
               "pass@k", "Action", "95% CI", "run dir")
    # On a narrow terminal (80 columns over SSH) thirteen columns would each be cut to a few letters:
    # show the ones an operator compares runs by, folded rather than cut.
    out = Console()  # sized now, from the terminal (or COLUMNS) this command runs in
    shown = headers if out.width >= 140 else ("id", "agent", "episodes", "pass@1", "pass@k", "Action", "run dir")
    table = Table(*shown, title=escape(f"benchmark runs ({settings.metadb_url})"))
    for column in table.columns:
        column.overflow = "fold"
        column.min_width = {"agent": 10, "episodes": 8}.get(str(column.header), column.min_width)

    def pct(value: float | None) -> str:
        return "–" if value is None else f"{100 * value:.1f}"

    for row in runs:
        episodes = f"{row.n_episodes}/{row.episodes_total}" + ("" if row.complete else " (incomplete)")
        cells = [str(row.id), row.started_at.strftime("%Y-%m-%d %H:%M") if row.started_at else "–", row.agent,
                 row.bundle, row.upstream, f"[{row.seeds}] × {row.rollouts}", str(row.n_tasks), episodes,
                 pct(row.pass_at_1), f"{pct(row.pass_at_k)} (k={row.k})" if row.k else "–", pct(row.action),
                 f"[{pct(row.ci_low)}, {pct(row.ci_high)}]" if row.ci_low is not None else "–", row.run_dir]
        by_header = dict(zip(headers, cells, strict=True))
        table.add_row(*(escape(by_header[h]) for h in shown))
    out.print(table)
