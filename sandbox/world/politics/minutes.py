"""Meeting days and minutes metadata of terms 20-22 (ncwgseseafwbuheph, nzbyfwhwaoanttzje).

As on the portal, a minutes row is one agenda item of one meeting (SUB_NAME), so a meeting
appears once per item. Bills appear on the agenda of the committee meeting that took them up
(CMT_PRESENT_DT) and of the plenary sitting that decided them (PROC_DT); meetings with no bill
on them get routine items. CONFER_NUM numbers meetings in date order across all bodies.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..context import BuildContext
from .calendar import Sessions, day, iso_days, meeting_ordinals, sitting_days
from .facts import BILL_TERMS, COMMITTEE_BY_KEY, COMMITTEES, TERM_BY_AGE

PLENARY = "본회의"
PLENARY_VOD_CODE = "10"
FIRST_CONFER_NUM = 46001
RECORD = "https://record.assembly.go.kr/assembly/viewer/minutes"
ROUTINE = {"상임위원회": ("업무보고", "현안보고", "소위원회 구성의 건", "국정감사 계획서 채택의 건"),
           "특별위원회": ("예산안 및 기금운용계획안", "결산 및 예비비지출 승인의 건", "소위원회 구성의 건"),
           PLENARY: ("국무위원 출석요구의 건", "교섭단체대표연설", "대정부질문", "의원 사직의 건")}


def sitting_calendar(ctx: BuildContext) -> dict[tuple[int, str], np.ndarray]:
    """Meeting days per (term, committee key or 본회의); committees meet ~30 times a year."""
    out: dict[tuple[int, str], np.ndarray] = {}
    for age in BILL_TERMS:
        term = TERM_BY_AGE[age]
        first, last = day(term.start), day(term.end)
        years = (last - first) / 365.25
        for body, per_year in [(PLENARY, 40)] + [(c.key, 30) for c in COMMITTEES]:
            rng = ctx.rng(f"politics.sittings.{age}.{body}")
            out[(age, body)] = sitting_days(rng, first + 5, last, ctx.n(int(per_year * years), minimum=6))
    return out


def add_minutes_tables(ctx: BuildContext, sittings: dict[tuple[int, str], np.ndarray], bills: pa.Table) -> None:
    rng = ctx.rng("politics.minutes")
    bodies = sorted(sittings, key=lambda k: (k[0], k[1] != PLENARY, k[1]))
    body_age = np.concatenate([np.full(len(sittings[k]), k[0]) for k in bodies])
    body_key = np.concatenate([np.full(len(sittings[k]), k[1], dtype=object) for k in bodies])
    days = np.concatenate([sittings[k] for k in bodies])
    session = np.zeros(len(days), dtype=np.int64)
    for age in BILL_TERMS:
        m = body_age == age
        session[m] = Sessions(TERM_BY_AGE[age]).number(days[m])
    ordinal = meeting_ordinals(body_age * 1000 + np.unique(body_key, return_inverse=True)[1], session, days)
    confer = np.empty(len(days), dtype=np.int64)
    confer[np.lexsort((body_key.astype(str), days))] = FIRST_CONFER_NUM + np.arange(len(days))
    meeting_of = {(int(a), str(k), int(d)): i for i, (a, k, d) in enumerate(zip(body_age, body_key, days))}
    agenda = _agenda(bills, meeting_of)
    for i in range(len(days)):
        if i not in agenda:
            kind = PLENARY if body_key[i] == PLENARY else COMMITTEE_BY_KEY[body_key[i]].kind
            items = ROUTINE[kind]
            agenda[i] = list(rng.choice(items, size=int(rng.integers(1, 3)), replace=False))
    rows = [(i, item) for i in sorted(agenda) for item in agenda[i]]
    idx = np.array([i for i, _ in rows])
    kinds = Sessions.kind(days)
    committee = np.array([COMMITTEE_BY_KEY[k] if k != PLENARY else None for k in body_key], dtype=object)
    name = np.array([PLENARY if c is None else c.era(int(a))[0] for c, a in zip(committee, body_age)])
    code = np.array([None if c is None else c.era(int(a))[1] for c, a in zip(committee, body_age)], dtype=object)
    vod = np.array([PLENARY_VOD_CODE if c is None else f"{COMMITTEES.index(c) + 20}" for c in committee])
    title = [f"제{s}회 국회({k}) 제{o}차 {n}" for s, k, o, n in zip(session, kinds, ordinal, name)]
    class_name = [PLENARY if c is None else ("예산결산특별위원회" if c.key == "예결" else c.kind) for c in committee]
    meeting = {
        "CONFER_NUM": [str(x) for x in confer], "TITLE": title, "CLASS_NAME": class_name,
        "DAE_NUM": [str(a) for a in body_age], "COMM_NAME": name.tolist(), "VODCOMM_CODE": vod.tolist(),
        "CONF_DATE": iso_days(days),
        "VOD_LINK_URL": [f"http://w3.assembly.go.kr/jsp/vod/vod.do?cmd=vod&mc={v}&ct1={a}&ct2={s}&ct3={o:02d}"
                         for v, a, s, o in zip(vod, body_age, session, ordinal)],
        "CONF_LINK_URL": [f"{RECORD}/xml.do?id={x}&type=view" for x in confer],
        "PDF_LINK_URL": [f"{RECORD}/download/pdf.do?id={x}" for x in confer],
        "PDF_FILE_ID": [f"{x}_0001" for x in confer], "DEPT_CD": code.tolist(),
        "CONF_ID": [f"N{x - 1542:06d}" for x in confer],
    }
    take = pa.array(idx)
    cols = {k: pa.array(v).take(take) for k, v in meeting.items()}
    cols["SUB_NAME"] = pa.array([item for _, item in rows])
    cols["_ITEM"] = pa.array(np.concatenate([np.arange(len(agenda[i])) for i in sorted(agenda)]))
    plenary = np.array([body_key[i] == PLENARY for i in idx])
    specs = [("assembly_minutes_plenary", plenary, ("CONFER_NUM", "TITLE", "CLASS_NAME", "DAE_NUM", "CONF_DATE",
                                                    "SUB_NAME", "VOD_LINK_URL", "CONF_LINK_URL", "PDF_LINK_URL",
                                                    "CONF_ID", "_ITEM"),
              "열린국회정보 nzbyfwhwaoanttzje: plenary minutes, one row per agenda item"),
             ("assembly_minutes_committee", ~plenary, ("CONFER_NUM", "TITLE", "CLASS_NAME", "DAE_NUM", "COMM_NAME",
                                                       "VODCOMM_CODE", "CONF_DATE", "SUB_NAME", "VOD_LINK_URL",
                                                       "CONF_LINK_URL", "PDF_LINK_URL", "PDF_FILE_ID", "DEPT_CD",
                                                       "CONF_ID", "_ITEM"),
              "열린국회정보 ncwgseseafwbuheph: committee minutes, one row per agenda item")]
    for table, mask, columns, description in specs:
        keep = pa.array(mask)
        ctx.add_table(table, pa.table({c: cols[c].filter(keep) for c in columns}),
                      sort_by=("DAE_NUM", "CONF_DATE", "CONFER_NUM", "_ITEM"), key=("CONFER_NUM", "_ITEM"),
                      description=description)


def _agenda(bills: pa.Table, meeting_of: dict[tuple[int, str, int], int]) -> dict[int, list[str]]:
    """Bill agenda items per meeting: committee review (CMT_PRESENT_DT) and floor decision (PROC_DT)."""
    b = bills.select(["AGE", "_cmt", "BILL_NAME", "BILL_NO", "PROPOSER_KIND", "PROPOSER", "RST_PROPOSER",
                      "CMT_PRESENT_DT", "PROC_DT", "PROC_RESULT"]).to_pydict()
    agenda: dict[int, list[str]] = {}
    for k in range(len(b["AGE"])):
        who = {"의원": f"{b['RST_PROPOSER'][k]}의원 대표발의", "정부": "정부 제출"}.get(b["PROPOSER_KIND"][k],
                                                                                b["PROPOSER"][k])
        item = f"{b['BILL_NAME'][k]}({who})(의안번호 {b['BILL_NO'][k]})"
        age = int(b["AGE"][k])
        if b["CMT_PRESENT_DT"][k]:
            i = meeting_of.get((age, b["_cmt"][k], day(b["CMT_PRESENT_DT"][k])))
            if i is not None:
                agenda.setdefault(i, []).append(item)
        if b["PROC_DT"][k] and b["PROC_RESULT"][k] in ("원안가결", "수정가결", "부결"):
            i = meeting_of.get((age, PLENARY, day(b["PROC_DT"][k])))
            if i is not None:
                agenda.setdefault(i, []).append(item)
    return agenda
