"""Audit a task set the way §2.3 validates the paper's: against the tool descriptions, for leakage and duplicates.

    findings = audit_tasks(tasks, load_catalog())
    [f for f in findings if f.severity == "error"]    # a task set with errors is not fit to ship

Checks, per task unless said otherwise:

* **catalog** — every available and golden tool exists; golden arguments are known parameters of the right
  type (``bench.task.validate_against_catalog``).
* **reward basis** — ENVIRONMENT exactly when a golden call writes workspace state (otherwise the state
  check is vacuous, or a write goes unchecked); no realtime tool in a golden trajectory (its answer would
  change under the recording).
* **leakage** — the query names no tool, parameter or output field (ASCII identifiers of the catalog), and
  holds no code-like value (an id, a code) that a golden call after the first step passes and no first-step
  call already did: what the chain has to discover. Years are allowed: a user says "2025년".
* **near-duplicates** (across tasks) — two queries whose similarity (difflib ratio) is at least
  ``DUPLICATE_RATIO``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from bench.task import RewardBasis, Task, validate_against_catalog

__all__ = ["DUPLICATE_RATIO", "Finding", "audit_tasks", "catalog_identifiers"]

DUPLICATE_RATIO = 0.9
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_CODE_LIKE = re.compile(r"^(?=.*\d)[A-Za-z0-9_-]{4,}$")  # has a digit, 4+ chars of code alphabet
_YEAR = re.compile(r"^(19|20)\d\d$")


@dataclass(frozen=True)
class Finding:
    severity: Literal["error", "warning"]
    task_id: str
    check: str
    message: str

    def __str__(self) -> str:
        return f"{self.severity}: {self.task_id}: {self.check}: {self.message}"


def audit_tasks(tasks: Sequence[Task], catalog: Any) -> list[Finding]:
    """Every finding, errors first, then by task id."""
    findings: list[Finding] = []
    for problem in validate_against_catalog(tasks, catalog):  # "task 'ID': what is wrong"
        match = re.match(r"task '([^']*)': (.*)", problem, re.S)
        task_id, message = match.groups() if match else ("?", problem)
        findings.append(Finding("error", task_id, "catalog", message))
    identifiers = catalog_identifiers(catalog)
    for task in tasks:
        findings += _basis(task, catalog)
        findings += _leakage(task, identifiers)
    findings += _near_duplicates(tasks)
    return sorted(findings, key=lambda f: (f.severity != "error", f.task_id, f.check))


def catalog_identifiers(catalog: Any) -> set[str]:
    """The catalog's ASCII identifiers (tool, parameter and output field names): words a query must not show."""
    names: set[str] = set()
    for tool in catalog.names():
        spec = catalog.get(tool)
        names.add(tool)
        names.update(p.name for p in spec.params)
        names.update(f.name for f in spec.output)
    return {n for n in names if _IDENTIFIER.fullmatch(n)}


def _basis(task: Task, catalog: Any) -> Iterator[Finding]:
    known = [a for a in task.golden_actions if a.tool in catalog]
    writes = [a.tool for a in known if catalog.get(a.tool).writes_state]
    has_env = RewardBasis.ENVIRONMENT in task.reward_basis
    if writes and not has_env:
        yield Finding("error", task.id, "reward basis", f"golden calls write state ({', '.join(writes)}) "
                      "but ENVIRONMENT is not in the reward basis: the writes go unchecked")
    if has_env and not writes:
        yield Finding("error", task.id, "reward basis", "ENVIRONMENT is scored but no golden call writes state: "
                      "the check is vacuous")
    for action in known:
        if catalog.get(action.tool).realtime:
            yield Finding("error", task.id, "reward basis", f"{action.tool} is a realtime tool: its answer changes "
                          "by the minute and cannot be pinned to a recording")


def _leakage(task: Task, identifiers: set[str]) -> Iterator[Finding]:
    for word in sorted(set(_IDENTIFIER.findall(task.query)) & identifiers):
        yield Finding("error", task.id, "leakage", f"the query names the API identifier {word!r}")
    # a value the first step already passes came from the user (a bus number, a stock code they gave);
    # one that first appears later was found by the chain, and the query must not give it away
    given = {_text(v) for a in task.golden_actions if a.step == 0 for v in a.args.values()}
    for action in task.golden_actions:
        if action.step == 0:
            continue
        for name in action.value_compare_args:
            text = _text(action.args.get(name))
            if _CODE_LIKE.match(text) and not _YEAR.match(text) and text not in given and text in task.query:
                yield Finding("error", task.id, "leakage", f"the query holds {text!r}, the value of "
                              f"{action.tool}.{name} that the chain has to discover")


def _text(value: Any) -> str:
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else ""


def _near_duplicates(tasks: Sequence[Task]) -> Iterator[Finding]:
    queries = [(t.id, re.sub(r"\s+", " ", t.query.strip())) for t in tasks]
    for i, (id_a, a) in enumerate(queries):
        matcher = difflib.SequenceMatcher(None, autojunk=False)
        matcher.set_seq2(a)  # difflib caches what it learns about seq2: keep a there, vary seq1
        for id_b, b in queries[i + 1:]:
            matcher.set_seq1(b)
            if matcher.real_quick_ratio() >= DUPLICATE_RATIO and matcher.quick_ratio() >= DUPLICATE_RATIO:
                ratio = matcher.ratio()
                if ratio >= DUPLICATE_RATIO:
                    yield Finding("warning", id_b, "near-duplicate", f"its query is {ratio:.0%} like {id_a}'s")
