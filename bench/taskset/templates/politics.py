"""KOPA-Bench templates: politics (열린국회정보: members, bills, votes, committees, minutes)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from ..draft import Draft, DraftError
from ..registry import template
from ..values import number

AGE = "22"  # the current (22nd) National Assembly
PASSED = ("원안가결", "수정가결")
SPONSOR = re.compile(r"\(([가-힣]+)의원 대표발의\)")
SPONSOR_NAME = re.compile(r"^([가-힣]+)의원 등 \d+인$")  # a member bill's PROPOSER: '김아영의원 등 18인'


# ------------------------------------------------------------------------------------ helpers

async def _explore_all(t: Draft, tool: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    """Every record of a result, read while looking around (not golden)."""
    records: list[dict[str, Any]] = []
    page = 1
    while True:
        result = await t.explore(tool, args, page=page, size=1000)
        records += result.records
        if not result.records or len(records) >= (result.total_count or 0):
            return records
        page += 1


def _unique_top(counter: Counter) -> Any:
    """The most frequent key when no other key ties it, else None."""
    ranked = counter.most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


async def _eval(t: Draft, expression: str, step: int) -> float:
    """A golden evaluate_expression call; the task's number is what it returns."""
    result = await t.call("evaluate_expression", {"expression": expression}, step=step, compare=())
    return float(result.records[0]["value"])


def _date_ko(date: str) -> str:
    y, m, d = date.split("-")
    return f"{y}년 {int(m)}월 {int(d)}일"


def _chair_name(committee: dict[str, Any]) -> str:
    """'차건미 (더불어민주당)' → '차건미'."""
    return str(committee["HG_NM"]).split("(")[0].strip()


async def _voted_bills(t: Draft) -> list[dict[str, Any]]:
    """The 22nd Assembly's plenary votes, newest first (explored)."""
    return await _explore_all(t, "get_bill_vote_results", {"AGE": AGE})


async def _bill_lookup_ok(t: Draft, name: str, date: str) -> bool:
    """True when searching the bill by its name and decision date finds exactly one bill of that name."""
    found = await t.explore("search_all_bills", {"AGE": AGE, "BILL_NAME": name, "PROC_DT": date}, size=1000)
    return sum(r["BILL_NAME"] == name for r in found.records) == 1


async def _find_bill(t: Draft, name: str, date: str, step: int) -> dict[str, Any]:
    """Golden: the bill of ``name`` decided on ``date`` (its BILL_ID feeds the vote tools)."""
    found = await t.call("search_all_bills", {"AGE": AGE, "BILL_NAME": name, "PROC_DT": date}, step=step,
                         compare=("AGE", "BILL_NAME"), size=1000)
    exact = [r for r in found.records if r["BILL_NAME"] == name]
    if len(exact) != 1:
        raise DraftError(f"{t.task_id}: {name} on {date} is not one bill")
    return exact[0]


def _ratio(yes: Any, total: Any) -> str:
    return f"{int(number(yes))}/{int(number(total))}*100"


# ------------------------------------------------------------------------- paging templates

@template("politics", count=3)
async def committee_top_sponsor(t: Draft) -> None:
    """21st-term member bills of a committee (2-3 pages) → the most prolific sponsor (code) → their history
    or their whole 21st-term output → a party name or a share (evaluate_expression)."""
    pool = await _large_committees(t, "21")
    for offset in range(len(pool)):
        committee = t.pick(pool, offset=offset)
        bills = await _explore_all(t, "search_member_sponsored_bills", {"AGE": "21", "COMMITTEE": committee})
        top = _unique_top(Counter((b["RST_MONA_CD"], b["RST_PROPOSER"]) for b in bills))
        if top is not None:
            break
    else:
        raise DraftError(f"{t.task_id}: no committee with one top sponsor")
    bills, step = await t.call_all_pages("search_member_sponsored_bills", {"AGE": "21", "COMMITTEE": committee},
                                         step=0)
    code, name = _unique_top(Counter((b["RST_MONA_CD"], b["RST_PROPOSER"]) for b in bills))
    mine = sum(b["RST_MONA_CD"] == code for b in bills)
    if t.variant % 2 == 1:
        hist = (await t.call("get_all_assembly_member_history", {"NAAS_CD": code}, step=step)).records[0]
        eras = [e.strip() for e in str(hist["GTELT_ERACO"]).split(",")]
        parties = str(hist["PLPT_NM"]).split("/")
        if len(eras) != len(parties) or "제21대" not in eras:
            raise DraftError(f"{t.task_id}: history of {code} does not line up")
        t.ask(f"21대 국회 때 {committee} 소관 법률안을 가장 많이 대표발의한 의원은 당시 어느 정당 소속이었나요?")
        t.answer_string(parties[eras.index("제21대")])
        return
    own = [b for b in await _explore_all(t, "search_member_sponsored_bills", {"AGE": "21", "PROPOSER": name})
           if b["RST_MONA_CD"] == code]
    if len(own) > 1000:
        raise DraftError(f"{t.task_id}: {name} pages")
    result = await t.call("search_member_sponsored_bills", {"AGE": "21", "PROPOSER": name}, step=step, size=1000)
    total = sum(b["RST_MONA_CD"] == code for b in result.records)
    value = await _eval(t, f"{mine}/{total}*100", step + 1)
    if t.variant == 0:
        t.ask(f"제21대 국회에서 {committee} 소관으로 법률안을 가장 많이 대표발의한 의원이 있죠. 그 의원이 21대에 "
              "대표발의한 법률안 전체 중에서 이 위원회 소관 법안이 차지하는 비율은 몇 %인가요?")
    else:
        t.ask(f"21대 국회 {committee}에 걸린 의원 발의 법안을 제일 많이 낸 대표발의자를 찾아서, 그 사람이 21대에 낸 "
              "대표발의 법안 가운데 이 위원회 몫이 몇 퍼센트였는지 알려 주세요.")
    t.answer_number(value)


