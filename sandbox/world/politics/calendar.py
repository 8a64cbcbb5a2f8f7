"""Assembly calendar: sessions (회기) and the days plenary and committee meetings sit.

Dates are handled as int day numbers (days since 1970-01-01) so that whole columns of bill
dates can be shifted, compared and snapped to meeting days with numpy. A term starts a new
session each month, except that the regular session (정기회) runs from 1 September to
9 December; the first session number of each term is the real one (제415회 for the 22nd).
"""

from __future__ import annotations

import numpy as np

from .facts import Term

NONE = -1  # "no date" in int day columns
REGULAR_MONTHS = (9, 10, 11)  # months inside the 정기회 (it ends on 9 December)


def day(iso: str) -> int:
    return int(np.datetime64(iso, "D").astype(np.int64))


def iso_days(days: np.ndarray) -> list[str | None]:
    """Int day numbers to 'YYYY-MM-DD' strings (NONE → None)."""
    text = np.datetime_as_string(np.where(days == NONE, 0, days).astype("datetime64[D]"))
    return [None if d == NONE else t for d, t in zip(days.tolist(), text.tolist())]


class Sessions:
    """Session number and kind (정기회/임시회) of any day of one term."""

    def __init__(self, term: Term):
        self.first = term.first_session
        start, end = np.datetime64(term.start), np.datetime64(term.end)
        months = np.arange(np.datetime64(term.start[:7], "M") + 1, np.datetime64(term.end[:7], "M") + 1)
        month_no = months.astype(int) % 12 + 1
        starts = months[~np.isin(month_no, (10, 11, 12))].astype("datetime64[D]")
        dec10 = months[month_no == 12].astype("datetime64[D]") + 9
        bounds = np.sort(np.concatenate([[start], starts, dec10]))
        self.bounds = bounds[bounds <= end].astype(np.int64)

    def number(self, days: np.ndarray) -> np.ndarray:
        return self.first + np.searchsorted(self.bounds, days, side="right") - 1

    @staticmethod
    def kind(days: np.ndarray) -> np.ndarray:
        d = days.astype("datetime64[D]")
        month = d.astype("datetime64[M]").astype(int) % 12 + 1
        dom = (d - d.astype("datetime64[M]").astype("datetime64[D]")).astype(int) + 1
        regular = np.isin(month, REGULAR_MONTHS) | ((month == 12) & (dom <= 9))
        return np.where(regular, "정기회", "임시회")


def sitting_days(rng: np.random.Generator, first: int, last: int, n: int) -> np.ndarray:
    """``n`` distinct weekdays between ``first`` and ``last`` (int days), sorted."""
    days = np.arange(first, last + 1)
    weekdays = days[((days + 3) % 7) < 5]  # 1970-01-01 was a Thursday
    n = min(n, len(weekdays))
    return np.sort(rng.choice(weekdays, size=n, replace=False))


def next_sitting(days: np.ndarray, sittings: np.ndarray) -> np.ndarray:
    """The first sitting day on or after each day (NONE when there is none)."""
    pos = np.searchsorted(sittings, days, side="left")
    ok = (pos < len(sittings)) & (days != NONE)
    return np.where(ok, sittings[np.minimum(pos, len(sittings) - 1)], NONE)


def meeting_ordinals(keys: np.ndarray, sessions: np.ndarray, days: np.ndarray) -> np.ndarray:
    """제N차: the running number of each meeting within its (body, session), by day."""
    order = np.lexsort((days, sessions, keys))
    k, s = keys[order], sessions[order]
    new_group = np.ones(len(order), dtype=bool)
    new_group[1:] = (k[1:] != k[:-1]) | (s[1:] != s[:-1])
    group_start = np.maximum.accumulate(np.where(new_group, np.arange(len(order)), 0))
    ordinal = np.empty(len(order), dtype=np.int64)
    ordinal[order] = np.arange(len(order)) - group_start + 1
    return ordinal
