"""SFT rows drawn evenly across the KOPA-Bench domains their trajectories start in.

    rows = balanced_rows(rows, 120, key=domain_of_row(load_catalog()), seed=0)

EDGE over the bench's tools makes most of its items in the district domain: Seoul's and Gyeonggi's statistics and
licence tools outnumber every other platform's, so 201 of run9's 292 rows start there, while the eval split has 4
district tasks of 36 (law: 9 rows, 6 tasks). A loop that trains on a hundred rows spent two thirds of them on one
domain. ``balanced_rows`` takes rows round-robin over the domains (each domain's rows in a seeded order), so every
domain gets as many as the scarcest can give and the rest is shared among those that have more.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

__all__ = ["balanced_rows", "domain_of_row"]

Row = TypeVar("Row")
NO_DATA_CALL = "none"  # the key of a row that calls no API (the calculator, the workspace only)


def domain_of_row(catalog: Any) -> Callable[[Mapping[str, Any]], str]:
    """A row's key: the domain of the first tool it calls that reaches an API (not the calculator or the workspace);
    ``NO_DATA_CALL`` for a row that calls none, and a tool the catalog does not know counts as none."""
    def key(row: Mapping[str, Any]) -> str:
        for message in row.get("messages") or ():
            for call in message.get("tool_calls") or ():
                name = (call.get("function") or {}).get("name")
                spec = catalog.get(name) if name in catalog else None
                if spec is not None and spec.endpoint is not None:
                    return spec.domain
        return NO_DATA_CALL
    return key


def balanced_rows(rows: Sequence[Row], n: int, *, key: Callable[[Row], str], seed: int) -> list[Row]:
    """``n`` of ``rows`` (all of them if there are no more), taken one per domain in turn (domains in sorted order,
    each domain's rows in an order drawn from ``seed``); the same rows and seed give the same list.

    Raises:
        ValueError: ``n`` is below 1.
    """
    if n < 1:
        raise ValueError(f"balanced_rows: n must be at least 1, not {n}")
    groups: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        groups.setdefault(key(row), []).append(index)
    rng = random.Random(seed)
    queues = []
    for name in sorted(groups):
        indices = groups[name]
        rng.shuffle(indices)
        queues.append(indices)
    picked: list[int] = []
    while len(picked) < min(n, len(rows)):
        for queue in queues:
            if queue and len(picked) < n:
                picked.append(queue.pop(0))
    return [rows[i] for i in picked]