async def _large_committees(t: Draft, age: str) -> list[str]:
    """Standing committees whose member bills in term ``age`` fill more than one page (but not too many)."""
    committees = await t.explore("list_assembly_committees", {"CMT_DIV_NM": "상임위원회"}, size=100)
    pool = []
    for c in sorted(r["COMMITTEE_NAME"] for r in committees.records):
        head = await t.explore("search_member_sponsored_bills", {"AGE": age, "COMMITTEE": c}, size=1)
        if 1000 < (head.total_count or 0) <= 3000:
            pool.append(c)
    return pool


@template("politics", count=2)
async def committee_first_bill(t: Draft) -> None:
    """A committee's 21st-term member bills (newest first, 2-3 pages) → the earliest one, on the last page →
    its sponsor's code → the sponsor's history (constituency then) → who holds that seat now, or the sponsor's
    21st-term pass rate."""
    pool = await _large_committees(t, "21")
    for offset in range(1, len(pool) + 1):
        committee = t.pick(pool, offset=offset)
        if t.variant % 2 == 1 or await _seat_holder(t, committee) is not None:
            break
    else:
        raise DraftError(f"{t.task_id}: no committee whose first sponsor's seat has one member now")
    bills, step = await t.call_all_pages("search_member_sponsored_bills", {"AGE": "21", "COMMITTEE": committee},
                                         step=0)
    first = min(bills, key=lambda b: b["BILL_NO"])
    code, name = first["RST_MONA_CD"], first["RST_PROPOSER"]
    if t.variant % 2 == 0:
        hist = (await t.call("get_all_assembly_member_history", {"NAAS_CD": code}, step=step)).records[0]
        district = _district_in(hist, "제21대")
        if district is None:
            raise DraftError(f"{t.task_id}: history of {code} does not line up")
        now = (await t.call("get_national_assembly_members", {"ORIG_NM": district}, step=step + 1)).records
        if [m["ORIG_NM"] for m in now] != [district]:
            raise DraftError(f"{t.task_id}: {district} is not one seat now")
        t.ask(f"21대 국회가 시작되고 {committee} 소관으로 의원이 가장 먼저 대표발의한 법률안(의안번호가 제일 빠른 것)을 "
              "낸 의원이 21대 때 당선된 선거구는, 지금은 어느 의원이 대표하고 있나요?")
        t.answer_string(now[0]["HG_NM"])
        return
    own = await _sponsored(t, "21", name, code, step=step)
    value = await _eval(t, f"{sum(b['PROC_RESULT'] in PASSED for b in own)}/{len(own)}*100", step + 1)
    t.ask(f"제21대 국회 {committee} 소관 의원 발의 법안 중 의안번호가 가장 앞선 법안의 대표발의자는, 21대에 "
          "대표발의한 법률안 가운데 몇 %를 본회의에서 가결(원안·수정)시켰나요?")
    t.answer_number(value)


def _district_in(history: dict[str, Any], era: str) -> str | None:
    """The constituency a member history record gives for ``era`` ('제21대'), or None when it does not line up."""
    eras = [e.strip() for e in str(history["GTELT_ERACO"]).split(",")]
    districts = str(history["ELECD_NM"]).split("/")
    if len(eras) != len(districts) or era not in eras:
        return None
    return districts[eras.index(era)]


async def _seat_holder(t: Draft, committee: str) -> str | None:
    """The member who now holds the seat that the sponsor of ``committee``'s first 21st-term member bill won in the
    21st term, when that seat's name finds exactly one current member (explored)."""
    bills = await _explore_all(t, "search_member_sponsored_bills", {"AGE": "21", "COMMITTEE": committee})
    first = min(bills, key=lambda b: b["BILL_NO"])
    hist = await t.explore("get_all_assembly_member_history", {"NAAS_CD": first["RST_MONA_CD"]})
    district = _district_in(hist.records[0], "제21대") if hist.records else None
    if district is None:
        return None
    now = await t.explore("get_national_assembly_members", {"ORIG_NM": district})
    return now.records[0]["HG_NM"] if [m["ORIG_NM"] for m in now.records] == [district] else None


@template("politics", count=1)
async def cosponsor_share_in_committee(t: Draft) -> None:
    """Member name → member code, beside a committee's 21st-term member bills (2+ pages) → the share of them
    the member co-sponsored (by code, in the co-sponsor code lists) → evaluate_expression."""
    hist = await _explore_all(t, "get_all_assembly_member_history", {"GTELT_ERACO": "제21대"})
    names = Counter(h["NAAS_NM"] for h in await _explore_all(t, "get_all_assembly_member_history", {}))
    members = {h["NAAS_CD"]: h for h in hist if names[h["NAAS_NM"]] == 1 and h.get("BLNG_CMIT_NM")}
    for offset in range(len(members)):
        member = members[t.pick(members, offset=offset)]
        committee = str(member["BLNG_CMIT_NM"]).split(",")[0].strip()
        head = await t.explore("search_member_sponsored_bills", {"AGE": "21", "COMMITTEE": committee}, size=1)
        if 1000 < (head.total_count or 0) <= 3000:
            break
    else:
        raise DraftError(f"{t.task_id}: no member on a large committee")
    name = member["NAAS_NM"]
    found = await t.call("get_all_assembly_member_history", {"NAAS_NM": name}, step=0)
    code = found.records[0]["NAAS_CD"]
    bills, step = await t.call_all_pages("search_member_sponsored_bills", {"AGE": "21", "COMMITTEE": committee},
                                         step=0)
    co = sum(code in str(b.get("PUBL_MONA_CD") or "").split(",") for b in bills)
    if co == 0:
        raise DraftError(f"{t.task_id}: {name} co-sponsored nothing in {committee}")
    value = await _eval(t, f"{co}/{len(bills)}*100", step)
    if t.variant % 2 == 0:
        t.ask(f"21대 국회에서 {committee} 소관으로 의원이 대표발의한 법률안 가운데 {name} 의원이 공동발의자로 이름을 "
              "올린 법안은 몇 %인가요?")
    else:
        t.ask(f"{name} 의원은 21대 때 {committee} 소관 의원 발의 법안 중 몇 퍼센트에 공동발의자로 참여했나요?")
    t.answer_number(value)


