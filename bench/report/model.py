"""A run directory read back as a report model: the summary recomputed from the episodes, per domain, per task.

    from bench.report import load_run
    report = load_run(Path("runs/x"))     # run.json + episodes.jsonl
    report.summary.pass_at[1], report.domains[0].ci, report.tasks, report.failures, report.status
    report.errors                         # episodes that ended with an error, grouped by kind (bench.report.errors)

Only the result files are read (``run.json`` for the configuration, ``episodes.jsonl`` for the numbers), so a
report works for a run that is still going or was interrupted: it is then marked "incomplete, N of M episodes"
and pass@k is given only for the k every task has enough episodes for. The per-domain interval is the seed
interval of ``bench.stats`` (Student t over the per-seed pass@1 of that domain's episodes), present with two
seeds or more.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.runner import EPISODES_FILE, RUN_FILE, episode_result, read_episodes
from bench.stats import EpisodeResult, MeanCI, Summary, mean_ci, pass_at_1_by_seed, summarize

from .errors import ErrorGroup, error_groups

__all__ = ["DomainReport", "FailedEpisode", "RunFiles", "RunReport", "TaskRow", "build_report", "episode_result",
           "load_run", "read_run_dir"]


@dataclass(frozen=True)
class RunFiles:
    """What a run directory holds: ``run.json`` as written and the episode lines in key order (maybe none yet)."""

    run_dir: Path
    meta: dict[str, Any]
    episodes: list[dict[str, Any]]

    @property
    def config(self) -> dict[str, Any]:
        return self.meta.get("config") or {}


@dataclass(frozen=True)
class DomainReport:
    """One domain's row: pass@k and Action as in Table 1, and pass@1 per seed with its interval."""

    domain: str
    n_tasks: int
    n_episodes: int
    pass_at: dict[int, float]
    action: float | None  # mean ACTION over the domain's solved tasks; None when none is solved
    seed_pass_at_1: dict[int, float]
    ci: MeanCI | None  # Student t over ``seed_pass_at_1``; None with fewer than two seeds


@dataclass(frozen=True)
class TaskRow:
    """One task over all its episodes."""

    task_id: str
    domain: str
    query: str | None  # from the run's task file when it is still there unchanged, else None
    n_episodes: int
    n_passed: int
    mean_action: float  # mean ACTION over all the task's episodes, passing or not
    n_errors: int

    @property
    def pass_rate(self) -> float:
        return self.n_passed / self.n_episodes


@dataclass(frozen=True)
class FailedEpisode:
    """An episode that did not pass or ended with an error, with the reasons its scores give."""

    task_id: str
    domain: str
    seed: int
    rollout: int
    answer: str | None
    error: str | None
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class RunReport:
    """Everything a report shows about one run directory."""

    run_dir: Path
    agent: str
    bundle: str
    upstream: str
    upstream_source: str
    tasks_file: str | None
    tasks_sha256: str | None
    seeds: tuple[int, ...]
    rollouts: int
    started_at: str | None
    finished_at: str | None
    complete: bool
    n_done: int  # episodes in episodes.jsonl
    n_total: int  # episodes the run was asked for
    summary: Summary  # recomputed from the episodes
    domains: tuple[DomainReport, ...]
    tasks: tuple[TaskRow, ...]
    failures: tuple[FailedEpisode, ...]
    results: tuple[EpisodeResult, ...]
    errors: tuple[ErrorGroup, ...] = ()  # episodes that ended with an error, by kind (apart from wrong answers)
    catalog: str | None = None  # the tool catalog version the agent was shown (None: a run from before it was kept)

    @property
    def ks(self) -> list[int]:
        return sorted(self.summary.pass_at)

    @property
    def status(self) -> str:
        return "complete" if self.complete else f"incomplete, {self.n_done} of {self.n_total} episodes"


