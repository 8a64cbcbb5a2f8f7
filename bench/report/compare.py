"""Two runs side by side: overall and per-domain pass@1, pass@k and Action with deltas, and the tasks that moved.

    from bench.report import compare_runs, comparison_markdown, load_run
    comparison = compare_runs(load_run(Path("runs/a")), load_run(Path("runs/b")))
    comparison.overall, comparison.domains, comparison.flipped, comparison.warnings
    print(comparison_markdown(comparison))

Deltas are B − A in percentage points. Both runs are summarised again over the tasks they have in common, so
that a run on another task file (a different SHA-256) is compared only over the shared task ids, and the
comparison says so; another bundle, upstream, rollout count or an unfinished run is compared with a warning.
Runs that share no task are refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bench.stats import DomainRow, MeanCI, Summary, summarize

from .format import ci_text, md_table, pct, signed
from .model import RunReport

__all__ = ["Comparison", "DomainComparison", "MetricRow", "TaskChange", "compare_runs", "comparison_markdown"]

_MAX_IDS_SHOWN = 5


@dataclass(frozen=True)
class MetricRow:
    """One metric in both runs (fractions; None when undefined, e.g. Action with no solved task)."""

    metric: str
    a: float | None
    b: float | None

    @property
    def delta(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a


@dataclass(frozen=True)
class DomainComparison:
    domain: str
    rows: tuple[MetricRow, ...]  # pass@k for each compared k, then Action


@dataclass(frozen=True)
class TaskChange:
    """A common task that passed more often in one run than in the other."""

    task_id: str
    domain: str
    a: float  # pass rate in run A
    b: float  # pass rate in run B
    better: Literal["A", "B"]


@dataclass(frozen=True)
class Comparison:
    a: RunReport
    b: RunReport
    common_tasks: tuple[str, ...]
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]
    ks: tuple[int, ...]
    summary_a: Summary  # over the common tasks
    summary_b: Summary
    overall: tuple[MetricRow, ...]
    domains: tuple[DomainComparison, ...]
    flipped: tuple[TaskChange, ...]  # in task id order
    warnings: tuple[str, ...]


def compare_runs(a: RunReport, b: RunReport) -> Comparison:
    """Compare run B against run A over the tasks both ran.

    Raises:
        ValueError: the runs share no task id (nothing to compare).
    """
    ids_a, ids_b = {t.task_id for t in a.tasks}, {t.task_id for t in b.tasks}
    common = sorted(ids_a & ids_b)
    only_a, only_b = sorted(ids_a - ids_b), sorted(ids_b - ids_a)
    if not common:
        raise ValueError(f"the runs share no task: {a.run_dir} ran {_ids(sorted(ids_a))} and {b.run_dir} ran "
                         f"{_ids(sorted(ids_b))}; compare runs over the same task file")
    warnings = _warnings(a, b, common, only_a, only_b)
    ks = tuple(sorted(set(a.ks) & set(b.ks)))
    if set(a.ks) != set(b.ks):
        warnings.append(f"pass@k is compared for k in {list(ks)} only (A has pass@k for {a.ks}, B for {b.ks})")
    keep = set(common)
    summary_a = summarize([r for r in a.results if r.task_id in keep], ks=ks)
    summary_b = summarize([r for r in b.results if r.task_id in keep], ks=ks)
    domains = sorted(set(summary_a.by_domain) | set(summary_b.by_domain))
    rate_a, rate_b = {t.task_id: t for t in a.tasks}, {t.task_id: t for t in b.tasks}
    flipped = tuple(TaskChange(task_id=task, domain=rate_a[task].domain, a=rate_a[task].pass_rate,
                               b=rate_b[task].pass_rate, better="A" if rate_a[task].pass_rate > rate_b[task].pass_rate
                               else "B")
                    for task in common if rate_a[task].pass_rate != rate_b[task].pass_rate)
    return Comparison(
        a=a, b=b, common_tasks=tuple(common), only_a=tuple(only_a), only_b=tuple(only_b), ks=ks,
        summary_a=summary_a, summary_b=summary_b, overall=_rows(summary_a, summary_b, ks),
        domains=tuple(DomainComparison(domain=d, rows=_rows(summary_a.by_domain.get(d), summary_b.by_domain.get(d),
                                                            ks)) for d in domains),
        flipped=flipped, warnings=tuple(warnings))


def comparison_markdown(comparison: Comparison) -> str:
    """The comparison as Markdown: the two runs, warnings, overall, per domain, the tasks that moved."""
    c = comparison
    parts = ["# KOPA-Bench comparison", "",
             f"- **A**: {_describe(c.a, c.summary_a.seed_ci)}", f"- **B**: {_describe(c.b, c.summary_b.seed_ci)}", ""]
    parts += [f"> **warning:** {w}" for w in c.warnings]
    if c.warnings:
        parts.append("")
    head = [f"A ({c.a.agent})", f"B ({c.b.agent})", "Δ (B − A)"]
    parts += [f"## Overall ({len(c.common_tasks)} tasks)", "",
              md_table(["metric", *head], [[r.metric, pct(r.a), pct(r.b), signed(r.delta)] for r in c.overall]),
              "", "## Per domain", ""]
    metrics = [r.metric for r in c.overall]
    parts.append(md_table(["domain", *(f"{m} {side}" for m in metrics for side in ("A", "B", "Δ"))],
                          [[d.domain, *(cell for r in d.rows for cell in (pct(r.a), pct(r.b), signed(r.delta)))]
                           for d in c.domains]))
    parts += ["", f"## Tasks that flipped ({len(c.flipped)})", ""]
    if c.flipped:
        parts.append(md_table(["task", "domain", "pass rate A", "pass rate B", "passed more often in"],
                              [[t.task_id, t.domain, pct(t.a), pct(t.b),
                                f"{t.better} ({c.a.agent if t.better == 'A' else c.b.agent})"] for t in c.flipped]))
    else:
        parts.append("None: every common task passed equally often in both runs.")
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------------------------------------- helpers


def _warnings(a: RunReport, b: RunReport, common: list[str], only_a: list[str], only_b: list[str]) -> list[str]:
    warnings = []
    if a.tasks_sha256 != b.tasks_sha256 or only_a or only_b:
        why = "different task files" if a.tasks_sha256 != b.tasks_sha256 else "different tasks with episodes"
        warnings.append(f"{why}: compared over the {len(common)} task(s) both runs have; only in A: "
                        f"{_ids(only_a) or 'none'}; only in B: {_ids(only_b) or 'none'}")
    for name in ("bundle", "upstream"):
        if getattr(a, name) != getattr(b, name):
            warnings.append(f"different {name}s: A {getattr(a, name)}, B {getattr(b, name)}")
    if a.catalog != b.catalog:
        if a.catalog and b.catalog:
            warnings.append(f"different tool catalogs: A was shown catalog {a.catalog}, B catalog {b.catalog} (tools, "
                            f"schemas or descriptions changed between the runs: the models did not see the same tools)")
        else:
            unknown = " and ".join(side for side, run in (("A", a), ("B", b)) if not run.catalog)
            warnings.append(f"run {unknown} records no tool catalog (run before catalogs were kept): whether both "
                            f"were shown the same tools is unknown")
    if a.rollouts != b.rollouts:
        warnings.append(f"different rollouts per seed: A {a.rollouts}, B {b.rollouts}")
    for side, run in (("A", a), ("B", b)):
        if not run.complete:
            warnings.append(f"run {side} is {run.status}")
    return warnings


def _rows(a: Summary | DomainRow | None, b: Summary | DomainRow | None, ks: tuple[int, ...]) -> tuple[MetricRow, ...]:
    """pass@k for each k, then Action, for two summaries or domain rows (None: the domain is not in that run)."""
    rows = [MetricRow(f"pass@{k}", None if a is None else a.pass_at[k], None if b is None else b.pass_at[k])
            for k in ks]
    rows.append(MetricRow("Action", None if a is None else a.action, None if b is None else b.action))
    return tuple(rows)


def _describe(run: RunReport, ci: MeanCI | None) -> str:
    text = (f"{run.agent} · `{run.run_dir}` · {run.bundle} · {run.upstream} · seeds {list(run.seeds)} × "
            f"{run.rollouts} rollout(s) · {run.status}")
    return text + (f" · pass@1 over seeds {pct(ci.mean)} {ci_text(ci)}" if ci is not None else "")


def _ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:_MAX_IDS_SHOWN])
    return shown + (f", … ({len(ids)} in all)" if len(ids) > _MAX_IDS_SHOWN else "")