@template("politics", count=2)
async def result_top_committee_chair(t: Draft) -> None:
    """Bills of one plenary outcome in a term (2-3 pages) → the committee with the most → its current chair →
    the chair's constituency, or the chair's 22nd-term bills → their pass rate (evaluate_expression)."""
    options = [("22", "대안반영폐기"), ("21", "원안가결")]
    age, outcome = options[t.variant % len(options)]
    bills, step = await t.call_all_pages("search_all_bills", {"AGE": age, "PROC_RESULT_CD": outcome}, step=0)
    committee = _unique_top(Counter(b["CURR_COMMITTEE"] for b in bills if b.get("CURR_COMMITTEE")))
    if committee is None:
        raise DraftError(f"{t.task_id}: tie for the top committee")
    row = (await t.call("list_assembly_committees", {"COMMITTEE_NAME": committee}, step=step)).records[0]
    chair = _chair_name(row)
    if outcome == "원안가결":
        code = (await t.explore("get_national_assembly_members", {"HG_NM": chair})).records[0]["MONA_CD"]
        own = await _sponsored(t, AGE, chair, code, step=step + 1)
        home = sum(b["COMMITTEE"] == committee for b in own)
        if home == 0:
            raise DraftError(f"{t.task_id}: the chair sponsored nothing for their own committee")
        value = await _eval(t, f"{home}/{len(own)}*100", step + 2)
        t.ask("제21대 국회 때 본회의에서 원안 그대로 가결된 의안이 제일 많았던 소관위원회를 찾아 주세요. 그 위원회의 "
              "지금 위원장이 22대 국회에서 대표발의한 법률안 가운데 자기가 위원장인 그 위원회 소관 법안은 몇 %인가요?")
        t.answer_number(value)
        return
    found = await t.call("get_national_assembly_members", {"HG_NM": chair}, step=step + 1)
    if len(found.records) != 1:
        raise DraftError(f"{t.task_id}: chair {chair} is not one member")
    if outcome == "대안반영폐기":
        t.ask("22대 국회에서 위원회 대안에 흡수되면서 대안반영폐기된 의안이 가장 많은 소관위원회가 어디인지 보고, 그 "
              "위원회 현 위원장의 선거구를 알려 주세요.")
    else:
        t.ask("제21대 국회 때 본회의에서 원안 그대로 가결된 의안이 제일 많았던 소관위원회의 지금 위원장은 어느 "
              "선거구 의원인가요?")
    t.answer_string(found.records[0]["ORIG_NM"])


@template("politics", count=2)
async def plenary_government_share(t: Draft) -> None:
    """A year of plenary agenda items (2 pages) → the share of government bills (evaluate_expression); the
    second instance compares two years read in parallel."""
    def share(items: list[dict[str, Any]]) -> tuple[int, int]:
        return sum("정부 제출" in str(r.get("SUB_NAME")) for r in items), len(items)

    if t.variant % 2 == 0:
        dae, year = "21", "2023"
        items, step = await t.call_all_pages("search_plenary_minutes", {"DAE_NUM": dae, "CONF_DATE": year}, step=0)
        value = await _eval(t, _ratio(*share(items)), step)
        t.ask(f"제{dae}대 국회가 {year}년 한 해 동안 연 본회의 안건 가운데 정부가 제출한 안건은 몇 %였나요?")
        t.answer_number(value)
        return
    dae, years = "20", ("2018", "2019")
    shares, steps = [], []
    for year in years:
        items, step = await t.call_all_pages("search_plenary_minutes", {"DAE_NUM": dae, "CONF_DATE": year}, step=0)
        shares.append(share(items))
        steps.append(step)
    hi, lo = sorted(shares, key=lambda s: s[0] / s[1], reverse=True)
    value = await _eval(t, f"{_ratio(*hi)} - {_ratio(*lo)}", max(steps))
    t.ask(f"20대 국회 본회의 안건 중 정부가 제출한 안건 비율을 {years[0]}년과 {years[1]}년으로 나눠 보면, 비율이 더 "
          "높았던 해는 다른 해보다 몇 %포인트 높았나요?")
    t.answer_number(value)


# --------------------------------------------------------------------------- vote templates

