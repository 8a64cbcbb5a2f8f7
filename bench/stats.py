"""Statistics over episode results: pass@k, Action, per-domain tables and seed confidence intervals.

    from bench.stats import EpisodeResult, summarize
    summary = summarize(results, ks=(1, 4))
    summary.pass_at[1], summary.action, summary.by_domain["finance"].pass_at[4], summary.seed_ci

Definitions (line numbers refer to the text of the paper "KOPA-Bench and EDGE"):

* pass@k (Table 1 caption, l. 219): per task, the unbiased estimator of Chen et al. (2021),
  1 − C(n−c, k)/C(n, k) with n episodes and c passes, in its stable product form
  1 − ∏_{i=n−c+1}^{n} (1 − k/i); then the mean over tasks. For k = 1 this is the per-task pass rate
  averaged over tasks ("averaged over the four rollouts").
* Action (l. 271, "averaged only over the tasks a model solves"; B.4, l. 363-397): per task, the mean
  ACTION of its passing episodes; then the mean over the tasks with at least one passing episode.
  ``None`` when no task is solved.
* Seed confidence interval (Appendix C, Eq. 4, l. 403-425; Table 4, l. 383): pass@1 is computed
  separately for each seed (over that seed's rollouts), then x̄ ± t_{0.975, n−1} · s/√n over the n seeds,
  with s the sample standard deviation (n − 1 in the denominator).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DomainRow",
    "EpisodeResult",
    "MeanCI",
    "Summary",
    "action_score",
    "mean_ci",
    "pass_at",
    "pass_at_k",
    "pass_at_1_by_seed",
    "summarize",
]


class EpisodeResult(BaseModel):
    """One scored rollout, as the runner writes it to its result files."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str = Field(description="the task's id")
    domain: str = Field(description="the task's domain (traffic, finance, ...)")
    rollout: int = Field(ge=0, description="rollout index within the seed")
    seed: int = Field(description="the random seed the episode ran under")
    passed: bool = Field(description="every outcome dimension in the task's reward basis passed")
    action: float = Field(ge=0.0, le=1.0, description="the episode's ACTION score, (Corr + Eff)/2")


@dataclass(frozen=True)
class MeanCI:
    """A mean with its two-sided Student-t confidence interval."""

    mean: float
    half_width: float
    n: int
    confidence: float

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width

    @property
    def width(self) -> float:
        return 2 * self.half_width


@dataclass(frozen=True)
class DomainRow:
    n_tasks: int
    pass_at: Mapping[int, float]
    action: float | None


@dataclass(frozen=True)
class Summary:
    n_tasks: int
    n_episodes: int
    pass_at: Mapping[int, float]
    action: float | None
    by_domain: Mapping[str, DomainRow]
    seed_ci: MeanCI | None  # pass@1 over seeds; None with fewer than two seeds


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one task with ``n`` episodes of which ``c`` passed (Chen et al., 2021).

    Raises:
        ValueError: k < 1, n < k, or c outside 0..n.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if n < k:
        raise ValueError(f"pass@{k} needs at least {k} episodes per task, got n={n}")
    if not 0 <= c <= n:
        raise ValueError(f"passes c={c} must lie in 0..n={n}")
    if n - c < k:  # every k-subset holds a pass
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def pass_at(results: Iterable[EpisodeResult], k: int) -> float:
    """Mean over tasks of per-task pass@k, each task using all its episodes.

    Raises:
        ValueError: no results, a task has fewer than k episodes, or the results are inconsistent.
    """
    tasks = _by_task(results)
    if not tasks:
        raise ValueError("no episode results to compute pass@k over")
    values = []
    for task_id, episodes in tasks.items():
        try:
            values.append(pass_at_k(len(episodes), sum(e.passed for e in episodes), k))
        except ValueError as exc:
            raise ValueError(f"task {task_id!r}: {exc}") from exc
    return statistics.fmean(values)


def action_score(results: Iterable[EpisodeResult]) -> float | None:
    """Mean ACTION over the tasks solved at least once, each task's value the mean over its passing episodes."""
    per_task = [statistics.fmean(e.action for e in episodes if e.passed)
                for episodes in _by_task(results).values() if any(e.passed for e in episodes)]
    return statistics.fmean(per_task) if per_task else None


def pass_at_1_by_seed(results: Iterable[EpisodeResult]) -> dict[int, float]:
    """pass@1 computed separately for each seed, over that seed's rollouts."""
    seeds: dict[int, list[EpisodeResult]] = defaultdict(list)
    for result in results:
        seeds[result.seed].append(result)
    return {seed: pass_at(episodes, 1) for seed, episodes in sorted(seeds.items())}


def mean_ci(values: Sequence[float], confidence: float = 0.95) -> MeanCI:
    """x̄ ± t_{(1+confidence)/2, n−1} · s/√n, s the sample standard deviation (Appendix C, Eq. 4).

    Raises:
        ValueError: fewer than two values, or confidence outside (0, 1).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    n = len(values)
    if n < 2:
        raise ValueError(f"a Student-t interval needs at least 2 values (seeds), got {n}")
    from scipy.stats import t as student_t  # ~0.9 s to import: only when an interval is asked for

    half = float(student_t.ppf((1 + confidence) / 2, n - 1)) * statistics.stdev(values) / math.sqrt(n)
    return MeanCI(mean=statistics.fmean(values), half_width=half, n=n, confidence=confidence)


def summarize(results: Iterable[EpisodeResult], ks: Sequence[int] = (1,), confidence: float = 0.95) -> Summary:
    """Table 1 (pass@k and Action, overall and per domain) and Table 4 (pass@1 over seeds) for one run.

    Raises:
        ValueError: as ``pass_at``; also a task listed under two domains or an episode given twice.
    """
    results = list(results)
    tasks = _by_task(results)
    if not tasks:
        raise ValueError("no episode results to summarize")
    domains: dict[str, list[EpisodeResult]] = defaultdict(list)
    for result in results:
        domains[result.domain].append(result)
    by_domain = {
        domain: DomainRow(n_tasks=len({e.task_id for e in episodes}),
                          pass_at={k: pass_at(episodes, k) for k in ks}, action=action_score(episodes))
        for domain, episodes in sorted(domains.items())
    }
    per_seed = pass_at_1_by_seed(results)
    return Summary(
        n_tasks=len(tasks), n_episodes=len(results), pass_at={k: pass_at(results, k) for k in ks},
        action=action_score(results), by_domain=by_domain,
        seed_ci=mean_ci(list(per_seed.values()), confidence) if len(per_seed) >= 2 else None,
    )


def _by_task(results: Iterable[EpisodeResult]) -> dict[str, list[EpisodeResult]]:
    """Group by task, refusing a task under two domains or the same (task, seed, rollout) twice."""
    tasks: dict[str, list[EpisodeResult]] = defaultdict(list)
    seen: set[tuple[str, int, int]] = set()
    for result in results:
        key = (result.task_id, result.seed, result.rollout)
        if key in seen:
            raise ValueError(f"episode task={key[0]!r} seed={key[1]} rollout={key[2]} appears twice in the results")
        seen.add(key)
        episodes = tasks[result.task_id]
        if episodes and episodes[0].domain != result.domain:
            raise ValueError(f"task {result.task_id!r} is listed under domains {episodes[0].domain!r} "
                             f"and {result.domain!r}")
        episodes.append(result)
    return dict(tasks)
