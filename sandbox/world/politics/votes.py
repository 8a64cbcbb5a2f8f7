"""Plenary roll-call votes of the 22nd term (nojepdqqaweusdfbi, ncocpgfiaoituanbr).

Every 22nd-term bill decided on the floor (원안가결/수정가결/부결) gets one vote row per member
seated that day. Most bills pass by consensus; some split along party lines, with the
opposition voting 반대 or staying away; rejected bills have a majority of 반대. The totals
table is counted from the member rows, so both services always agree.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..context import BuildContext
from .calendar import Sessions, day, meeting_ordinals
from .facts import TERM_BY_AGE, district_names
from .members import Roster
from .people import hanja_name

AGE = 22
CHOICES = np.array(["찬성", "반대", "기권", "불참"])
OPPOSITION = "cons"  # lineage of the 22nd term's opposition


def add_vote_tables(ctx: BuildContext, roster: Roster, bills: pa.Table, plenary_days: np.ndarray) -> None:
    rng = ctx.rng("politics.votes")
    voted = bills.filter(pa.compute.and_(pa.compute.equal(bills["AGE"], str(AGE)), pa.compute.is_in(
        bills["PROC_RESULT"], pa.array(["원안가결", "수정가결", "부결"]))))
    b = voted.to_pydict()
    n_bills = voted.num_rows
    seats = sorted(roster.term_seats(AGE), key=lambda i: (roster.persons[roster.seats[i].person].name, i))
    start = np.array([day(roster.seats[i].start) for i in seats])
    end = np.array([day(roster.seats[i].end) for i in seats])
    when = np.array([day(d) for d in b["PROC_DT"]], dtype=np.int64)
    seated = (start[None, :] <= when[:, None]) & (when[:, None] <= end[None, :])
    choice = _choices(rng, np.array(b["PROC_RESULT"]), seats, roster, n_bills)
    choice[~seated] = -1
    bill_idx, seat_idx = np.nonzero(seated)
    result = choice[bill_idx, seat_idx]

    sessions = Sessions(TERM_BY_AGE[AGE])
    ordinal = dict(zip(plenary_days.tolist(), meeting_ordinals(
        np.zeros(len(plenary_days), dtype=np.int64), sessions.number(plenary_days), plenary_days).tolist()))
    clock = rng.integers(14 * 3600, 21 * 3600, n_bills)
    vote_date = [f"{d.replace('-', '')} {t // 3600:02d}{t // 60 % 60:02d}{t % 60:02d}"
                 for d, t in zip(b["PROC_DT"], clock.tolist())]
    orig_cd = {name: f"{300000 + k}" for k, (_, name) in enumerate(district_names())}
    per_bill = {
        "VOTE_DATE": vote_date, "BILL_NO": b["BILL_NO"], "BILL_NAME": b["BILL_NAME"], "BILL_ID": b["BILL_ID"],
        "LAW_TITLE": [law_title(name) for name in b["BILL_NAME"]], "CURR_COMMITTEE": b["COMMITTEE"],
        "CURR_COMMITTEE_ID": b["COMMITTEE_ID"],
        "DEPT_CD": b["COMMITTEE_ID"], "BILL_URL": b["DETAIL_LINK"], "BILL_NAME_URL": b["DETAIL_LINK"],
        "SESSION_CD": sessions.number(when).tolist(), "CURRENTS_CD": [ordinal.get(d, 1) for d in when.tolist()],
    }
    per_seat = {
        "HG_NM": [roster.persons[roster.seats[i].person].name for i in seats],
        "HJ_NM": [hanja_name(roster.persons[roster.seats[i].person].name) for i in seats],
        "POLY_NM": [roster.seats[i].party.name for i in seats],
        "ORIG_NM": [roster.seats[i].orig for i in seats],
        "MEMBER_NO": [str(k + 1) for k in range(len(seats))],
        "POLY_CD": [roster.seats[i].party.code for i in seats],
        "ORIG_CD": [orig_cd.get(roster.seats[i].orig, "399999") for i in seats],
        "MONA_CD": [roster.mona[roster.seats[i].person] for i in seats],
    }
    take_b, take_s = pa.array(bill_idx), pa.array(seat_idx)
    disp = np.concatenate([np.arange(1, k + 1) for k in seated.sum(axis=1)]) if n_bills else np.array([], int)
    order = ["HG_NM", "HJ_NM", "POLY_NM", "ORIG_NM", "MEMBER_NO", "POLY_CD", "ORIG_CD", "VOTE_DATE", "BILL_NO",
             "BILL_NAME", "BILL_ID", "LAW_TITLE", "CURR_COMMITTEE", "RESULT_VOTE_MOD", "DEPT_CD",
             "CURR_COMMITTEE_ID", "DISP_ORDER", "BILL_URL", "BILL_NAME_URL", "SESSION_CD", "CURRENTS_CD", "AGE",
             "MONA_CD"]
    cols = {k: pa.array(v).take(take_b) for k, v in per_bill.items()}
    cols |= {k: pa.array(v).take(take_s) for k, v in per_seat.items()}
    cols["RESULT_VOTE_MOD"] = pa.array(CHOICES[result])
    cols["DISP_ORDER"] = pa.array(disp)
    cols["AGE"] = pa.array([str(AGE)] * len(result))
    ctx.add_table("assembly_vote_member", pa.table({k: cols[k] for k in order}),
                  sort_by=("AGE", "BILL_ID", "DISP_ORDER"), key=("BILL_ID", "MONA_CD"),
                  description="열린국회정보 nojepdqqaweusdfbi: each member's plenary vote on 22nd-term bills")

    counts = np.stack([(choice == k).sum(axis=1) for k in range(3)], axis=1)
    ctx.add_table("assembly_vote", {
        "BILL_ID": b["BILL_ID"], "PROC_DT": b["PROC_DT"], "BILL_NO": b["BILL_NO"], "BILL_NAME": b["BILL_NAME"],
        "CURR_COMMITTEE": b["COMMITTEE"], "CURR_COMMITTEE_ID": b["COMMITTEE_ID"],
        "PROC_RESULT_CD": b["PROC_RESULT"], "BILL_KIND_CD": ["법률안"] * n_bills, "AGE": b["AGE"],
        "MEMBER_TCNT": seated.sum(axis=1), "VOTE_TCNT": counts.sum(axis=1), "YES_TCNT": counts[:, 0],
        "NO_TCNT": counts[:, 1], "BLANK_TCNT": counts[:, 2], "LINK_URL": b["DETAIL_LINK"],
    }, sort_by=("AGE", "BILL_NO"), indexes=(("BILL_ID",),), key=("BILL_ID",),
        description="열린국회정보 ncocpgfiaoituanbr: plenary vote totals per 22nd-term bill")


def law_title(bill_name: str) -> str:
    """The law a bill is about: "국회법 일부개정법률안" → "국회법", "○○ 특별법안" → "○○ 특별법"."""
    for suffix in (" 일부개정법률안", " 전부개정법률안"):
        if suffix in bill_name:
            return bill_name.split(suffix)[0]
    return bill_name.removesuffix("안")


def _choices(rng: np.random.Generator, result: np.ndarray, seats: list[int], roster: Roster,
             n_bills: int) -> np.ndarray:
    """Vote choice index per (bill, seat): 0 찬성, 1 반대, 2 기권, 3 불참."""
    opposition = np.array([roster.seats[i].party.lineage == OPPOSITION for i in seats])
    u = rng.random((n_bills, len(seats)))
    split = (rng.random(n_bills) < 0.15)[:, None] & opposition[None, :]
    rejected = (result == "부결")[:, None]
    # Cumulative thresholds for 찬성, 반대, 기권 (the rest is 불참).
    yes = np.where(rejected, 0.25, np.where(split, 0.05, 0.85))
    no = yes + np.where(rejected, 0.55, np.where(split, 0.35, 0.01))
    blank = no + np.where(rejected, 0.08, np.where(split, 0.08, 0.03))
    return np.select([u < yes, u < no, u < blank], [0, 1, 2], default=3)
