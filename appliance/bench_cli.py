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
misses counted apart from model errors (``coverage.json`` in the run directory). The run directory defaults to
``<home>/runs/bench-<UTC stamp>``; give an existing one to resume an interrupted run. Each run is recorded in
the metadata DB (``KopaSettings.metadb_url``) when it starts and again when it stops, one row per directory.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from bench.agents.registry import AGENTS
from bench.options import BenchRunOptions

from .config import KopaSettings

bench_app = typer.Typer(help="KOPA-Bench: run agents on benchmark tasks and score them.", no_args_is_help=True)
console = Console()
err = Console(stderr=True, soft_wrap=True)

COVERAGE_FILE = "coverage.json"


def parse_seeds(text: str) -> list[int]:
    """'8' → eight seeds [0, …, 7] (the paper's n = 8, Appendix C); '0,3,5' → exactly those; a one-line error
    for anything else."""
    text = text.strip()
    if text.isdigit():
        count = int(text)
        if count < 1:
            raise ValueError(f"--seeds {text!r}: a single number is how many seeds to run (0 … N-1); give 1 or more, "
                             "or list seeds with commas, e.g. 0,1,2")
        return list(range(count))
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"--seeds {text!r}: give a count (8 → seeds 0-7) or comma-separated integers, "
                         "e.g. 0,1,2") from None
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds {text!r}: give at least one seed, none twice")
    return seeds


@bench_app.command("run")
def run(
    agent: Annotated[str, typer.Option(help="agent: " + " | ".join(f"{name} ({entry.kind})"
                                                                   for name, entry in AGENTS.items()))],
    tasks: Annotated[Path | None, typer.Option(help="task set (JSONL), all pinned to one cassette bundle "
                                                    "(default: the shipped KOPA-Bench set)")] = None,
    rollouts: Annotated[int, typer.Option(help="rollouts per task and seed (pass@k uses k = rollouts)")] = 4,
    seeds: Annotated[str, typer.Option(help="how many seeds (8 → 0-7), or a list: 0,3,5")] = "1",
    concurrency: Annotated[int, typer.Option(help="episodes run at once")] = 1,
    run_dir: Annotated[Path | None, typer.Option(help="where episodes.jsonl and run.json go "
                                                      "(default <home>/runs/bench-<UTC stamp>)")] = None,
    upstream: Annotated[str, typer.Option(help="replay (the tasks' bundle) | sandbox | live")] = "replay",
    resume: Annotated[bool, typer.Option("--resume/--no-resume", help="skip episodes already in the run dir")]
    = True,
    cassettes: Annotated[Path | None, typer.Option(help="cassettes folder holding the tasks' bundle (default: "
                                                        "<home>/cassettes if it has it, else the shipped cassettes/)")]
    = None,
    per_domain: Annotated[int | None, typer.Option(help="only the first N tasks of each domain (a quick run)",
                                                   min=1)] = None,
    max_turns: Annotated[int | None, typer.Option(help="assistant turns per episode for openai/local "
                                                       "(default 15, Appendix I)", min=1)] = None,
    base_url: Annotated[str | None, typer.Option(help="openai: the chat endpoint (…/v1; else [models.agent] "
                                                      "base_url, KOPA_MODELS__AGENT__BASE_URL); endpoint: its model "
                                                      "server (default: the local SmolLM2)")]
    = None,
    model: Annotated[str | None, typer.Option(help="the model name at --base-url (else [models.agent] model, "
                                                   "KOPA_MODELS__AGENT__MODEL)")] = None,
    mode: Annotated[str, typer.Option(help="replay (strict) | replay-or-record (with --upstream sandbox: the "
                                           "coverage pass, misses recorded into a new bundle version)")] = "replay",
    strict_catalog: Annotated[bool, typer.Option("--strict-catalog", help="refuse to start when the tasks' bundle "
                                                 "pins another tool catalog than this one (exit 2)")] = False,
) -> None:
    """Run every (task, seed, rollout) episode and print pass@1, pass@k and Action."""
    result = run_agent(BenchRunOptions(
        agent=agent, tasks=tasks, rollouts=rollouts, seeds=tuple(parse_seeds(seeds)), concurrency=concurrency,
        run_dir=run_dir, upstream=upstream, resume=resume, cassettes=cassettes, per_domain=per_domain,
        max_turns=max_turns, base_url=base_url, model=model, mode=mode, strict_catalog=strict_catalog))
    _print_summary(result)
    _print_coverage(result.out_dir)


