"""Table 6 of the paper for a task set: per-domain steps, tool calls, headroom, available tools, parallel %.

    rows = task_set_stats(tasks)          # {domain: Row, ..., "all": Row}
    print(format_table(rows))              # ours beside the paper's figures

All quantities come from the golden actions and task metadata (Appendix D): steps count parallel calls
once, headroom is max_allowed_calls / golden calls, parallel % is the share of tasks with two or more
golden calls at one step. Means over all tasks are weighted by the tasks per domain, as the paper's are.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from bench.task import DOMAINS, Task

__all__ = ["PAPER_TABLE_6", "Row", "format_table", "task_set_stats"]


@dataclass(frozen=True)
class Row:
    tasks: int
    steps: float
    calls: float
    headroom: float
    tools: float
    parallel: float  # a fraction, 0..1
    max_calls: int = 0


PAPER_TABLE_6 = {
    "traffic": Row(22, 3.64, 5.14, 2.21, 7.5, 0.55),
    "finance": Row(29, 3.69, 5.65, 2.24, 6.6, 0.83),
    "education": Row(30, 2.93, 4.30, 2.79, 7.7, 0.57),
    "law": Row(22, 3.00, 3.55, 3.63, 6.7, 0.27),
    "politics": Row(25, 3.72, 5.48, 2.10, 8.7, 0.52),
    "district": Row(17, 2.76, 5.41, 1.55, 8.0, 0.82),
    "all": Row(145, 3.32, 4.92, 2.45, 7.5, 0.59, 14),
}


def _row(tasks: Sequence[Task]) -> Row:
    n = len(tasks)
    if n == 0:
        return Row(0, 0.0, 0.0, 0.0, 0.0, 0.0)
    calls = [len(t.golden_actions) for t in tasks]
    return Row(
        tasks=n,
        steps=sum(t.n_steps for t in tasks) / n,
        calls=sum(calls) / n,
        headroom=sum(t.max_allowed_calls / c for t, c in zip(tasks, calls, strict=True)) / n,
        tools=sum(len(t.available_tools) for t in tasks) / n,
        parallel=sum(_parallel(t) for t in tasks) / n,
        max_calls=max(calls),
    )


def _parallel(task: Task) -> bool:
    return any(count > 1 for count in Counter(a.step for a in task.golden_actions).values())


def task_set_stats(tasks: Sequence[Task]) -> dict[str, Row]:
    """Per-domain rows (in Table 5's order, domains present only) and ``all``."""
    by_domain: dict[str, list[Task]] = defaultdict(list)
    for task in tasks:
        by_domain[task.domain].append(task)
    rows = {d: _row(by_domain[d]) for d in DOMAINS if by_domain[d]}
    rows["all"] = _row(list(tasks))
    return rows


def format_table(rows: dict[str, Row]) -> str:
    """A plain-text table: each figure with the paper's in parentheses."""
    head = f"{'domain':<10} {'tasks':>9} {'steps':>12} {'calls':>12} {'headroom':>12} {'tools':>12} {'parallel':>12} {'max':>8}"
    lines = [head, "-" * len(head)]
    for name, row in rows.items():
        p = PAPER_TABLE_6.get(name)

        def cell(mine: float, paper: float | None, fmt: str = ".2f") -> str:
            return f"{mine:{fmt}}" + (f" ({paper:{fmt}})" if paper is not None else "")

        lines.append(f"{name:<10} {cell(row.tasks, p and p.tasks, 'd'):>9} {cell(row.steps, p and p.steps):>12} "
                     f"{cell(row.calls, p and p.calls):>12} {cell(row.headroom, p and p.headroom):>12} "
                     f"{cell(row.tools, p and p.tools, '.1f'):>12} "
                     f"{cell(100 * row.parallel, p and 100 * p.parallel, '.0f'):>12} "
                     f"{row.max_calls:>8}")
    return "\n".join(lines)
