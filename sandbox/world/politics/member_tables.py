"""Member and committee tables of the Assembly portal, drawn from the roster.

- ``assembly_member`` (nwvrqwxyaytdsfvhu): the sitting 22nd-term members, one row each.
- ``assembly_member_history`` (ALLNAMEMBER): every person of terms 17-22, one row each, with
  per-term values slash-joined in term order (PLPT_NM "한나라당/새누리당") as the portal does.
- ``assembly_committee`` (nxrvzonlafugpqjuh) and ``assembly_committee_member``
  (nktulghcadyhmiqxi): the 22nd term's committees and rosters.
"""

from __future__ import annotations

import numpy as np

from ..context import BuildContext
from .facts import (
    CMT_DIV_CD,
    COMMITTEE_BY_KEY,
    COMMITTEES,
    NEGOTIATING_GROUP_MIN,
    PRIOR_PARTY,
)
from .members import Roster, Seat
from .people import english_name, hanja_name, office_details

CURRENT_AGE = 22
ROLE_ORDER = {"위원장": 0, "간사": 1, "위원": 2}


def reelection(n: int) -> str:
    return {1: "초선", 2: "재선"}.get(n, f"{n}선")


def units(roster: Roster, person: int, up_to: int) -> list[int]:
    """Terms served up to ``up_to``: earlier terms (before the 17th) first, then the world's."""
    p = roster.persons[person]
    first_age = min(roster.seats[i].age for i in p.seats)
    served = sorted({roster.seats[i].age for i in p.seats if roster.seats[i].age <= up_to})
    return list(range(first_age - p.prior, first_age)) + served


def committee_names(seat: Seat) -> list[str]:
    return [COMMITTEE_BY_KEY[k].era(seat.age)[0] for k in [seat.committee, *seat.extra]]


def add_member_tables(ctx: BuildContext, roster: Roster) -> None:
    current = [i for i in roster.term_seats(CURRENT_AGE) if roster.seats[i].current]
    current.sort(key=lambda i: (roster.persons[roster.seats[i].person].name, roster.mona[roster.seats[i].person]))
    office = office_details(ctx.rng("politics.office"), [roster.persons[roster.seats[i].person].name
                                                         for i in current])
    rows: dict[str, list] = {k: [] for k in (
        "HG_NM", "HJ_NM", "ENG_NM", "BTH_GBN_NM", "BTH_DATE", "JOB_RES_NM", "POLY_NM", "ORIG_NM", "ELECT_GBN_NM",
        "CMIT_NM", "CMITS", "REELE_GBN_NM", "UNITS", "SEX_GBN_NM")}
    for i in current:
        s = roster.seats[i]
        p = roster.persons[s.person]
        served = units(roster, s.person, CURRENT_AGE)
        names = committee_names(s)
        values = (p.name, hanja_name(p.name), english_name(p.name), "음" if p.lunar else "양", p.birth,
                  s.roles.get(s.committee, "위원"), s.party.name, s.orig, s.elect, names[0], ", ".join(names),
                  reelection(len(served)), ", ".join(f"제{a}대" for a in served), "여" if p.female else "남")
        for k, v in zip(rows, values):
            rows[k].append(v)
    rows.update(office)
    rows["MONA_CD"] = [roster.mona[roster.seats[i].person] for i in current]
    order = ["HG_NM", "HJ_NM", "ENG_NM", "BTH_GBN_NM", "BTH_DATE", "JOB_RES_NM", "POLY_NM", "ORIG_NM",
             "ELECT_GBN_NM", "CMIT_NM", "CMITS", "REELE_GBN_NM", "UNITS", "SEX_GBN_NM", "TEL_NO", "E_MAIL",
             "HOMEPAGE", "STAFF", "SECRETARY", "SECRETARY2", "MONA_CD", "MEM_TITLE", "ASSEM_ADDR"]
    members = {k: rows[k] for k in order}
    ctx.add_table("assembly_member", members, sort_by=("HG_NM", "MONA_CD"), key=("MONA_CD",),
                  description="열린국회정보 nwvrqwxyaytdsfvhu: sitting members of the 22nd National Assembly")
    _add_history(ctx, roster, {roster.seats[i].person: (k, i) for k, i in enumerate(current)}, members)
    _add_committees(ctx, roster, current, members)


