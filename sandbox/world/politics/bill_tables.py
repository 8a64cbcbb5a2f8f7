"""The bill table behind nzmimeepazxkubdpn, TVBPMBILL11 and ALLBILL.

One row per bill with the portal's field names; the services pick and rename columns. Member
bills carry their proposers: RST_PROPOSER / RST_MONA_CD (대표발의자) and comma-joined
PUBL_PROPOSER / PUBL_MONA_CD (공동발의자, mostly of the proposer's party).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..context import BuildContext
from .bills import Bills
from .calendar import NONE, Sessions, iso_days
from .facts import COMMITTEE_BY_KEY, TERM_BY_AGE
from .members import Roster

LIKMS = "http://likms.assembly.go.kr/bill"
KIND_NAMES = np.array(["의원", "위원장", "정부"])
_LETTERS = np.array(list("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
_DIGITS = np.array(list("0123456789"))


def bill_ids(rng: np.random.Generator, n: int) -> list[str]:
    """'PRC_' + 15 letter-digit pairs, as the portal's BILL_IDs look."""
    letters = _LETTERS[rng.integers(0, 26, size=(n, 15))]
    digits = _DIGITS[rng.integers(0, 10, size=(n, 15))]
    pairs = np.char.add(letters, digits)
    ids = ["PRC_" + "".join(row) for row in pairs]
    assert len(set(ids)) == n, "BILL_ID collision"
    return ids


def bill_table(ctx: BuildContext, roster: Roster, bills: Bills) -> pa.Table:
    rng = ctx.rng("politics.bill_table")
    c = bills.cols
    n = len(bills)
    ids = bill_ids(rng, n)
    proposers = _proposers(rng, roster, c)
    cmt_name = np.array([COMMITTEE_BY_KEY[k].era(a)[0] for k, a in zip(c["_cmt"].tolist(), c["AGE"].tolist())])
    cmt_code = np.array([COMMITTEE_BY_KEY[k].era(a)[1] for k, a in zip(c["_cmt"].tolist(), c["AGE"].tolist())])
    session = np.zeros(n, dtype=np.int64)
    for age in np.unique(c["AGE"]):
        m = c["AGE"] == age
        session[m] = Sessions(TERM_BY_AGE[int(age)]).number(c["PROPOSE_DT"][m])
    kind = c["_kind"]
    proposer = np.where(kind == 0, proposers["PROPOSER"], np.where(kind == 1, np.char.add(cmt_name, "위원장"), "정부"))
    passed = np.isin(c["PROC_RESULT"].astype(str), ("원안가결", "수정가결"))
    transfer = np.where(passed, c["PROC_DT"] + rng.integers(3, 12, n), NONE)
    promulgated = np.where(passed, transfer + rng.integers(7, 20, n), NONE)
    prom_no = np.where(passed, 19000 + np.cumsum(passed), 0)
    cols = {
        "BILL_ID": ids, "BILL_NO": [str(x) for x in c["BILL_NO"]], "AGE": [str(a) for a in c["AGE"]],
        "BILL_NAME": c["_law"].tolist(), "PROPOSER_KIND": KIND_NAMES[kind].tolist(), "PROPOSER": proposer.tolist(),
        "COMMITTEE": cmt_name.tolist(), "COMMITTEE_ID": cmt_code.tolist(),
        "PROPOSE_DT": iso_days(c["PROPOSE_DT"]), "COMMITTEE_DT": iso_days(c["COMMITTEE_DT"]),
        "CMT_PRESENT_DT": iso_days(c["CMT_PRESENT_DT"]), "CMT_PROC_DT": iso_days(c["CMT_PROC_DT"]),
        "CMT_PROC_RESULT_CD": c["CMT_PROC_RESULT_CD"].tolist(), "LAW_SUBMIT_DT": iso_days(c["LAW_SUBMIT_DT"]),
        "LAW_PRESENT_DT": iso_days(c["LAW_PRESENT_DT"]), "LAW_PROC_DT": iso_days(c["LAW_PROC_DT"]),
        "LAW_PROC_RESULT_CD": c["LAW_PROC_RESULT_CD"].tolist(), "PROC_DT": iso_days(c["PROC_DT"]),
        "PROC_RESULT": c["PROC_RESULT"].tolist(),
        "DETAIL_LINK": [f"{LIKMS}/billDetail.do?billId={b}" for b in ids],
        "MEMBER_LIST": [f"{LIKMS}/coactorListPopup.do?billId={b}" for b in ids],
        "RST_PROPOSER": proposers["RST_PROPOSER"], "PUBL_PROPOSER": proposers["PUBL_PROPOSER"],
        "RST_MONA_CD": proposers["RST_MONA_CD"], "PUBL_MONA_CD": proposers["PUBL_MONA_CD"],
        "ERACO": [f"제{a}대" for a in c["AGE"]], "BILL_KND": ["법률안"] * n,
        "PPSL_SESS": [f"제{s}회" for s in session], "GVRN_TRSF_DT": iso_days(transfer),
        "PROM_DT": iso_days(promulgated), "PROM_NO": [f"제{x}호" if x else None for x in prom_no.tolist()],
        "_cmt": c["_cmt"].tolist(), "_rst_seat": np.where(kind == 0, c["_rst_seat"], -1),
    }
    return pa.table(cols)


def _proposers(rng: np.random.Generator, roster: Roster, c: dict[str, np.ndarray]) -> dict[str, list]:
    """대표발의자 and 9+ co-sponsors per member bill, mostly from the proposer's party."""
    n = len(c["AGE"])
    n_co = np.clip(9 + rng.poisson(3.5, n), 9, 40)
    same_party = rng.random((n, 40)) < 0.75
    pick = rng.integers(0, 1 << 30, size=(n, 40))
    pools: dict[tuple[int, str], list[int]] = {}
    term_seats: dict[int, list[int]] = {}
    for i, s in enumerate(roster.seats):
        pools.setdefault((s.age, s.party.name), []).append(i)
        term_seats.setdefault(s.age, []).append(i)
    out: dict[str, list] = {k: [] for k in ("PROPOSER", "RST_PROPOSER", "PUBL_PROPOSER", "RST_MONA_CD",
                                            "PUBL_MONA_CD")}
    kinds, rsts, ages = c["_kind"].tolist(), c["_rst_seat"].tolist(), c["AGE"].tolist()
    for b in range(n):
        if kinds[b] != 0:
            for k in out:
                out[k].append(None)
            continue
        rst = roster.seats[rsts[b]]
        own, every = pools[(ages[b], rst.party.name)], term_seats[ages[b]]
        chosen: dict[int, None] = {}
        for j in range(40):
            pool = own if same_party[b, j] else every
            p = roster.seats[pool[pick[b, j] % len(pool)]].person
            if p != rst.person:
                chosen[p] = None
            if len(chosen) == n_co[b]:
                break
        co = list(chosen)
        name = roster.persons[rst.person].name
        out["PROPOSER"].append(f"{name}의원 등 {len(co) + 1}인")
        out["RST_PROPOSER"].append(name)
        out["PUBL_PROPOSER"].append(",".join(roster.persons[p].name for p in co))
        out["RST_MONA_CD"].append(roster.mona[rst.person])
        out["PUBL_MONA_CD"].append(",".join(roster.mona[p] for p in co))
    return out
