"""A benchmark run: every (task, seed, rollout) episode of a task set, written as it finishes, then summarised.

    from bench.runner import open_bench_gateway, run_benchmark, run_bundle
    bundle = run_bundle(tasks)                        # the one cassette bundle every task is pinned to
    async with open_bench_gateway(bundle, cassettes=folder) as gateway:   # strict replay of that bundle
        run = await run_benchmark(tasks, OracleAgent(), gateway, rollouts=4, seeds=[0, 1], out_dir=Path("runs/x"))
    run.summary.pass_at[1], run.summary.pass_at[4], run.ran, run.skipped

What a run leaves in ``out_dir``:

* ``episodes.jsonl`` — one line per finished episode (``EpisodeOutcome.to_json()``, transcript included),
  appended and fsynced as each episode ends, so an interrupted run loses at most the episodes in flight.
  When the run completes the file is rewritten in key order (task, seed, rollout), so two runs of the same
  configuration leave the same file whatever the concurrency (apart from ``duration_s``).
* ``run.json`` — the configuration (agent, task file and its SHA-256, bundle, upstream, seeds, rollouts),
  start and end times, and the summary (``bench.stats.summarize``: pass@1, pass@k with k = rollouts,
  Action, per domain, the seed interval with two seeds or more).
* ``replay-stats.json`` — the replay's cassette hits and misses (``kopa cassettes coverage``).

Resuming (the default) skips the episodes already in ``episodes.jsonl``; a half-written last line (the run
died mid-write) is cut off first. A directory written by another agent, task file, bundle or upstream is
refused rather than mixed in.

The golden answers hold for one recorded bundle, so a run replays exactly the bundle its tasks are pinned
to; running against the sandbox or live upstream is a separate, explicit choice recorded in ``run.json``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.agents.base import Agent
from bench.episode import EpisodeOutcome, run_episode
from bench.limits import EpisodeLimits
from bench.options import UPSTREAMS  # replay is the benchmark; the other two must be asked for
from bench.scoring.judge import LLMJudge
from bench.stats import EpisodeResult, Summary, summarize
from bench.task import Task
from mcp_gateway.gateway import DEFAULT_HOME, Gateway, open_gateway
from mcp_gateway.text import scrub_surrogates
from recorder import Mode
from sandbox import DEFAULT_SEED, InProcessSandbox

__all__ = ["EPISODES_FILE", "RUN_FILE", "UPSTREAMS", "EpisodeKey", "Progress", "RunConfig", "RunResult",
           "episode_result", "open_bench_gateway", "read_episodes", "run_benchmark", "run_bundle", "summary_json"]

EPISODES_FILE = "episodes.jsonl"
RUN_FILE = "run.json"
REPLAY_STATS_FILE = "replay-stats.json"
_MAX_TASK_IDS_SHOWN = 3

EpisodeKey = tuple[str, int, int]  # (task_id, seed, rollout)
Progress = Callable[[int, int, EpisodeOutcome | None], None]  # (done, total, the episode just finished)


@dataclass(frozen=True)
class RunConfig:
    """What a run was asked to do; ``run.json`` holds it, and a resumed run must match it."""

    agent: str
    bundle: str
    upstream: str
    seeds: tuple[int, ...]
    rollouts: int
    concurrency: int
    tasks_file: str | None
    tasks_sha256: str | None
    n_tasks: int
    upstream_source: str = ""  # the replayed bundle version, the sandbox world (version, seed, scale, hash), or live
    judge: str | None = None  # the LLM judge's model when RESPONSE may fall back to it, else None
    catalog: str | None = None  # the version of the tool catalog the agent was shown (``Catalog.version``)
    bundle_catalog: str | None = None  # the catalog the replayed bundle pins (None: none pinned, or no replay)

    def must_match(self, earlier: dict[str, Any], where: Path) -> None:
        """Refuse to resume a run directory written for another agent, task set, bundle or upstream."""
        for name in ("agent", "bundle", "upstream", "tasks_sha256", "n_tasks", "judge"):
            if earlier.get(name) != getattr(self, name):
                raise ValueError(f"{where} was written by a run with {name}={earlier.get(name)!r}, not "
                                 f"{getattr(self, name)!r}; choose another run directory (or resume=False on a fresh one)")
        if earlier.get("catalog") not in (None, self.catalog):  # a run from before catalogs were recorded resumes
            raise ValueError(f"{where} was written by a run shown tool catalog {earlier['catalog']}, this gateway "
                             f"serves catalog {self.catalog}: its episodes would mix two catalogs; choose another "
                             f"run directory")


@dataclass
class RunResult:
    out_dir: Path
    config: RunConfig
    episodes: list[dict[str, Any]]  # this run's episode lines, in key order
    results: list[EpisodeResult]  # the same, as stats results
    summary: Summary
    ran: int  # episodes run by this call
    skipped: int  # episodes found in episodes.jsonl and not run again
    started_at: str = ""
    finished_at: str = ""
    errors: list[str] = field(default_factory=list)  # episodes that ended with an error (agent or system state)


def run_bundle(tasks: Sequence[Task]) -> str:
    """The one bundle ``NAME@VERSION`` every task is pinned to.

    Raises:
        ValueError: no tasks, or tasks pinned to different bundles (the message lists them with a few task ids).
    """
    if not tasks:
        raise ValueError("no tasks to run")
    by_bundle: dict[str, list[str]] = {}
    for task in tasks:
        by_bundle.setdefault(task.bundle, []).append(task.id)
    if len(by_bundle) > 1:
        listed = "; ".join(f"{b} ({len(ids)} task(s): {', '.join(ids[:_MAX_TASK_IDS_SHOWN])}"
                           f"{', …' if len(ids) > _MAX_TASK_IDS_SHOWN else ''})" for b, ids in sorted(by_bundle.items()))
        raise ValueError(f"the tasks are pinned to {len(by_bundle)} cassette bundles, a run replays exactly one: "
                         f"{listed}; split the task file by bundle")
    return next(iter(by_bundle))


def open_bench_gateway(bundle: str, *, upstream: str = "replay", home: Path | None = None,
                       cassettes: Path | None = None, seed: int | None = None, world_version: str = "v1",
                       scale: float = 1.0, key_file: Path | None = None, stats_file: Path | None = None,
                       strict_catalog: bool = False) -> Gateway:
    """A bench-profile gateway: strict replay of ``bundle``, or (asked for) the sandbox or live upstream.

    Raises:
        ValueError: an unknown upstream; mcp_gateway / recorder errors when the bundle is not there.
        CatalogMismatchError: ``strict_catalog`` and the bundle pins another tool catalog than the running one.
    """
    if upstream not in UPSTREAMS:
        raise ValueError(f"unknown upstream {upstream!r}; choose one of {', '.join(UPSTREAMS)}")
    if upstream == "replay":
        return open_gateway(upstream="replay", mode="replay", profile="bench", bundle=bundle, home=home,
                            cassettes=cassettes, stats_file=stats_file, strict_catalog=strict_catalog)
    in_process = None
    if upstream == "sandbox":  # a run against the world itself, unrecorded: this is where it starts
        in_process = InProcessSandbox(home or DEFAULT_HOME, seed=DEFAULT_SEED if seed is None else seed,
                                      version=world_version, scale=scale)
    return open_gateway(upstream=upstream, sandbox=in_process, mode="live", profile="bench", home=home,
                        key_file=key_file)


async def run_benchmark(tasks: Sequence[Task], agent: Agent | Callable[[], Agent], gateway: Gateway, *,
                        rollouts: int, seeds: Sequence[int], out_dir: Path, concurrency: int = 1,
                        resume: bool = True, upstream: str = "replay", tasks_file: Path | None = None,
                        agent_name: str | None = None, progress: Progress | None = None,
                        limits: EpisodeLimits | None = None, judge: LLMJudge | None = None) -> RunResult:
    """Run every (task, seed, rollout) episode not already in ``out_dir`` and summarise the whole run.

    Args:
        agent: one agent shared by all episodes, or a factory called once per episode.
        gateway: a bench-profile gateway; with ``upstream="replay"`` it must replay exactly the tasks' bundle.
        upstream: replay (the benchmark), or sandbox / live, which the gateway must then talk to unrecorded.
        judge: the LLM judge RESPONSE falls back to (off when None); each episode records whether it was used.
        limits: the episode and tool timeouts each episode runs under (``EpisodeLimits``: 600 s and 60 s by default;
            the agent plays the rest of the limits itself).
        tasks_file: the file the tasks came from; its SHA-256 goes into ``run.json``.
        progress: called with (done, total, None) once at start, then after every episode.

    Raises:
        ValueError: bad rollouts/seeds/concurrency, mixed bundles, a gateway that does not fit ``upstream``
            and the bundle, a run directory from another configuration, or a task that does not fit the
            catalog (``run_episode``). Episodes already written stay written.
    """
    seeds = tuple(seeds)
    limits = limits or EpisodeLimits()
    if rollouts < 1:
        raise ValueError(f"rollouts must be >= 1, got {rollouts}")
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be a non-empty list without repeats, got {list(seeds)}")
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids):
        raise ValueError(f"task ids repeat: {sorted({i for i in ids if ids.count(i) > 1})}")
    bundle = run_bundle(tasks)
    _check_gateway(gateway, bundle, upstream)
    # a factory (a class or a function) makes one agent per episode; an agent instance is shared
    make = agent if isinstance(agent, type) or not hasattr(agent, "run") else (lambda: agent)  # type: ignore[return-value]
    config = RunConfig(
        agent=agent_name or getattr(make(), "name", type(agent).__name__), bundle=bundle, upstream=upstream,
        seeds=seeds, rollouts=rollouts, concurrency=concurrency,
        tasks_file=str(tasks_file) if tasks_file is not None else None,
        tasks_sha256=hashlib.sha256(Path(tasks_file).read_bytes()).hexdigest() if tasks_file is not None else None,
        n_tasks=len(tasks), upstream_source=gateway.describe_upstream(),
        judge=judge.model if judge is not None and judge.enabled else None, catalog=gateway.catalog.version,
        bundle_catalog=None if gateway.catalog_diff is None else gateway.catalog_diff.recorded)

    out_dir.mkdir(parents=True, exist_ok=True)
    episodes_path, run_path = out_dir / EPISODES_FILE, out_dir / RUN_FILE
    done = _prepare(episodes_path, run_path, config, resume)
    plan = [(task, seed, rollout) for seed in seeds for rollout in range(rollouts) for task in tasks]
    todo = [(task, seed, rollout) for task, seed, rollout in plan if (task.id, seed, rollout) not in done]
    total, skipped = len(plan), len(plan) - len(todo)
    started_at = _now()
    _write_json(run_path, {"config": asdict(config), "started_at": started_at, "finished_at": None,
                           "complete": False, "episodes_done": skipped, "episodes_total": total})
    if progress:
        progress(skipped, total, None)

    semaphore = asyncio.Semaphore(concurrency)
    finished = skipped

    async def one(task: Task, seed: int, rollout: int) -> None:
        nonlocal finished
        async with semaphore:
            outcome = await run_episode(task, make(), gateway, seed=seed, rollout=rollout,
                                        timeout_s=limits.episode_timeout_s, tool_timeout_s=limits.tool_timeout_s,
                                        judge=judge)
        line = outcome.to_json()
        line["domain"] = task.domain  # so that a summary can be rebuilt from the file alone
        _append_line(episodes_path, line)  # no await in between: lines never interleave
        done[(task.id, seed, rollout)] = line
        finished += 1
        if progress:
            progress(finished, total, outcome)

    jobs = [asyncio.ensure_future(one(*item)) for item in todo]
    try:
        await asyncio.gather(*jobs)
    except BaseException:
        for job in jobs:
            job.cancel()
        await asyncio.gather(*jobs, return_exceptions=True)
        raise

    keys = sorted((t.id, s, r) for t, s, r in plan)
    lines = [done[key] for key in keys]
    _rewrite_sorted(episodes_path, done)
    results = [episode_result(line) for line in lines]
    summary = summarize(results, ks=sorted({1, rollouts}))
    finished_at = _now()
    errors = [f"{line['task_id']} seed={line['seed']} rollout={line['rollout']}: {line['error']}"
              for line in lines if line.get("error")]
    _write_json(run_path, {"config": asdict(config), "started_at": started_at, "finished_at": finished_at,
                           "complete": True, "episodes_done": total, "episodes_total": total,
                           "ran": len(todo), "skipped": skipped, "episodes_with_errors": len(errors),
                           "summary": summary_json(summary)})
    return RunResult(out_dir=out_dir, config=config, episodes=lines, results=results, summary=summary,
                     ran=len(todo), skipped=skipped, started_at=started_at, finished_at=finished_at, errors=errors)


def read_episodes(path: Path) -> dict[EpisodeKey, dict[str, Any]]:
    """The episode lines of ``path`` by key; a half-written last line is ignored.

    Raises:
        ValueError: a line other than the last is not JSON or lacks task_id/seed/rollout (the file was edited).
    """
    episodes: dict[EpisodeKey, dict[str, Any]] = {}
    if not path.exists():
        return episodes
    raw = path.read_text(encoding="utf-8").split("\n")
    for number, text in enumerate(raw, 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
            key = (str(line["task_id"]), int(line["seed"]), int(line["rollout"]))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            if number == len(raw):  # no newline after it: the run died while writing it
                continue
            raise ValueError(f"{path}:{number}: not an episode line ({type(exc).__name__}: {exc})") from exc
        episodes[key] = line
    return episodes


def summary_json(summary: Summary) -> dict[str, Any]:
    """A ``Summary`` as plain JSON (pass@k keyed by k as text)."""
    ci = summary.seed_ci
    return {
        "n_tasks": summary.n_tasks, "n_episodes": summary.n_episodes,
        "pass_at": {str(k): v for k, v in summary.pass_at.items()}, "action": summary.action,
        "by_domain": {d: {"n_tasks": row.n_tasks, "pass_at": {str(k): v for k, v in row.pass_at.items()},
                          "action": row.action} for d, row in summary.by_domain.items()},
        "seed_ci": None if ci is None else {"mean": ci.mean, "half_width": ci.half_width, "low": ci.low,
                                            "high": ci.high, "n_seeds": ci.n, "confidence": ci.confidence},
    }


# ---------------------------------------------------------------------------------------------- helpers


def _check_gateway(gateway: Gateway, bundle: str, upstream: str) -> None:
    if upstream not in UPSTREAMS:
        raise ValueError(f"unknown upstream {upstream!r}; choose one of {', '.join(UPSTREAMS)}")
    if upstream != "replay":
        coverage = upstream == "sandbox" and gateway.mode is Mode.REPLAY_OR_RECORD  # replay, misses from the sandbox
        if not coverage and (gateway.mode is not Mode.LIVE or gateway.upstream != upstream):
            raise ValueError(f"upstream={upstream!r} needs a gateway talking to the {upstream} upstream without "
                             f"cassettes; this one is upstream={gateway.upstream!r}, mode={gateway.mode}")
        return
    replaying = gateway.replaying
    if gateway.mode is not Mode.REPLAY or replaying is None:
        raise ValueError(f"a benchmark run replays its tasks' bundle {bundle} strictly; the gateway is in recorder "
                         f"mode {gateway.mode} (use upstream='sandbox' or 'live' to run unrecorded, on purpose)")
    name, _, version = bundle.partition("@")
    have = replaying.manifest
    if have.name != name or not have.version.startswith(version):
        raise ValueError(f"the tasks are pinned to bundle {bundle} but the gateway replays {have.name}@{have.version}")


def _prepare(episodes_path: Path, run_path: Path, config: RunConfig, resume: bool) -> dict[EpisodeKey, dict[str, Any]]:
    """The episodes already done (resume), after checking the directory belongs to this configuration."""
    has_episodes = episodes_path.exists() and episodes_path.stat().st_size > 0
    if not resume:
        if has_episodes:
            raise ValueError(f"{episodes_path} already holds episodes; resume, or choose an empty run directory")
        episodes_path.write_text("", encoding="utf-8")
        return {}
    if run_path.exists():
        config.must_match(json.loads(run_path.read_text(encoding="utf-8")).get("config", {}), run_path)
    elif has_episodes:
        raise ValueError(f"{episodes_path} has no {RUN_FILE} beside it; cannot tell which run wrote it")
    done = read_episodes(episodes_path)
    if _has_partial(episodes_path):
        _rewrite_sorted(episodes_path, done)  # cut the half-written line before appending after it
    return done


def _has_partial(path: Path) -> bool:
    return path.exists() and path.stat().st_size > 0 and not path.read_bytes().endswith(b"\n")


def _line_text(line: dict[str, Any]) -> str:
    # An agent may hand back text with a lone surrogate; as UTF-8 it would fail halfway through the line.
    # One pass over the finished text (keys and values alike), not a walk of the transcript.
    return scrub_surrogates(json.dumps(line, ensure_ascii=False)) + "\n"


def _append_line(path: Path, line: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as f:
        f.write(_line_text(line))
        f.flush()
        os.fsync(f.fileno())


def _rewrite_sorted(path: Path, episodes: dict[EpisodeKey, dict[str, Any]]) -> None:
    """Replace ``path`` atomically with ``episodes`` in key order (an interruption leaves the old file)."""
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for key in sorted(episodes):
            f.write(_line_text(episodes[key]))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def episode_result(line: dict[str, Any]) -> EpisodeResult:
    """One ``episodes.jsonl`` line as a stats result.

    Raises:
        ValueError: the line lacks the domain or the scores the runner writes.
    """
    try:
        return EpisodeResult(task_id=line["task_id"], domain=line["domain"], rollout=line["rollout"],
                             seed=line["seed"], passed=line["scores"]["passed"],
                             action=line["scores"]["action"]["action"])
    except (KeyError, TypeError) as exc:
        raise ValueError(f"episode {line.get('task_id')!r} seed={line.get('seed')} rollout={line.get('rollout')} "
                         f"lacks {exc} (not written by bench.runner?)") from exc


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