def run_agent(options: BenchRunOptions):
    """One benchmark run as ``kopa bench run`` makes it (metadata DB rows, ``coverage.json``); its ``RunResult``.
    ``options.tasks`` defaults to the shipped KOPA-Bench set, ``options.run_dir`` to a new
    ``<home>/runs/bench-<stamp>``.

    Raises:
        ValueError: the task file is missing or does not load, the judge profile is incomplete, or the run fails
            to start (its bundle, the coverage pass's HEAD).
    """
    from bench.options import new_run_dir
    from bench.task import load_tasks
    from bench.taskset.build import DEFAULT_TASKS
    from mcp_gateway.catalog import load_catalog

    tasks = options.tasks or DEFAULT_TASKS
    if not tasks.is_file():
        raise ValueError(f"--tasks {tasks}: no such file")
    settings = KopaSettings()
    judge = _judge(settings)  # an incomplete judge profile stops the run before anything starts
    task_list = load_tasks(tasks, catalog=load_catalog())  # a golden value no call could match stops the run here
    if options.per_domain is not None:
        task_list = first_per_domain(task_list, options.per_domain)
    out_dir = options.run_dir or new_run_dir(settings.home_dir / "runs")
    started = False

    def record_start() -> None:  # run.json is written by now: the row can be made
        nonlocal started
        started = True
        _record(settings, out_dir)

    try:
        result = asyncio.run(_run(settings, options, task_list, tasks, out_dir=out_dir, on_start=record_start,
                                  judge=judge))
        run_coverage(out_dir)
        return result
    finally:
        if started:  # also after a failure or Ctrl-C: the row then shows the episodes written so far
            _record(settings, out_dir)


def first_per_domain(tasks: list, n: int) -> list:
    """The first ``n`` tasks of each domain, in file order."""
    seen: Counter[str] = Counter()
    kept = []
    for task in tasks:
        seen[task.domain] += 1
        if seen[task.domain] <= n:
            kept.append(task)
    return kept


def bundle_folder(settings: KopaSettings, bundle: str, cassettes: Path | None) -> Path:
    """Where the tasks' bundle is: ``cassettes`` when given, else the home's folder if it has the bundle's
    name, else the cassettes shipped with the appliance (the default task set's bundle)."""
    from bench.taskset.build import DEFAULT_CASSETTES

    if cassettes is not None:
        return cassettes
    name = bundle.partition("@")[0]
    if (settings.cassettes_dir / name).is_dir() or not (DEFAULT_CASSETTES / name).is_dir():
        return settings.cassettes_dir
    return DEFAULT_CASSETTES