async def _votable(t: Draft, bills: list[dict[str, Any]], want: int, *, offset: int = 0,
                   key: Any = None) -> list[dict[str, Any]]:
    """``want`` of ``bills`` (distinct per instance) whose name and decision date find exactly one bill."""
    names = Counter((b["BILL_NAME"], b["PROC_DT"]) for b in bills)
    pool = {b["BILL_ID"]: b for b in bills if names[(b["BILL_NAME"], b["PROC_DT"])] == 1}
    chosen: list[dict[str, Any]] = []
    for i in range(len(pool)):
        bill = pool[t.pick(pool, offset=offset + i)]
        if key is not None and not key(bill, chosen):
            continue
        if await _bill_lookup_ok(t, bill["BILL_NAME"], bill["PROC_DT"]):
            chosen.append(bill)
            if len(chosen) == want:
                return chosen
    raise DraftError(f"{t.task_id}: not enough bills to ask about")


@template("politics", count=1)
async def bill_vote_compare(t: Draft) -> None:
    """Six bill names (one plenary day) → their ids, in parallel → each bill's vote tally, in parallel → the gap
    between the highest and lowest yes share (evaluate_expression): the longest chain of calls in the set."""
    votes = await _voted_bills(t)
    by_day = Counter(v["PROC_DT"] for v in votes)
    want = 6 if t.variant == 0 else 2
    days = sorted(d for d, n in by_day.items() if n >= max(8, 2 * want))
    day = t.pick(days)

    def distinct(bill: dict[str, Any], chosen: list[dict[str, Any]]) -> bool:
        share = number(bill["YES_TCNT"]) / number(bill["VOTE_TCNT"])
        return all(abs(share - number(c["YES_TCNT"]) / number(c["VOTE_TCNT"])) > 0.005 for c in chosen)

    bills = await _votable(t, [v for v in votes if v["PROC_DT"] == day], want, key=distinct)
    found = [await _find_bill(t, b["BILL_NAME"], day, 0) for b in bills]
    tallies = []
    for bill in found:
        result = await t.call("get_bill_vote_results", {"AGE": AGE, "BILL_ID": bill["BILL_ID"]}, step=1)
        tallies.append(result.records[0])
    ranked = sorted(tallies, key=lambda r: number(r["YES_TCNT"]) / number(r["VOTE_TCNT"]))
    hi, lo = ranked[-1], ranked[0]
    value = await _eval(t, f"{_ratio(hi['YES_TCNT'], hi['VOTE_TCNT'])} - {_ratio(lo['YES_TCNT'], lo['VOTE_TCNT'])}", 2)
    names = ", ".join(f"'{b['BILL_NAME']}'" for b in bills)
    if want == 2:  # a second instance
        t.ask(f"{_date_ko(day)} 본회의에서 표결한 {names} 중 투표한 의원 대비 찬성 비율이 더 높은 법안은 다른 법안보다 "
              "몇 %포인트 높았나요?")
    else:
        t.ask(f"{_date_ko(day)} 본회의에서 {names} 여섯 법안이 표결됐는데요, 투표 참여 의원 대비 찬성률이 가장 높은 "
              "법안과 가장 낮은 법안의 차이는 몇 %포인트인가요?")
    t.answer_number(value)
    t.tags += ["fan-out", "long-chain"]


@template("politics", count=1)
async def party_vote_share(t: Draft) -> None:
    """A contested bill (name + date) → its id and sponsor's name → the sponsor's member record (party) beside the
    bill's tally, in parallel → the member votes of the sponsor's party → how far that party's yes share is from
    the whole assembly's (evaluate_expression)."""
    votes = await _voted_bills(t)
    members = Counter(m["HG_NM"] for m in await _current_members(t))
    contested = [v for v in votes if number(v["NO_TCNT"]) >= 30]
    for offset in range(len(contested)):
        bill = (await _votable(t, contested, 1, offset=offset))[0]
        found = await t.explore("search_all_bills", {"AGE": AGE, "BILL_NAME": bill["BILL_NAME"],
                                                     "PROC_DT": bill["PROC_DT"]}, size=1000)
        row = next(r for r in found.records if r["BILL_NAME"] == bill["BILL_NAME"])
        sponsor = SPONSOR_NAME.match(str(row["PROPOSER"]))
        if row["PROPOSER_KIND"] != "의원" or sponsor is None or members[sponsor.group(1)] != 1:
            continue
        member = await t.explore("get_national_assembly_members", {"HG_NM": sponsor.group(1)})
        if len(member.records) != 1:
            continue
        party = member.records[0]["POLY_NM"]
        mine = await t.explore("get_member_votes_on_bill", {"AGE": AGE, "BILL_ID": row["BILL_ID"], "POLY_NM": party},
                               size=1000)
        if len(mine.records) >= 5:
            break
    else:
        raise DraftError(f"{t.task_id}: no contested member bill to ask about")
    found = await _find_bill(t, bill["BILL_NAME"], bill["PROC_DT"], 0)
    name = SPONSOR_NAME.match(str(found["PROPOSER"])).group(1)
    record = (await t.call("get_national_assembly_members", {"HG_NM": name}, step=1)).records[0]
    tally = (await t.call("get_bill_vote_results", {"AGE": AGE, "BILL_ID": found["BILL_ID"]}, step=1)).records[0]
    party = record["POLY_NM"]
    rows = (await t.call("get_member_votes_on_bill", {"AGE": AGE, "BILL_ID": found["BILL_ID"], "POLY_NM": party},
                         step=2, size=1000)).records
    yes = sum(r["RESULT_VOTE_MOD"] == "찬성" for r in rows)
    value = await _eval(t, f"{_ratio(yes, len(rows))} - {_ratio(tally['YES_TCNT'], tally['MEMBER_TCNT'])}", 3)
    t.ask(f"{_date_ko(bill['PROC_DT'])} 본회의에서 표결한 '{bill['BILL_NAME']}'을 대표발의한 의원이 속한 정당을 찾아, "
          "그 정당 의원들의 찬성 비율(불참까지 포함한 그 당 의원 전체 기준)이 재적의원 대비 전체 찬성 비율보다 몇 "
          "%포인트 높은지 알려 주세요. 낮으면 음수로요.")
    t.answer_number(value)