def _add_history(ctx: BuildContext, roster: Roster, current: dict[int, tuple[int, int]],
                 members: dict[str, list]) -> None:
    rows: dict[str, list] = {k: [] for k in (
        "NAAS_CD", "NAAS_NM", "NAAS_CH_NM", "NAAS_EN_NM", "BIRDY_DIV_CD", "BIRDY_DT", "DTY_NM", "PLPT_NM",
        "ELECD_NM", "ELECD_DIV_NM", "CMIT_NM", "BLNG_CMIT_NM", "RLCT_DIV_NM", "GTELT_ERACO", "NTR_DIV",
        "NAAS_TEL_NO", "NAAS_EMAIL_ADDR", "NAAS_HP_URL", "AIDE_NM", "CHF_SCRT_NM", "SCRT_NM", "BRF_HST",
        "OFFM_RNUM_NO", "NAAS_PIC")}
    for pid, p in enumerate(roster.persons):
        by_age = {roster.seats[i].age: roster.seats[i] for i in p.seats}  # a replaced seat's holder keeps it
        served = units(roster, pid, 99)
        first = by_age[min(by_age)]
        parties = [by_age[a].party.name if a in by_age else PRIOR_PARTY[(first.party.lineage, a)] for a in served]
        districts = [(by_age.get(a) or first).orig for a in served]
        kinds = [(by_age.get(a) or first).elect for a in served]
        latest = by_age[max(by_age)]
        k = current.get(pid, (None, None))[0]
        now = (lambda col: members[col][k]) if k is not None else (lambda col: None)
        values = (roster.mona[pid], p.name, hanja_name(p.name), english_name(p.name), "음" if p.lunar else "양",
                  p.birth, now("JOB_RES_NM") if k is not None and now("JOB_RES_NM") != "위원" else None,
                  "/".join(parties), "/".join(districts), "/".join(kinds), now("CMIT_NM"),
                  ", ".join(committee_names(latest)), reelection(len(served)),
                  ", ".join(f"제{a}대" for a in served), "여" if p.female else "남", now("TEL_NO"), now("E_MAIL"),
                  now("HOMEPAGE"), now("STAFF"), now("SECRETARY"), now("SECRETARY2"), now("MEM_TITLE"),
                  now("ASSEM_ADDR"), f"https://www.assembly.go.kr/static/portal/img/openassm/{roster.mona[pid]}.jpg")
        for col, v in zip(rows, values):
            rows[col].append(v)
    ctx.add_table("assembly_member_history", rows, sort_by=("NAAS_NM", "NAAS_CD"), key=("NAAS_CD",),
                  description="열린국회정보 ALLNAMEMBER: every lawmaker of terms 17-22 with per-term history")


def _add_committees(ctx: BuildContext, roster: Roster, current: list[int], members: dict[str, list]) -> None:
    counts: dict[str, int] = {}
    for i in current:
        counts[roster.seats[i].party.name] = counts.get(roster.seats[i].party.name, 0) + 1
    groups = {name for name, n in counts.items() if n >= NEGOTIATING_GROUP_MIN and name != "무소속"}
    position = {i: k for k, i in enumerate(current)}
    cmt: dict[str, list] = {k: [] for k in ("CMT_DIV_CD", "CMT_DIV_NM", "HR_DEPT_CD", "COMMITTEE_NAME", "HG_NM",
                                            "HG_NM_LIST", "LIMIT_CNT", "CURR_CNT", "POLY99_CNT", "POLY_CNT")}
    roster_rows: dict[str, list] = {k: [] for k in (
        "DEPT_CD", "DEPT_NM", "JOB_RES_NM", "HG_NM", "ORIG_NM", "POLY_NM", "ASSEM_TEL", "ASSEM_EMAIL", "HJ_NM",
        "ROOM_NO", "STAFF", "SECRETARY", "SECRETARY2", "MONA_CD", "_ROLE_ORDER")}
    for c in COMMITTEES:
        name, code = c.era(CURRENT_AGE)
        seated = [i for i in current if c.key in (roster.seats[i].committee, *roster.seats[i].extra)]
        role = {i: roster.seats[i].roles.get(c.key, "위원") for i in seated}
        label = {i: f"{members['HG_NM'][position[i]]} ({roster.seats[i].party.name})" for i in seated}
        in_group = sum(roster.seats[i].party.name in groups for i in seated)
        values = (CMT_DIV_CD[c.kind], c.kind, code, name,
                  next((label[i] for i in seated if role[i] == "위원장"), None),
                  ",".join(label[i] for i in seated if role[i] == "간사") or None,
                  c.limit, len(seated), len(seated) - in_group, in_group)
        for col, v in zip(cmt, values):
            cmt[col].append(v)
        for i in seated:
            k = position[i]
            row = (code, name, role[i], members["HG_NM"][k], members["ORIG_NM"][k], members["POLY_NM"][k],
                   members["TEL_NO"][k], members["E_MAIL"][k], members["HJ_NM"][k],
                   members["ASSEM_ADDR"][k].removeprefix("의원회관 "), members["STAFF"][k],
                   members["SECRETARY"][k], members["SECRETARY2"][k], members["MONA_CD"][k], ROLE_ORDER[role[i]])
            for col, v in zip(roster_rows, row):
                roster_rows[col].append(v)
    ctx.add_table("assembly_committee", cmt, sort_by=("HR_DEPT_CD",), key=("HR_DEPT_CD",),
                  description="열린국회정보 nxrvzonlafugpqjuh: committees of the 22nd term with chairs and sizes")
    ctx.add_table("assembly_committee_member", {k: np.array(v) if k == "_ROLE_ORDER" else v
                                                for k, v in roster_rows.items()},
                  sort_by=("DEPT_CD", "_ROLE_ORDER", "HG_NM"), key=("DEPT_CD", "MONA_CD"),
                  description="열린국회정보 nktulghcadyhmiqxi: committee rosters of the 22nd term")