async def _run(settings: KopaSettings, options: BenchRunOptions, tasks: list, tasks_file: Path, *, out_dir: Path,
               on_start: Callable[[], None], judge=None):
    from bench.agents import open_agent
    from bench.runner import REPLAY_STATS_FILE, open_bench_gateway, run_benchmark, run_bundle

    bundle = run_bundle(tasks)  # before any model server or gateway is started
    if options.mode == "replay-or-record":
        err.print(f"[yellow]coverage pass: replaying {bundle}, recording its misses from the sandbox[/yellow]")
    elif options.upstream != "replay":
        err.print(f"[yellow]running against the {options.upstream} upstream, not the recorded bundle {bundle}[/yellow]")
    async with AsyncExitStack() as stack:
        if AGENTS[options.agent].make is None:  # served here: the agent endpoint (appliance.serving)
            turns = {"limits": settings.episode} | ({} if options.max_turns is None else {"max_turns": options.max_turns})
            endpoint = {k: v for k, v in {"base_url": options.base_url, "model": options.model}.items()
                        if v is not None}
            agent = await stack.enter_async_context(_endpoint_agent(settings.models.agent, endpoint, turns))
        else:
            agent = await stack.enter_async_context(open_agent(options.agent, profile=settings.models.agent,
                                                               limits=settings.episode, **options.agent_overrides()))
        folder = bundle_folder(settings, bundle, options.cassettes)
        if options.mode == "replay-or-record":
            gateway = _coverage_gateway(settings, bundle, folder, out_dir / REPLAY_STATS_FILE)
            stack.push_async_callback(gateway.aclose)
            stack.callback(_commit_coverage, gateway, bundle, out_dir)  # runs first: commits before the close
        else:
            gateway = open_bench_gateway(
                bundle, upstream=options.upstream, home=settings.home_dir, cassettes=folder,
                seed=settings.sandbox.seed, world_version=settings.sandbox.world, scale=settings.sandbox.scale,
                key_file=settings.gateway.key_file, stats_file=out_dir / REPLAY_STATS_FILE,
                strict_catalog=options.strict_catalog)
            stack.push_async_callback(gateway.aclose)
        if gateway.catalog_notice:
            err.print(escape(("warning: " if gateway.catalog_diff else "notice: ") + gateway.catalog_notice))
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("{task.fields[passed]} passed"), TimeElapsedColumn(), console=err) as bar:
            job = bar.add_task(f"{options.agent} on {tasks_file.name}", total=None, passed=0)
            passed = 0

            def progress(done: int, total: int, outcome) -> None:
                nonlocal passed
                if outcome is None:  # the one call before the first episode
                    on_start()
                passed += bool(outcome is not None and outcome.passed)
                bar.update(job, completed=done, total=total, passed=passed)

            return await run_benchmark(tasks, agent, gateway, rollouts=options.rollouts, seeds=list(options.seeds),
                                       out_dir=out_dir, concurrency=options.concurrency, resume=options.resume,
                                       upstream=options.upstream, tasks_file=tasks_file, agent_name=options.agent,
                                       progress=progress, judge=judge, limits=settings.episode)


@asynccontextmanager
async def _endpoint_agent(profile, endpoint: dict, turns: dict) -> AsyncIterator:
    """The agent endpoint over ``--base-url`` (else the agent profile's endpoint, ``[models.agent]``, else the local
    SmolLM2, started here), as a benchmark agent."""
    from bench.agents import LocalModel, OpenAIAgentConfig

    from .serving.endpoint_agent import EndpointAgent

    async with AsyncExitStack() as stack:
        if "base_url" in endpoint or profile.configured:  # --base-url, else [models.agent]
            config = OpenAIAgentConfig.from_profile(profile, **endpoint, **turns)
        else:
            local = await stack.enter_async_context(LocalModel())
            config = local.agent_config(**turns)
        yield await stack.enter_async_context(EndpointAgent.serving(config))


def _coverage_gateway(settings: KopaSettings, bundle: str, folder: Path, stats_file: Path):
    """Bench profile, replay of the pinned ``bundle``, its misses recorded from the sandbox into ``bundle``'s name.

    Raises:
        ValueError: the name's HEAD is not the pinned version (the new version's parent would not be it).
    """
    from mcp_gateway.gateway import open_gateway
    from recorder import CassetteStore

    from .sandbox_service import in_process_sandbox

    name, _, version = bundle.partition("@")
    head = CassetteStore(folder).head(name)
    if version and head != version:
        raise ValueError(f"the coverage pass adds a version on top of the pinned {bundle}, but the HEAD of {name} in "
                         f"{folder} is {head}; record into a copy whose HEAD is {version}")
    return open_gateway(upstream="sandbox", sandbox=in_process_sandbox(settings), profile="bench",
                        mode="replay-or-record", bundle=bundle, home=settings.home_dir, cassettes=folder,
                        key_file=settings.gateway.key_file, stats_file=stats_file)