@template("politics", count=2)
async def watchlist_vote_dissenters(t: Draft) -> None:
    """ENVIRONMENT: a bill (name + date) → its id → the members who voted no (or abstained) → each added to
    the watchlist the query names."""
    votes = await _voted_bills(t)
    mode, field, list_name = (("반대", "NO_TCNT", "반대표 의원") if t.variant == 0
                              else ("기권", "BLANK_TCNT", "기권 의원 체크"))
    low, high = (5, 7) if t.variant == 0 else (3, 5)
    few = [v for v in votes if low <= number(v[field]) <= high]
    bill = (await _votable(t, few, 1))[0]
    found = await _find_bill(t, bill["BILL_NAME"], bill["PROC_DT"], 0)
    rows = (await t.call("get_member_votes_on_bill",
                         {"AGE": AGE, "BILL_ID": found["BILL_ID"], "RESULT_VOTE_MOD": mode}, step=1, size=1000)).records
    names = sorted({r["HG_NM"] for r in rows})
    if len(names) != len(rows):
        raise DraftError(f"{t.task_id}: two {mode} voters share a name")
    for name in names:
        await t.call("add_to_watchlist", {"list_name": list_name, "item": name}, step=2)
    if t.variant == 0:
        t.ask(f"{_date_ko(bill['PROC_DT'])} 본회의에서 표결한 '{bill['BILL_NAME']}'에 반대표를 던진 의원들을 "
              f"'{list_name}' 관심목록에 이름으로 넣어 주세요. 메모는 필요 없어요.")
    else:
        t.ask(f"'{bill['BILL_NAME']}' 표결({_date_ko(bill['PROC_DT'])} 본회의)에서 기권한 의원이 누구누구인지 찾아서 "
              f"한 명씩 '{list_name}' 관심목록에 이름만 추가해 줘.")
    t.state_only()


# ------------------------------------------------------------------------- member templates

def _eras(units: str) -> list[str]:
    """'제20대, 제21대, 제22대' → ['20', '21', '22']."""
    return re.findall(r"제(\d+)대", units)


async def _current_members(t: Draft) -> list[dict[str, Any]]:
    return await _explore_all(t, "get_national_assembly_members", {})


async def _sponsored(t: Draft, age: str, name: str, code: str, *, step: int | None = None) -> list[dict[str, Any]]:
    """The bills ``name`` (member ``code``) sponsored in term ``age``: golden at ``step``, else explored. The
    name search is a partial match, so a golden call must find only this member's bills."""
    args = {"AGE": age, "PROPOSER": name}
    if step is None:
        return await _explore_all(t, "search_member_sponsored_bills", args)
    records, _ = await t.call_all_pages("search_member_sponsored_bills", args, step=step)
    if any(r["RST_MONA_CD"] != code for r in records):
        raise DraftError(f"{t.task_id}: the search for {name} finds another member's bills")
    return records


async def _clean_sponsor(t: Draft, age: str, name: str, code: str) -> bool:
    bills = await _sponsored(t, age, name, code)
    return bool(bills) and all(b["RST_MONA_CD"] == code for b in bills)


@template("politics", count=2)
async def member_career_passed(t: Draft) -> None:
    """Member name → the terms they served (member record) → their sponsored bills in each term, in
    parallel → how many passed (evaluate_expression), or the committee most of them went to → its chair → the
    chair's constituency (member record)."""
    members = await _current_members(t)
    everyone = Counter(h["NAAS_NM"] for h in await _explore_all(t, "get_all_assembly_member_history", {}))
    want = "제20대, 제21대, 제22대"
    pool = {m["MONA_CD"]: m for m in members if m["UNITS"] == want and everyone[m["HG_NM"]] == 1}
    for offset in range(len(pool)):
        member = pool[t.pick(pool, offset=offset)]
        ages = _eras(member["UNITS"])
        if all([await _clean_sponsor(t, a, member["HG_NM"], member["MONA_CD"]) for a in ages]):
            break
    else:
        raise DraftError(f"{t.task_id}: no member to ask about")
    name, code = member["HG_NM"], member["MONA_CD"]
    found = (await t.call("get_national_assembly_members", {"HG_NM": name}, step=0)).records[0]
    per_age = [await _sponsored(t, a, name, code, step=1) for a in _eras(found["UNITS"])]
    if t.variant == 0:
        counts = [sum(b["PROC_RESULT"] in PASSED for b in bills) for bills in per_age]
        value = await _eval(t, " + ".join(map(str, counts)), 2)
        t.ask(f"{name} 의원이 국회의원으로 일한 모든 대수를 통틀어 대표발의한 법률안 가운데 본회의에서 원안이나 "
              "수정안으로 가결된 건 모두 몇 건인가요?")
        t.answer_number(value)
        return
    committee = _unique_top(Counter(b["COMMITTEE"] for bills in per_age for b in bills if b.get("COMMITTEE")))
    if committee is None:
        raise DraftError(f"{t.task_id}: tie for {name}'s committee")
    row = (await t.call("list_assembly_committees", {"COMMITTEE_NAME": committee}, step=2)).records[0]
    chair = (await t.call("get_national_assembly_members", {"HG_NM": _chair_name(row)}, step=3)).records
    if len(chair) != 1:
        raise DraftError(f"{t.task_id}: chair {_chair_name(row)} is not one member")
    t.ask(f"{name} 의원이 지금까지 국회의원으로 재임한 전 기간에 대표발의한 법률안이 가장 많이 회부된 소관위원회를 "
          "찾아서, 그 위원회 현재 위원장의 선거구를 알려 주세요.")
    t.answer_string(chair[0]["ORIG_NM"])