def read_run_dir(run_dir: Path) -> RunFiles:
    """Read ``run.json`` and ``episodes.jsonl`` (absent: no episodes yet) of a run directory.

    Raises:
        ValueError: the directory does not exist, has no readable ``run.json``, or holds an episode line
            that is not one (a half-written last line is ignored, as when resuming).
    """
    run_dir = Path(run_dir)
    if not run_dir.exists():
        raise ValueError(f"run directory {run_dir} does not exist; give the --run-dir of a `kopa bench run`")
    if not run_dir.is_dir():
        raise ValueError(f"{run_dir} is not a directory; give the --run-dir of a `kopa bench run`")
    run_path = run_dir / RUN_FILE
    if not run_path.is_file():
        raise ValueError(f"{run_dir} is not a benchmark run directory: it has no {RUN_FILE} "
                         f"(`kopa bench run` writes {RUN_FILE} and {EPISODES_FILE})")
    try:
        meta = json.loads(run_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{run_path} is not JSON ({exc}); was it edited?") from exc
    if not isinstance(meta, dict):
        raise ValueError(f"{run_path} holds a {type(meta).__name__}, not the run's JSON object")
    episodes = read_episodes(run_dir / EPISODES_FILE)
    return RunFiles(run_dir=run_dir, meta=meta, episodes=[episodes[key] for key in sorted(episodes)])


def load_run(run_dir: Path) -> RunReport:
    """Build the report model of a run directory (``build_report(read_run_dir(run_dir))``).

    Raises:
        ValueError: as ``read_run_dir``; also a directory without any episode yet.
    """
    return build_report(read_run_dir(run_dir))


def build_report(files: RunFiles) -> RunReport:
    """Build the report model of a run directory already read.

    Raises:
        ValueError: no episode yet, or an episode line without the runner's fields.
    """
    if not files.episodes:
        raise ValueError(f"{files.run_dir} has no episodes yet ({EPISODES_FILE} is missing or empty); "
                         "nothing to report")
    config = files.config
    results = [episode_result(line) for line in files.episodes]
    rollouts = int(config.get("rollouts") or max(r.rollout for r in results) + 1)
    seeds = tuple(config.get("seeds") or sorted({r.seed for r in results}))
    per_task: dict[str, list[EpisodeResult]] = defaultdict(list)
    for result in results:
        per_task[result.task_id].append(result)
    fewest = min(len(episodes) for episodes in per_task.values())
    # an unfinished run may have too few episodes of a task for pass@k; give only the k every task allows
    summary = summarize(results, ks=[k for k in sorted({1, rollouts}) if k <= fewest])
    n_tasks = int(config.get("n_tasks") or len(per_task))
    return RunReport(
        run_dir=files.run_dir, agent=str(config.get("agent", "?")), bundle=str(config.get("bundle", "?")),
        upstream=str(config.get("upstream", "?")), upstream_source=str(config.get("upstream_source", "")),
        tasks_file=config.get("tasks_file"), tasks_sha256=config.get("tasks_sha256"), seeds=seeds,
        catalog=config.get("catalog"),
        rollouts=rollouts, started_at=files.meta.get("started_at"), finished_at=files.meta.get("finished_at"),
        complete=bool(files.meta.get("complete")), n_done=len(results),
        n_total=int(files.meta.get("episodes_total") or n_tasks * len(seeds) * rollouts),
        summary=summary, domains=_domains(results, summary), tasks=_tasks(files, per_task),
        failures=tuple(_failure(line) for line in files.episodes
                       if line.get("error") or not line["scores"]["passed"]),
        results=tuple(results), errors=error_groups(files.episodes))


# ---------------------------------------------------------------------------------------------- helpers


def _domains(results: list[EpisodeResult], summary: Summary) -> tuple[DomainReport, ...]:
    by_domain: dict[str, list[EpisodeResult]] = defaultdict(list)
    for result in results:
        by_domain[result.domain].append(result)
    rows = []
    for domain, row in summary.by_domain.items():
        per_seed = pass_at_1_by_seed(by_domain[domain])
        rows.append(DomainReport(domain=domain, n_tasks=row.n_tasks, n_episodes=len(by_domain[domain]),
                                 pass_at=dict(row.pass_at), action=row.action, seed_pass_at_1=per_seed,
                                 ci=mean_ci(list(per_seed.values())) if len(per_seed) >= 2 else None))
    return tuple(rows)


def _tasks(files: RunFiles, per_task: dict[str, list[EpisodeResult]]) -> tuple[TaskRow, ...]:
    errors: dict[str, int] = defaultdict(int)
    for line in files.episodes:
        errors[line["task_id"]] += bool(line.get("error"))
    queries = _queries(files.config)
    return tuple(TaskRow(task_id=task_id, domain=episodes[0].domain, query=queries.get(task_id),
                         n_episodes=len(episodes), n_passed=sum(e.passed for e in episodes),
                         mean_action=statistics.fmean(e.action for e in episodes), n_errors=errors[task_id])
                 for task_id, episodes in sorted(per_task.items()))


def _queries(config: dict[str, Any]) -> dict[str, str]:
    """Task queries from the run's task file, only while it is the file the run used (same SHA-256)."""
    path, sha = config.get("tasks_file"), config.get("tasks_sha256")
    if not path or not sha:
        return {}
    try:
        data = Path(path).read_bytes()
    except OSError:
        return {}
    if hashlib.sha256(data).hexdigest() != sha:
        return {}
    queries: dict[str, str] = {}
    for text in data.decode("utf-8", errors="replace").splitlines():
        try:
            task = json.loads(text)
        except json.JSONDecodeError:
            return {}  # not JSONL (a JSON array file, say): the report goes without queries
        if isinstance(task, dict) and isinstance(task.get("id"), str) and isinstance(task.get("query"), str):
            queries[task["id"]] = task["query"]
    return queries


def _failure(line: dict[str, Any]) -> FailedEpisode:
    scores = line["scores"]
    reasons: list[str] = []
    if line.get("error"):
        reasons.append(f"error: {line['error']}")
    response = scores.get("response")
    if response is not None and not response.get("passed"):
        reasons.append(f"RESPONSE ({response.get('method')}): {response.get('detail') or 'did not match'}")
    environment = scores.get("environment")
    if environment is not None and not environment.get("passed"):
        reasons.append("ENVIRONMENT: the final state differs from the golden state")
    action = scores["action"]
    unmatched = [m["tool"] for m in action.get("matches", []) if m.get("matched_index") is None]
    reasons.append(f"ACTION {action['action']:.2f} (Corr {action.get('corr', 0):.2f}, Eff {action.get('eff', 0):.2f}"
                   + (f"; golden calls not made: {', '.join(unmatched)})" if unmatched else ")"))
    return FailedEpisode(task_id=line["task_id"], domain=line["domain"], seed=line["seed"], rollout=line["rollout"],
                         answer=line.get("answer"), error=line.get("error"), reasons=tuple(reasons))
