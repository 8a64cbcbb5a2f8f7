"""One benchmark run, the same for every way a run starts (``kopa bench run``, ``kopa bench demo``, the console's
bench job): options → agent from the registry → gateway → episodes → coverage.

    from bench.run_flow import run_bench
    result = run_bench(BenchRunOptions(agent="oracle", tasks=tasks_file, rollouts=1), settings,
                       record=lambda run_dir: ..., notice=lambda text, warning: ..., progress=...)
    result.out_dir / COVERAGE_FILE                     # every run ends with its coverage.json

The run replays the cassette bundle its tasks are pinned to, or (asked for) runs against the sandbox or live
upstream, or is the coverage pass (``mode="replay-or-record"`` with the sandbox: the pinned version replayed, its
misses recorded from the sandbox into a new version whose parent it is, ``coverage-commit.json`` saying where).
The agent comes from the registry (``bench.agents.open_agent``), every one of them the same way, model servers
included. When the episodes are done, ``run_coverage`` counts the replay misses apart from model errors
(``coverage.json``). What differs between the callers goes in as callbacks: ``record`` (the metadata DB row, made
when ``run.json`` is written and again when the run stops, also after a failure or a cancel), ``notice`` (the
run's warnings and notes) and ``progress`` (a bar, or a console job that cancels by raising from it).

``settings`` is the appliance's ``KopaSettings``, read through ``RunSettings`` (bench does not import the
appliance).
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .options import BenchRunOptions, new_run_dir

if TYPE_CHECKING:
    from mcp_gateway.catalog import Catalog
    from mcp_gateway.gateway import Gateway

    from .episode import EpisodeOutcome
    from .limits import EpisodeLimits
    from .runner import RunResult
    from .task import Task

__all__ = ["COVERAGE_COMMIT_FILE", "COVERAGE_FILE", "Notice", "Progress", "RunSettings", "bundle_folder",
           "first_per_domain", "run_bench", "run_coverage", "with_run_dir"]

COVERAGE_FILE = "coverage.json"
COVERAGE_COMMIT_FILE = "coverage-commit.json"

Notice = Callable[[str, bool], None]
"""``notice(text, warning)``: a line about the run (its upstream, the coverage pass, the tool catalog)."""
Progress = Callable[[int, int, "EpisodeOutcome | None"], None]
"""``progress(done, total, outcome)``: once with no outcome when the episodes start, then after each one; an
exception raised here (a cancel) stops the run, its episodes so far kept."""


class RunSettings(Protocol):
    """What a run reads of the appliance's settings (``appliance.config.KopaSettings`` is one)."""

    @property
    def home_dir(self) -> Path: ...

    @property
    def cassettes_dir(self) -> Path: ...

    models: Any  # .agent: the agent's endpoint profile, .judge: RESPONSE's LLM judge
    episode: EpisodeLimits
    sandbox: Any  # .seed, .world, .scale: the world of the sandbox upstream and of the coverage pass
    gateway: Any  # .key_file: the live platform keys


def with_run_dir(options: BenchRunOptions, settings: RunSettings) -> BenchRunOptions:
    """``options`` with their run directory: the one given, else a new ``<home>/runs/bench-<UTC stamp>`` made now
    (``bench.options.new_run_dir``)."""
    if options.run_dir is not None:
        return options
    return replace(options, run_dir=new_run_dir(settings.home_dir / "runs"))


def run_bench(options: BenchRunOptions, settings: RunSettings, *, catalog: Catalog | None = None,
              record: Callable[[Path], None] | None = None, notice: Notice | None = None,
              progress: Progress | None = None) -> RunResult:
    """Run every (task, seed, rollout) episode of ``options`` (blocking: its own event loop), then write the run's
    ``coverage.json``; the run's ``RunResult``. ``options.tasks`` defaults to the shipped KOPA-Bench set,
    ``options.run_dir`` to a new ``<home>/runs/bench-<stamp>`` (made after the tasks load).

    Args:
        catalog: the tool catalog the tasks are checked against (default: the running one, ``load_catalog()``).
        record: called with the run directory once ``run.json`` is written and again when the run stops (also
            after a failure or a cancel, so that a row shows the episodes so far).

    Raises:
        ValueError: the task file is missing or does not load, the judge profile is incomplete, or the run fails
            to start (its bundle, the coverage pass's HEAD, a tool catalog refused by ``strict_catalog``).
        Whatever ``progress`` raises (a cancel); episodes already written stay written.
    """
    from mcp_gateway.catalog import load_catalog

    from .scoring.judge import judge_from_profile
    from .task import load_tasks
    from .taskset.build import DEFAULT_TASKS

    tasks_file = options.tasks or DEFAULT_TASKS
    if not tasks_file.is_file():
        raise ValueError(f"--tasks {tasks_file}: no such file")
    judge = judge_from_profile(settings.models.judge)  # an incomplete judge profile stops the run before it starts
    tasks = load_tasks(tasks_file, catalog=catalog if catalog is not None else load_catalog())  # a golden value
    if options.per_domain is not None:                                        # no call could match stops it here
        tasks = first_per_domain(tasks, options.per_domain)
    options = with_run_dir(options, settings)
    out_dir = options.run_dir
    assert out_dir is not None
    started = False

    def on_progress(done: int, total: int, outcome: EpisodeOutcome | None) -> None:
        nonlocal started
        if outcome is None and not started:  # run.json is written by now: the row can be made
            started = True
            if record is not None:
                record(out_dir)
        if progress is not None:
            progress(done, total, outcome)

    try:
        result = asyncio.run(_run(options, settings, tasks, tasks_file, out_dir=out_dir, judge=judge,
                                  notice=notice or _quiet, progress=on_progress))
        run_coverage(out_dir)
        return result
    finally:
        if started and record is not None:  # also after a failure or a cancel: the episodes written so far
            record(out_dir)