@template("politics", count=1)
async def district_rivals(t: Draft) -> None:
    """Neighbouring constituencies (갑/을/병) → their members, in parallel → each one's 22nd-term sponsored
    bills, in parallel → the gap between the most and the fewest (evaluate_expression), or who passed more."""
    members = await _current_members(t)
    by_district = {m["ORIG_NM"]: m for m in members if m["ELECT_GBN_NM"] == "지역구"}
    suffixes = "갑을병" if t.variant == 0 else "갑을"
    groups = sorted({tuple(d[:-1] + x for x in suffixes) for d in by_district if d.endswith(tuple(suffixes))})
    groups = [g for g in groups if all(d in by_district for d in g)]
    everyone = Counter(m["HG_NM"] for m in members)
    for offset in range(len(groups)):
        group = t.pick(groups, offset=offset)
        chosen = [by_district[d] for d in group]
        if any(everyone[m["HG_NM"]] > 1 for m in chosen):
            continue
        if not all([await _clean_sponsor(t, AGE, m["HG_NM"], m["MONA_CD"]) for m in chosen]):
            continue
        bills = [await _sponsored(t, AGE, m["HG_NM"], m["MONA_CD"]) for m in chosen]
        totals = sorted(len(b) for b in bills)
        passed = sorted(sum(x["PROC_RESULT"] in PASSED for x in b) for b in bills)
        if (t.variant == 0 and totals[0] != totals[-1]) or (t.variant == 1 and passed[-1] != passed[-2]):
            break
    else:
        raise DraftError(f"{t.task_id}: no districts to compare")
    found = [(await t.call("get_national_assembly_members", {"ORIG_NM": d}, step=0)).records[0] for d in group]
    bills = [await _sponsored(t, AGE, m["HG_NM"], m["MONA_CD"], step=1) for m in found]
    if t.variant == 0:
        totals = [len(b) for b in bills]
        value = await _eval(t, f"{max(totals)} - {min(totals)}", 2)
        city = group[0][:-1]
        t.ask(f"{city}갑·을·병 세 지역구 의원이 22대 국회에서 대표발의한 법률안 수를 비교하면, 가장 많은 의원과 가장 "
              "적은 의원은 몇 건 차이가 나나요?")
        t.answer_number(value)
    else:
        passed = [sum(x["PROC_RESULT"] in PASSED for x in b) for b in bills]
        winner = found[passed.index(max(passed))]["HG_NM"]
        t.ask(f"{group[0]} 의원과 {group[1]} 의원 중 22대 국회에서 대표발의한 법안이 본회의를 통과(원안·수정가결)한 "
              "건수가 더 많은 사람은 누구인가요?")
        t.answer_string(winner)


@template("politics", count=2)
async def committee_party_sponsors(t: Draft) -> None:
    """Committee + party → that party's members on the committee → each one's 22nd-term sponsored bills, in
    parallel (fan-out) → the most prolific one → their constituency, or their average (evaluate_expression)."""
    roster = await _explore_all(t, "list_committee_members", {})
    groups = Counter((r["DEPT_NM"], r["POLY_NM"]) for r in roster)
    everyone = Counter(m["HG_NM"] for m in await _current_members(t))
    low, high = (5, 7) if t.variant == 0 else (8, 10)
    pool = sorted(k for k, n in groups.items() if low <= n <= high)
    for offset in range(len(pool)):
        committee, party = t.pick(pool, offset=offset)
        rows = [r for r in roster if (r["DEPT_NM"], r["POLY_NM"]) == (committee, party)]
        if any(everyone[r["HG_NM"]] > 1 for r in rows):
            continue
        if not all([await _clean_sponsor(t, AGE, r["HG_NM"], r["MONA_CD"]) for r in rows]):
            continue
        counts = Counter({r["HG_NM"]: len(await _sponsored(t, AGE, r["HG_NM"], r["MONA_CD"])) for r in rows})
        if t.variant == 1 or _unique_top(counts) is not None:
            break
    else:
        raise DraftError(f"{t.task_id}: no committee party group to ask about")
    rows = (await t.call("list_committee_members", {"DEPT_NM": committee, "POLY_NM": party}, step=0,
                         size=1000)).records
    counts = Counter()
    for r in sorted(rows, key=lambda r: r["HG_NM"]):
        counts[r["HG_NM"]] = len(await _sponsored(t, AGE, r["HG_NM"], r["MONA_CD"], step=1))
    if t.variant == 0:
        top = (await t.call("get_national_assembly_members", {"HG_NM": _unique_top(counts)}, step=2)).records
        if len(top) != 1:
            raise DraftError(f"{t.task_id}: {_unique_top(counts)} is not one member")
        t.ask(f"{committee}에 있는 {party} 소속 위원들 가운데 22대 국회에서 법률안을 가장 많이 대표발의한 사람은 "
              "어느 선거구 의원인가요?")
        t.answer_string(top[0]["ORIG_NM"])
        return
    value = await _eval(t, f"({' + '.join(str(counts[n]) for n in sorted(counts))})/{len(counts)}", 2)
    t.ask(f"{committee} {party} 위원들은 22대 국회에서 1인당 평균 몇 건의 법률안을 대표발의했나요?")
    t.answer_number(value)


# ---------------------------------------------------------------------- committee templates

