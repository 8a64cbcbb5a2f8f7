"""Bills of terms 20-22 and how far each got: committee, 법사위, plenary, result.

Member bills (의원 발의) make up most of each term: a 대표발의자 of that term, 9+ co-sponsors
(mostly of the same party) and a real law of the committee that has jurisdiction, usually the
proposer's own committee. Committee chairs propose the alternatives (대안) that absorb member
bills (대안반영폐기) and the government proposes some bills too. Each bill walks a timeline
of real stages whose dates sit on the days its committee or the plenary actually meets; what
would happen after the term's end becomes 임기만료폐기, and in the running 22nd term what
would happen after TODAY is still pending (PROC_RESULT null).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..context import BuildContext
from .calendar import NONE, day, next_sitting
from .facts import COMMITTEE_BY_KEY, LAWS, SPECIAL_TOPICS, TERM_BY_AGE
from .members import Roster

# Full-scale volumes per term: (member bills, committee alternatives, government bills).
VOLUMES = {20: (21_600, 1_300, 1_100), 21: (23_600, 1_400, 830), 22: (10_400, 520, 300)}
KINDS = ("의원", "위원장", "정부")
# Where a bill ends if nothing runs out first (term end / TODAY), per proposer kind.
OUTCOMES = ("원안가결", "수정가결", "부결", "대안반영폐기", "수정안반영폐기", "폐기", "철회", "임기만료폐기")
OUTCOME_P = {"의원": (0.045, 0.04, 0.001, 0.27, 0.01, 0.01, 0.025, 0.599),
             "위원장": (0.95, 0.05, 0, 0, 0, 0, 0, 0),
             "정부": (0.15, 0.2, 0.002, 0.33, 0.01, 0.01, 0.02, 0.278)}
PASSED = ("원안가결", "수정가결", "부결")  # decided by a plenary vote
LAW_KEYS = tuple(LAWS)


@dataclass
class Bills:
    """Column arrays of all bills (one entry per bill); dates are int days or NONE."""

    cols: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.cols["AGE"])


def build_bills(ctx: BuildContext, roster: Roster, sittings: dict[tuple[int, str], np.ndarray]) -> Bills:
    """Bills of every bill term; ``sittings[(age, committee key or "본회의")]`` are meeting days."""
    parts = [_term_bills(ctx, roster, sittings, age) for age in VOLUMES]
    cols = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    return Bills(cols)


def _term_bills(ctx: BuildContext, roster: Roster, sittings, age: int) -> dict[str, np.ndarray]:
    rng = ctx.rng(f"politics.bills.{age}")
    term = TERM_BY_AGE[age]
    first, last = day(term.start), day(term.end)
    counts = [ctx.n(v, minimum=5) for v in VOLUMES[age]]
    kind = np.repeat(np.arange(3), counts)
    n = len(kind)
    seat_ids = np.array(roster.term_seats(age))
    seat_start = np.array([day(roster.seats[i].start) for i in seat_ids])
    seat_end = np.array([day(roster.seats[i].end) for i in seat_ids])
    # Bills come in faster late in a term; the first weeks are quiet.
    propose = first + 14 + (rng.beta(1.3, 1.0, n) * (last - first - 30)).astype(np.int64)
    rst = _pick_active(rng, seat_start, seat_end, propose)
    primary = np.array([roster.seats[i].committee for i in seat_ids])[rst]
    weights = np.array([COMMITTEE_BY_KEY[k].limit for k in LAW_KEYS], dtype=float)
    random_key = np.array(LAW_KEYS)[rng.choice(len(LAW_KEYS), size=n, p=weights / weights.sum())]
    own = (rng.random(n) < 0.55) & np.isin(primary, LAW_KEYS)
    cmt = np.where(own, primary, random_key)
    plenary = sittings[(age, "본회의")]
    chair = kind == 1
    # A committee alternative is proposed on a day its committee meets.
    for key in LAW_KEYS:
        m = chair & (cmt == key)
        propose[m] = next_sitting(propose[m], sittings[(age, key)])
    propose = np.where(propose == NONE, last, propose)
    outcome = _draw_outcomes(rng, kind)
    dates = _timeline(rng, age, kind, cmt, propose, outcome, sittings, plenary)
    order = np.lexsort((rng.random(n), propose))
    cols = {"AGE": np.full(n, age), "_kind": kind, "_cmt": cmt, "_rst_seat": seat_ids[rst],
            "PROPOSE_DT": propose, "_outcome": outcome, **dates}
    cols = {k: v[order] for k, v in cols.items()}
    cols["BILL_NO"] = age * 100000 + 1 + np.arange(n)
    cols["_law"] = _law_names(rng, cols["_cmt"], cols["_kind"])
    return cols


def _draw_outcomes(rng: np.random.Generator, kind: np.ndarray) -> np.ndarray:
    out = np.empty(len(kind), dtype=object)
    for k, name in enumerate(KINDS):
        m = kind == k
        out[m] = np.array(OUTCOMES)[rng.choice(len(OUTCOMES), size=int(m.sum()), p=OUTCOME_P[name])]
    return out.astype(str)


def _pick_active(rng: np.random.Generator, start: np.ndarray, end: np.ndarray, on: np.ndarray) -> np.ndarray:
    """For each day, a seat (index into the term's seats) whose holder sat on that day."""
    activity = rng.lognormal(0, 0.8, len(start))
    p = activity / activity.sum()
    pick = rng.choice(len(start), size=len(on), p=p)
    for _ in range(6):
        bad = (start[pick] > on) | (end[pick] < on)
        if not bad.any():
            break
        pick[bad] = rng.choice(len(start), size=int(bad.sum()), p=p)
    return pick


def _timeline(rng: np.random.Generator, age: int, kind: np.ndarray, cmt: np.ndarray, propose: np.ndarray,
              outcome: np.ndarray, sittings, plenary: np.ndarray) -> dict[str, np.ndarray]:
    n = len(kind)
    last = day(TERM_BY_AGE[age].end)
    chair = kind == 1

    def snap(days: np.ndarray) -> np.ndarray:
        out = days.copy()
        for key in LAW_KEYS:
            m = cmt == key
            out[m] = next_sitting(days[m], sittings[(age, key)])
        return out

    referred = np.where(chair, NONE, propose + rng.integers(1, 8, n))
    reviewed = ~np.isin(outcome, ("철회",)) & ~chair & ((outcome != "임기만료폐기") | (rng.random(n) < 0.4))
    present = np.where(reviewed, snap(referred + rng.gamma(2.0, 70, n).astype(np.int64)), NONE)
    decided = ~np.isin(outcome, ("철회", "임기만료폐기")) & ~chair
    cmt_proc = np.where(decided & (present != NONE), snap(present + rng.gamma(1.2, 40, n).astype(np.int64)), NONE)
    to_plenary = np.isin(outcome, PASSED)
    law_from = np.where(chair, propose, cmt_proc)
    law_submit = np.where(to_plenary & (law_from != NONE), law_from + rng.integers(1, 6, n), NONE)
    law_present = np.where(law_submit != NONE, next_sitting(law_submit + rng.integers(3, 30, n),
                                                             sittings[(age, "법사")]), NONE)
    law_proc = np.where(law_present != NONE, next_sitting(law_present + rng.integers(0, 8, n),
                                                          sittings[(age, "법사")]), NONE)
    proc = np.where(law_proc != NONE, next_sitting(law_proc + 1, plenary), NONE)
    proc = np.where(np.isin(outcome, ("대안반영폐기", "수정안반영폐기", "폐기")), cmt_proc, proc)
    proc = np.where(outcome == "철회", propose + rng.integers(1, 120, n), proc)
    # A stage that would fall after the term (or after TODAY) never happened; a bill whose
    # decision never came lapses with the term (or, in the running term, is still pending).
    for stage in (referred, present, cmt_proc, law_submit, law_present, law_proc):
        stage[stage > last] = NONE
    lapsed = (proc == NONE) | (proc > last)
    running = age == 22
    result = np.where(lapsed, None if running else "임기만료폐기", outcome).astype(object)
    proc = np.where(lapsed, NONE if running else last, proc)
    amended = np.where(outcome == "수정가결", "수정가결", "원안가결")
    cmt_result = np.where(cmt_proc == NONE, None, np.where(np.isin(outcome, PASSED), amended, outcome))
    law_result = np.where(law_proc == NONE, None, amended)
    return {"COMMITTEE_DT": referred, "CMT_PRESENT_DT": present, "CMT_PROC_DT": cmt_proc,
            "CMT_PROC_RESULT_CD": cmt_result, "LAW_SUBMIT_DT": law_submit, "LAW_PRESENT_DT": law_present,
            "LAW_PROC_DT": law_proc, "LAW_PROC_RESULT_CD": law_result, "PROC_DT": proc, "PROC_RESULT": result}


def _law_names(rng: np.random.Generator, cmt: np.ndarray, kind: np.ndarray) -> np.ndarray:
    """BILL_NAME of each bill: amendments of real laws, a few whole revisions and special acts."""
    n = len(cmt)
    form = rng.choice(3, size=n, p=[0.92, 0.02, 0.06])
    pick = rng.integers(0, 1 << 30, n)
    out = np.empty(n, dtype=object)
    for i in range(n):
        key = str(cmt[i])
        topics = SPECIAL_TOPICS.get(key)
        if form[i] == 2 and topics and kind[i] != 1:
            out[i] = f"{topics[pick[i] % len(topics)]}에 관한 특별법안"
        else:
            laws = LAWS[key]
            law = laws[pick[i] % len(laws)]
            out[i] = f"{law} {'전부' if form[i] == 1 else '일부'}개정법률안" + ("(대안)" if kind[i] == 1 else "")
    return out