def _quiet(text: str, warning: bool) -> None:
    pass


async def _run(options: BenchRunOptions, settings: RunSettings, tasks: list[Task], tasks_file: Path, *,
               out_dir: Path, judge: Any, notice: Notice, progress: Progress) -> RunResult:
    from .agents import open_agent
    from .runner import REPLAY_STATS_FILE, open_bench_gateway, run_benchmark, run_bundle

    bundle = run_bundle(tasks)  # before any model server or gateway is started
    if options.mode == "replay-or-record":
        notice(f"coverage pass: replaying {bundle}, recording its misses from the sandbox", True)
    elif options.upstream != "replay":
        notice(f"running against the {options.upstream} upstream, not the recorded bundle {bundle}", True)
    async with AsyncExitStack() as stack:
        agent = await stack.enter_async_context(open_agent(options.agent, profile=settings.models.agent,
                                                           limits=settings.episode, **options.agent_overrides()))
        folder = bundle_folder(settings, bundle, options.cassettes)
        gateway: Gateway
        if options.mode == "replay-or-record":
            gateway = _coverage_gateway(settings, bundle, folder, out_dir / REPLAY_STATS_FILE,
                                        strict_catalog=options.strict_catalog)
            stack.push_async_callback(gateway.aclose)
            stack.callback(_commit_coverage, gateway, bundle, out_dir, notice)  # runs first: commits before the close
        else:
            gateway = open_bench_gateway(
                bundle, upstream=options.upstream, home=settings.home_dir, cassettes=folder,
                seed=settings.sandbox.seed, world_version=settings.sandbox.world, scale=settings.sandbox.scale,
                key_file=settings.gateway.key_file, stats_file=out_dir / REPLAY_STATS_FILE,
                strict_catalog=options.strict_catalog)
            stack.push_async_callback(gateway.aclose)
        if gateway.catalog_notice:
            notice(("warning: " if gateway.catalog_diff else "notice: ") + gateway.catalog_notice, False)
        return await run_benchmark(tasks, agent, gateway, rollouts=options.rollouts, seeds=list(options.seeds),
                                   out_dir=out_dir, concurrency=options.concurrency, resume=options.resume,
                                   upstream=options.upstream, tasks_file=tasks_file, agent_name=options.agent,
                                   progress=progress, judge=judge, limits=settings.episode)


def first_per_domain(tasks: Sequence[Task], n: int) -> list[Task]:
    """The first ``n`` tasks of each domain, in file order."""
    seen: Counter[str] = Counter()
    kept = []
    for task in tasks:
        seen[task.domain] += 1
        if seen[task.domain] <= n:
            kept.append(task)
    return kept


def bundle_folder(settings: RunSettings, bundle: str, cassettes: Path | None) -> Path:
    """Where the tasks' bundle is: ``cassettes`` when given, else the home's folder if it has the bundle's
    name, else the cassettes shipped with the appliance (the default task set's bundle)."""
    from .taskset.build import DEFAULT_CASSETTES

    if cassettes is not None:
        return cassettes
    name = bundle.partition("@")[0]
    if (settings.cassettes_dir / name).is_dir() or not (DEFAULT_CASSETTES / name).is_dir():
        return settings.cassettes_dir
    return DEFAULT_CASSETTES


def _coverage_gateway(settings: RunSettings, bundle: str, folder: Path, stats_file: Path, *,
                      strict_catalog: bool = False) -> Gateway:
    """Bench profile, replay of the pinned ``bundle``, its misses recorded from the sandbox into ``bundle``'s name.

    Raises:
        ValueError: the name's HEAD is not the pinned version (the new version's parent would not be it).
    """
    from mcp_gateway.gateway import open_gateway
    from recorder import CassetteStore
    from sandbox import InProcessSandbox

    name, _, version = bundle.partition("@")
    head = CassetteStore(folder).head(name)
    if version and head != version:
        raise ValueError(f"the coverage pass adds a version on top of the pinned {bundle}, but the HEAD of {name} in "
                         f"{folder} is {head}; record into a copy whose HEAD is {version}")
    sandbox = InProcessSandbox(settings.home_dir, seed=settings.sandbox.seed, version=settings.sandbox.world,
                               scale=settings.sandbox.scale)
    return open_gateway(upstream="sandbox", sandbox=sandbox, profile="bench", mode="replay-or-record", bundle=bundle,
                        home=settings.home_dir, cassettes=folder, key_file=settings.gateway.key_file,
                        stats_file=stats_file, strict_catalog=strict_catalog)


def _commit_coverage(gateway: Gateway, bundle: str, out_dir: Path, notice: Notice) -> None:
    """Commit what the coverage pass recorded (compressed, as shipped bundles are) and say where it went."""
    ref = gateway.commit(compress=True)
    note = {"pinned": bundle, "new_version": f"{ref.name}@{ref.version}" if ref else None}
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / COVERAGE_COMMIT_FILE).write_text(json.dumps(note, indent=1) + "\n", encoding="utf-8")
    if ref is None:
        notice(f"coverage pass: no replay misses, {bundle} already covers this run", False)
    else:
        notice(f"coverage pass: the misses were recorded into {ref.name}@{ref.version} (parent {bundle})", False)


def run_coverage(run_dir: Path) -> dict[str, Any]:
    """Replay misses apart from model errors, and the errors by kind, from a run's files (written to
    ``coverage.json``)."""
    from .report.errors import error_groups
    from .runner import REPLAY_STATS_FILE

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