@template("politics", count=1)
async def committee_meeting_own_members(t: Draft) -> None:
    """A member's name → the committee they are secretary (간사) of, by code → its roster in parallel with its
    agenda on one day → the share of the day's member bills its own members sponsored (evaluate_expression)."""
    roster_all = await _explore_all(t, "list_committee_members", {})
    everyone = Counter(r["HG_NM"] for r in roster_all)
    secretaries = {r["HG_NM"]: r for r in roster_all if r["JOB_RES_NM"] == "간사" and everyone[r["HG_NM"]] == 1}
    for offset in range(len(secretaries)):
        secretary = secretaries[t.pick(secretaries, offset=offset)]
        dept = secretary["DEPT_CD"]
        minutes = await _explore_all(t, "search_committee_minutes",
                                     {"DAE_NUM": AGE, "CONF_DATE": "2025", "DEPT_CD": dept})
        roster = {r["HG_NM"] for r in roster_all if r["DEPT_CD"] == dept}
        days = []
        for day in sorted({m["CONF_DATE"] for m in minutes}):
            sponsors = [s.group(1) for m in minutes if m["CONF_DATE"] == day and (s := SPONSOR.search(m["SUB_NAME"]))]
            own = sum(s in roster for s in sponsors)
            if 5 <= len(sponsors) <= 20 and 0 < own < len(sponsors):
                days.append(day)
        if days:
            break
    else:
        raise DraftError(f"{t.task_id}: no committee day to ask about")
    day = t.rng.choice(days)
    name = secretary["HG_NM"]
    mine = (await t.call("list_committee_members", {"HG_NM": name}, step=0)).records
    dept = next(r["DEPT_CD"] for r in mine if r["JOB_RES_NM"] == "간사")
    roster = {r["HG_NM"] for r in (await t.call("list_committee_members", {"DEPT_CD": dept}, step=1,
                                                size=1000)).records}
    items = (await t.call("search_committee_minutes", {"DAE_NUM": AGE, "CONF_DATE": day, "DEPT_CD": dept},
                          step=1, size=1000)).records
    sponsors = [s.group(1) for m in items if (s := SPONSOR.search(m["SUB_NAME"]))]
    own = sum(s in roster for s in sponsors)
    value = await _eval(t, f"{own}/{len(sponsors)}*100", 2)
    t.ask(f"{name} 의원이 간사를 맡고 있는 위원회가 {_date_ko(day)}에 연 회의 안건 중 의원이 대표발의한 법안만 놓고 "
          "보면, 그 위원회 현 소속 위원이 대표발의한 법안 비율은 몇 %인가요?")
    t.answer_number(value)


async def _chairs(t: Draft) -> dict[str, dict[str, Any]]:
    """Standing committees by name (explored), each with its chair."""
    rows = await t.explore("list_assembly_committees", {"CMT_DIV_NM": "상임위원회"}, size=100)
    return {r["COMMITTEE_NAME"]: r for r in rows.records}


@template("politics", count=2)
async def chair_latest_passed_vote(t: Draft) -> None:
    """Committee → its chair → the chair's 22nd-term bills → the latest one passed → its vote tally → the
    yes share of the members on the roll (evaluate_expression)."""
    members = Counter(m["HG_NM"] for m in await _current_members(t))
    committees = await _chairs(t)
    roster = await _explore_all(t, "list_committee_members", {})
    everyone = Counter(r["HG_NM"] for r in roster)
    secretary = None
    for offset in range(len(committees)):
        committee = t.pick(committees, offset=offset)
        chair = _chair_name(committees[committee])
        bills = await _explore_all(t, "search_member_sponsored_bills", {"AGE": AGE, "PROPOSER": chair})
        passed = sorted((b for b in bills if b["PROC_RESULT"] in PASSED), key=lambda b: b["PROC_DT"])
        dept = committees[committee]["HR_DEPT_CD"]
        secretary = next((r["HG_NM"] for r in sorted(roster, key=lambda r: r["HG_NM"]) if r["DEPT_CD"] == dept
                          and r["JOB_RES_NM"] == "간사" and everyone[r["HG_NM"]] == 1), None)
        if (members[chair] == 1 and passed and all(b["RST_PROPOSER"] == chair for b in bills)
                and (len(passed) == 1 or passed[-1]["PROC_DT"] != passed[-2]["PROC_DT"])
                and (t.variant == 0 or secretary is not None)):
            break
    else:
        raise DraftError(f"{t.task_id}: no chair with a latest passed bill")
    step = 0
    if t.variant == 1:
        mine = (await t.call("list_committee_members", {"HG_NM": secretary}, step=0)).records
        dept = next(r["DEPT_CD"] for r in mine if r["JOB_RES_NM"] == "간사")
        row = (await t.call("list_assembly_committees", {"HR_DEPT_CD": dept}, step=1)).records[0]
        step = 2
    else:
        row = (await t.call("list_assembly_committees", {"COMMITTEE_NAME": committee}, step=0)).records[0]
        step = 1
    bills = (await t.call("search_member_sponsored_bills", {"AGE": AGE, "PROPOSER": _chair_name(row)}, step=step,
                          size=1000)).records
    latest = max((b for b in bills if b["PROC_RESULT"] in PASSED), key=lambda b: b["PROC_DT"])
    tally = (await t.call("get_bill_vote_results", {"AGE": AGE, "BILL_ID": latest["BILL_ID"]},
                          step=step + 1)).records[0]
    value = await _eval(t, _ratio(tally["YES_TCNT"], tally["MEMBER_TCNT"]), step + 2)
    if t.variant == 0:
        t.ask(f"{committee} 위원장이 22대 국회에서 대표발의해 본회의를 통과한 법안 중 가장 최근에 의결된 법안은 "
              "재적의원 대비 찬성 비율이 몇 %였나요?")
    else:
        t.ask(f"{secretary} 의원이 간사로 있는 위원회의 위원장이 22대에 대표발의한 법률안 가운데 본회의에서 가결된 것 "
              "중 제일 나중에 처리된 건, 재적의원 중 몇 퍼센트가 찬성했나요?")
    t.answer_number(value)


