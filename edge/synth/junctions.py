"""Junction typing by cardinality (paper §3.3) and the DRV operators, as pure functions over records.

    junction_type(1) is SEQ, junction_type(3) is FAN, junction_type(6) is DRV      # φ = FAN_BUDGET = 5
    derive(records, "max", field="trafficAmout")            # the one record with the largest value
    derive(records, "ge", field="gasolinePrice", pivot=1700) # every record at or above the pivot
    derive(records, "latest", field="PPSL_DT")              # the one record with the latest date
    pivots(records, "ge", field="gasolinePrice", bound="stdRestCd")   # pivots keeping ≤ φ bound values

Every operator keeps the records' order and breaks ties stably: ``max``/``min`` (``latest``/``earliest``) take the
first record that
holds the extreme value, ``most_frequent`` the value that appears first among the most frequent ones. A
record whose field is missing or unreadable (a number field holding text) is never selected.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .item import FAN_BUDGET, JunctionType

__all__ = ["DATE_OPERATORS", "EXTREMES", "NUMERIC_OPERATORS", "OPERATORS", "as_date", "as_number", "derive",
           "distinct_values", "junction_type", "pivots"]

Record = Mapping[str, Any]
NUMERIC_OPERATORS = ("max", "min", "ge", "le")
DATE_OPERATORS = ("date_after", "latest", "earliest")
OPERATORS = ("max", "min", "ge", "le", "eq", "date_after", "latest", "earliest", "most_frequent")
_NUMBER = re.compile(r"^[+-]?\d+(\.\d+)?$")
# a date, with a time of day after it or not ('20230605100000', '2023-06-05 10:00'): the day is what a user says
_DATE = re.compile(r"^(\d{4})[-./]?(\d{2})[-./]?(\d{2})(?:[ T]?\d{2}:?\d{2}(?::?\d{2})?)?$")


def junction_type(n: int, phi: int = FAN_BUDGET) -> JunctionType:
    """SEQ for n = 1, FAN for 2 ≤ n ≤ φ, DRV for n > φ (n: distinct values crossing the junction)."""
    if n < 1:
        raise ValueError(f"a junction carries at least one value, got n={n}")
    if n == 1:
        return JunctionType.SEQ
    return JunctionType.FAN if n <= phi else JunctionType.DRV


def as_number(value: Any) -> float | None:
    """A record's value as a number ("1,690" → 1690.0), or None when it is not one as a whole."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).replace(",", "").strip()
    return float(text) if _NUMBER.match(text) else None


def as_date(value: Any) -> str | None:
    """A date value as YYYYMMDD (from YYYYMMDD, YYYY-MM-DD or YYYY.MM.DD, a time of day after it dropped), or None;
    None too for a number that only looks like one (a month past 12, a day past 31)."""
    match = _DATE.match(str(value).strip()) if value is not None else None
    if not match or not (1 <= int(match.group(2)) <= 12 and 1 <= int(match.group(3)) <= 31):
        return None
    return "".join(match.groups())


# operator → (how a record's value is read, which end is kept): the operators that keep one record
EXTREMES: dict[str, tuple[Callable[[Any], Any], Callable[..., Any]]] = {
    "max": (as_number, max), "min": (as_number, min), "latest": (as_date, max), "earliest": (as_date, min)}


def _text(value: Any) -> str | None:
    return None if value is None or str(value).strip() == "" else str(value).strip()


def distinct_values(records: Sequence[Record], field: str) -> list[str]:
    """The field's distinct non-empty values as text, in order of first appearance."""
    return list(dict.fromkeys(v for r in records if (v := _text(r.get(field))) is not None))


def derive(records: Sequence[Record], operator: str, *, field: str, pivot: Any = None) -> list[Record]:
    """The records the DRV ``operator`` selects on ``field`` (in record order; see the module for ties).

    Raises:
        ValueError: an unknown operator, or a threshold/equality/date operator without a pivot.
    """
    if operator not in OPERATORS:
        raise ValueError(f"unknown DRV operator {operator!r}; known: {', '.join(OPERATORS)}")
    if operator in ("ge", "le", "eq", "date_after") and pivot is None:
        raise ValueError(f"DRV operator {operator!r} needs a pivot")
    if operator in EXTREMES:
        read, pick = EXTREMES[operator]
        scored = [(v, r) for r in records if (v := read(r.get(field))) is not None]
        if not scored:
            return []
        best = pick(v for v, _ in scored)
        return [next(r for v, r in scored if v == best)]
    if operator in ("ge", "le"):
        limit = as_number(pivot)
        if limit is None:
            raise ValueError(f"pivot {pivot!r} of {operator!r} is not a number")
        keep = (lambda n: n >= limit) if operator == "ge" else (lambda n: n <= limit)
        return [r for r in records if (n := as_number(r.get(field))) is not None and keep(n)]
    if operator == "eq":
        return [r for r in records if _text(r.get(field)) == _text(pivot)]
    if operator == "date_after":
        after = as_date(pivot)
        if after is None:
            raise ValueError(f"pivot {pivot!r} of 'date_after' is not a date")
        return [r for r in records if (d := as_date(r.get(field))) is not None and d > after]
    counts = Counter(v for r in records if (v := _text(r.get(field))) is not None)
    if not counts:
        return []
    top = max(counts.values())
    winner = next(v for v in distinct_values(records, field) if counts[v] == top)  # earliest of the tied
    return [r for r in records if _text(r.get(field)) == winner]


def pivots(records: Sequence[Record], operator: str, *, field: str, bound: str, phi: int = FAN_BUDGET,
           least: int = 1) -> list[Any]:
    """Observed values of ``field`` that, as the pivot of ``operator``, leave ``least``..φ distinct ``bound`` values.

    In a fixed order (numbers ascending, dates ascending, text by first appearance), so a seeded choice
    among them is reproducible. Empty for the operators that take no pivot.

    One pass over the records, not one ``derive`` per candidate: a threshold's selection only grows as the pivot
    moves away from the extreme, so the candidates are swept from there until more than φ values are selected.
    """
    if operator == "eq":
        groups: dict[str, set[str]] = {}
        for r in records:
            if (value := _text(r.get(field))) is not None:
                chosen = groups.setdefault(value, set())
                if (b := _text(r.get(bound))) is not None:
                    chosen.add(b)
        return [v for v, chosen in groups.items() if max(least, 1) <= len(chosen) <= phi]
    if operator in ("ge", "le"):
        read: Any = as_number
    elif operator == "date_after":
        read = as_date
    else:
        return []
    by_key: dict[Any, set[str]] = {}
    for r in records:
        if (key := read(r.get(field))) is not None:
            chosen = by_key.setdefault(key, set())
            if (b := _text(r.get(bound))) is not None:
                chosen.add(b)
    # sweep from the extreme the operator selects first: ge and date_after from the top, le from the bottom
    sweep = sorted(by_key, reverse=operator != "le")
    selected: set[str] = set()
    good = []
    for key in sweep:
        if operator != "date_after":  # ge/le include the pivot's own records; date_after is strictly after
            selected |= by_key[key]
        if len(selected) > phi:
            break
        if selected and len(selected) >= least:
            good.append(key)
        if operator == "date_after":
            selected |= by_key[key]
    good.sort()
    return [int(k) if isinstance(k, float) and k.is_integer() else k for k in good]