def _commit_coverage(gateway, bundle: str, out_dir: Path) -> None:
    """Commit what the coverage pass recorded (compressed, as shipped bundles are) and say where it went."""
    ref = gateway.commit(compress=True)
    note = {"pinned": bundle, "new_version": f"{ref.name}@{ref.version}" if ref else None}
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "coverage-commit.json").write_text(json.dumps(note, indent=1) + "\n", encoding="utf-8")
    if ref is None:
        err.print(f"coverage pass: no replay misses, {bundle} already covers this run")
    else:
        err.print(f"coverage pass: the misses were recorded into {ref.name}@{ref.version} (parent {bundle})")


def run_coverage(run_dir: Path) -> dict:
    """Replay misses apart from model errors, and the errors by kind, from a run's files (written to
    ``coverage.json``)."""
    from bench.report.errors import error_groups
    from bench.runner import REPLAY_STATS_FILE

    misses = episodes_missing = errors = episodes = passed = 0
    messages: list[dict[str, Any]] = []
    path = run_dir / "episodes.jsonl"
    for text in (path.read_text(encoding="utf-8").splitlines() if path.is_file() else []):
        if not text.strip():
            continue
        line = json.loads(text)
        episodes += 1
        missed = sum(1 for e in line.get("transcript", []) if e.get("by") == "agent"
                     and e.get("outcome") == "replay_miss")
        misses += missed
        episodes_missing += bool(missed)
        errors += bool(line.get("error"))
        messages.append(line)  # the record: its error_kind, not its message, says what went wrong
        passed += bool((line.get("scores") or {}).get("passed"))
    stats_path = run_dir / REPLAY_STATS_FILE
    stats = json.loads(stats_path.read_text(encoding="utf-8")) if stats_path.is_file() else {}
    coverage = {"episodes": episodes, "replay_misses": misses, "episodes_with_replay_miss": episodes_missing,
                "model_errors": errors, "recorded_misses": stats.get("recorded", 0),
                "distinct_missed_requests": len(stats.get("misses", {})), "passed": passed,
                "wrong_answers": episodes - passed - errors,
                "error_kinds": [{"kind": g.kind, "count": g.count, "example": g.example}
                                for g in error_groups(messages)]}
    (run_dir / COVERAGE_FILE).write_text(json.dumps(coverage, indent=1) + "\n", encoding="utf-8")
    return coverage


def _print_coverage(run_dir: Path) -> None:
    c = json.loads((run_dir / COVERAGE_FILE).read_text(encoding="utf-8"))
    console.print(f"replay misses: {c['replay_misses']} call(s) in {c['episodes_with_replay_miss']} episode(s), "
                  f"{c['recorded_misses']} recorded; model errors: {c['model_errors']} episode(s)")
    _print_error_kinds(c.get("error_kinds", []))


def _print_error_kinds(kinds: list[dict]) -> None:
    """One line per kind of episode error: count, kind and the first one's message."""
    for kind in kinds:
        console.print(f"  {kind['count']} × {escape(kind['kind'])}: e.g. {escape(kind['example'])}", soft_wrap=True)


def _judge(settings: KopaSettings):
    """The LLM judge RESPONSE falls back to: the judge profile (kopa.toml ``[models.judge]``,
    ``KOPA_MODELS__JUDGE__*``); None when it has no base URL (the deterministic checks only).

    Raises:
        ValueError: a base URL without a model (the message names the setting).
    """
    from bench.scoring.judge import judge_from_profile

    return judge_from_profile(settings.models.judge)


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