@template("politics", count=1)
async def watchlist_chair_passed_bills(t: Draft) -> None:
    """ENVIRONMENT: a secretary's name → their committee's code → the committee and its chair → the chair's
    22nd-term bills that passed → each bill's name added to the watchlist the query names."""
    members = Counter(m["HG_NM"] for m in await _current_members(t))
    committees = await _chairs(t)
    roster = await _explore_all(t, "list_committee_members", {})
    everyone = Counter(r["HG_NM"] for r in roster)
    for offset in range(len(committees)):
        committee = t.pick(committees, offset=offset)
        chair = _chair_name(committees[committee])
        bills = await _explore_all(t, "search_member_sponsored_bills", {"AGE": AGE, "PROPOSER": chair})
        passed = [b["BILL_NAME"] for b in bills if b["PROC_RESULT"] in PASSED]
        dept = committees[committee]["HR_DEPT_CD"]
        secretary = next((r["HG_NM"] for r in sorted(roster, key=lambda r: r["HG_NM"]) if r["DEPT_CD"] == dept
                          and r["JOB_RES_NM"] == "간사" and everyone[r["HG_NM"]] == 1), None)
        if (members[chair] == 1 and 2 <= len(passed) <= 5 and len(set(passed)) == len(passed)
                and all(b["RST_PROPOSER"] == chair for b in bills) and secretary is not None):
            break
    else:
        raise DraftError(f"{t.task_id}: no chair with a few passed bills and a secretary to name")
    list_name = "위원장 통과 법안"
    mine = (await t.call("list_committee_members", {"HG_NM": secretary}, step=0)).records
    dept = next(r["DEPT_CD"] for r in mine if r["JOB_RES_NM"] == "간사")
    row = (await t.call("list_assembly_committees", {"HR_DEPT_CD": dept}, step=1)).records[0]
    bills = (await t.call("search_member_sponsored_bills", {"AGE": AGE, "PROPOSER": _chair_name(row)}, step=2,
                          size=1000)).records
    for name in sorted(b["BILL_NAME"] for b in bills if b["PROC_RESULT"] in PASSED):
        await t.call("add_to_watchlist", {"list_name": list_name, "item": name}, step=3)
    t.ask(f"{secretary} 의원이 간사를 맡은 위원회가 있죠. 그 위원회 위원장이 22대 국회에서 대표발의해 본회의에서 "
          f"가결(원안 또는 수정)된 법률안들을 '{list_name}' 관심목록에 의안명 그대로 하나씩 넣어 주세요. 메모는 비워 "
          "두세요.")
    t.state_only()


@template("politics", count=2)
async def last_month_most_opposed(t: Draft) -> None:
    """current_date → last month's plenary votes → the member bill with the most no votes → its sponsor
    (member code) → the sponsor's party, or the sponsor's 22nd-term pass rate (evaluate_expression)."""
    votes = await _voted_bills(t)
    months = []
    for month in sorted({v["PROC_DT"][:7] for v in votes}, reverse=True):
        rows = [v for v in votes if v["PROC_DT"].startswith(month)]
        top = _unique_top(Counter({v["BILL_ID"]: int(number(v["NO_TCNT"])) for v in rows}))
        bill = next((v for v in rows if v["BILL_ID"] == top), None)
        if bill is not None and not bill["BILL_NAME"].endswith("(대안)"):
            months.append(month)
    month = months[t.variant % len(months)]
    year, mon = map(int, month.split("-"))
    t.today(f"{year + mon // 12}-{mon % 12 + 1:02d}-03")
    result = await t.call("get_bill_vote_results", {"AGE": AGE}, step=0, size=1000)
    rows = [v for v in result.records if v["PROC_DT"].startswith(month)]
    bill = max(rows, key=lambda v: number(v["NO_TCNT"]))
    sponsored = (await t.call("search_member_sponsored_bills", {"AGE": AGE, "BILL_ID": bill["BILL_ID"]},
                              step=1)).records[0]
    code, name = sponsored["RST_MONA_CD"], sponsored["RST_PROPOSER"]
    if t.variant % 2 == 0:
        member = (await t.call("get_national_assembly_members", {"MONA_CD": code}, step=2)).records[0]
        row = (await t.call("list_assembly_committees", {"COMMITTEE_NAME": member["CMIT_NM"]}, step=3)).records[0]
        t.ask("지난달 본회의에서 표결한 법안 가운데 반대표가 가장 많이 나온 법안이 있었잖아요. 그 법안을 대표발의한 "
              "의원의 대표 소속 위원회는 지금 누가 위원장을 맡고 있나요?")
        t.answer_string(_chair_name(row))
        return
    own = await _sponsored(t, AGE, name, code, step=2)
    value = await _eval(t, f"{sum(b['PROC_RESULT'] in PASSED for b in own)}/{len(own)}*100", 3)
    t.ask("지난달 본회의 표결에서 반대표를 제일 많이 받은 법안의 대표발의자가 22대 국회에서 대표발의한 법률안 중 "
          "본회의에서 가결(원안·수정)된 비율은 몇 %인가요?")
    t.answer_number(value)
