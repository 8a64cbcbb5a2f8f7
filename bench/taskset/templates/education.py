"""KOPA-Bench templates: education.

Two platforms: ``edu`` (NEIS school register, classes and majors; 학교알리미 disclosures keyed by
school-kind and 시군구 codes) and ``hrdk`` (national qualification schedules, acquisitions, published
exam papers and pass rates). Chains: school name → office/school codes → classes; district → the
disclosure of one school kind → the biggest school → its NEIS record → its classes; qualification name
→ code → schedule or pass rates; whole-region listings that page.
"""

from __future__ import annotations

import collections
import datetime as dt
from typing import Any

from ..draft import Draft, DraftError
from ..registry import template
from ..values import number

# Real 5-digit 시군구 codes of the Seoul districts the 학교알리미 tasks ask about (public code table).
SEOUL_SGG = {"종로구": "11110", "용산구": "11170", "성동구": "11200", "광진구": "11215", "동대문구": "11230",
             "중랑구": "11260", "성북구": "11290", "도봉구": "11320", "노원구": "11350", "은평구": "11380",
             "서대문구": "11410", "마포구": "11440", "양천구": "11470", "강서구": "11500", "구로구": "11530",
             "영등포구": "11560", "동작구": "11590", "관악구": "11620", "서초구": "11650", "강남구": "11680",
             "송파구": "11710", "강동구": "11740"}
GYEONGGI_SGG = {"수원시": "41110", "성남시": "41130", "부천시": "41190", "안산시": "41270", "고양시": "41280",
                "남양주시": "41360", "용인시": "41460", "화성시": "41590"}
KIND_CODE = {"초등학교": "02", "중학교": "03", "고등학교": "04"}
OFFICE = {"서울": ("B10", "서울특별시"), "경기": ("J10", "경기도"), "부산": ("C10", "부산광역시")}


def _students(rec: dict[str, Any], field: str) -> int | None:
    """A disclosure's student count ("782(0)" → 782); None for a school left out of the disclosure."""
    if rec.get("PBAN_EXCP_YN") == "Y" or not rec.get(field):
        return None
    return int(number(rec[field]))


def _unique_max(items: list[tuple[Any, float]]) -> Any:
    """The key of the largest value; DraftError when the top is tied (the answer would be ambiguous)."""
    ranked = sorted(items, key=lambda kv: (-kv[1], str(kv[0])))
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        raise DraftError("tied or empty maximum")
    return ranked[0][0]


def _date_answers(yyyymmdd: str) -> list[str]:
    d = dt.datetime.strptime(yyyymmdd, "%Y%m%d").date()
    return [d.isoformat(), yyyymmdd, f"{d.year}년 {d.month}월 {d.day}일"]


async def _unique_school(t: Draft, atpt: str, records: list[dict[str, Any]], *, offset: int = 0,
                         exclude: set[str] = frozenset()) -> dict[str, Any]:
    """A school from ``records`` whose name finds exactly this one school nationwide (name search is partial)."""
    names = sorted({r["SCHUL_NM"] for r in records} - set(exclude))
    pool = sorted(names, key=lambda n: t.rng.random())
    for name in pool[offset:offset + 12]:
        hit = await t.explore("search_school_info", {"SCHUL_NM": name})
        if hit.total_count == 1 and hit.records[0]["ATPT_OFCDC_SC_CODE"] == atpt:
            return hit.records[0]
    raise DraftError(f"{t.task_id}: no uniquely named school")


# ------------------------------------------------------------------------------------------ NEIS chains


@template("education", count=3)
async def compare_two_schools_classes(t: Draft) -> None:
    """Two school names → their codes (parallel) → one grade's classes of each (parallel) → difference or sum."""
    region, kind, grade, op = [("서울", "중학교", 1, "-"), ("경기", "고등학교", 3, "+"), ("서울", "초등학교", 6, "-")][t.variant]
    atpt, _ = OFFICE[region]
    codes = SEOUL_SGG if region == "서울" else GYEONGGI_SGG
    district = t.pick(codes)
    listing = await t.explore("class_and_student_status", {"pbanYr": "2025", "schulKndCode": KIND_CODE[kind],
                                                           "sggCode": codes[district]}, size=1000)
    a = await _unique_school(t, atpt, listing.records)
    b = await _unique_school(t, atpt, listing.records, exclude={a["SCHUL_NM"]})
    counts = []
    for s in (a, b):
        await t.call("search_school_info", {"SCHUL_NM": s["SCHUL_NM"]}, step=0)
    for s in (a, b):
        res = await t.call("get_school_class_info", {"ATPT_OFCDC_SC_CODE": atpt, "SD_SCHUL_CODE": s["SD_SCHUL_CODE"],
                                                     "AY": "2025", "GRADE": str(grade)}, step=1)
        counts.append(res.total_count or 0)
    if min(counts) == 0:
        raise DraftError(f"{t.task_id}: a school has no classes")
    value = counts[0] - counts[1] if op == "-" else counts[0] + counts[1]
    await t.call("evaluate_expression", {"expression": f"{counts[0]}{op}{counts[1]}"}, step=2, compare=())
    an, bn = a["SCHUL_NM"], b["SCHUL_NM"]
    if op == "+":
        t.ask(f"{region} {an}와 {bn}의 2025학년도 {grade}학년 학급 수를 합하면 모두 몇 반인가요?")
    elif t.variant == 0:
        t.ask(f"{region}에 있는 {an}는 {bn}보다 2025학년도 {grade}학년 반이 몇 개 더 많나요? 적으면 음수로 답해 주세요.")
    else:
        t.ask(f"2025학년도 기준으로 {an}의 {grade}학년 반 수에서 {bn}의 {grade}학년 반 수를 빼면 얼마인가요? ({region} 소재 학교들이에요)")
    t.answer_number(value)
    t.tags += ["comparison", "code-lookup"]


@template("education", count=2)
async def vocational_major_class_spread(t: Draft) -> None:
    """Vocational high school name → its codes → its 2025 classes → classes per major → max − min."""
    region = ("서울", "경기")[t.variant]
    atpt, _ = OFFICE[region]
    codes = SEOUL_SGG if region == "서울" else GYEONGGI_SGG
    school = None
    for offset in range(len(codes)):
        district = t.pick(codes, offset=offset)
        listing = await t.explore("school_basic_disclosure", {"schulKndCode": "04", "sggCode": codes[district]},
                                  size=1000)
        voc = [r for r in listing.records if r.get("HS_KND_SC_NM") == "특성화고"]
        if not voc:
            continue
        try:
            candidate = await _unique_school(t, atpt, voc)
        except DraftError:
            continue
        probe = await t.explore("get_school_class_info", {"ATPT_OFCDC_SC_CODE": atpt,
                                                          "SD_SCHUL_CODE": candidate["SD_SCHUL_CODE"], "AY": "2025"},
                                size=1000)
        per = collections.Counter(r["DDDEP_NM"] for r in probe.records)
        if len(per) >= 2 and max(per.values()) != min(per.values()):
            school = candidate
            break
    if school is None:
        raise DraftError(f"{t.task_id}: no school with uneven majors")
    name = school["SCHUL_NM"]
    await t.call("search_school_info", {"SCHUL_NM": name}, step=0)
    res = await t.call("get_school_class_info", {"ATPT_OFCDC_SC_CODE": atpt, "SD_SCHUL_CODE": school["SD_SCHUL_CODE"],
                                                 "AY": "2025"}, step=1, size=1000)
    per = collections.Counter(r["DDDEP_NM"] for r in res.records)
    hi, lo = max(per.values()), min(per.values())
    await t.call("evaluate_expression", {"expression": f"{hi}-{lo}"}, step=2, compare=())
    if t.variant == 0:
        t.ask(f"{region} {name}의 2025학년도 학급을 학과별로 세어 보면, 반이 가장 많은 학과와 가장 적은 학과는 몇 반 차이가 나나요?")
    else:
        t.ask(f"{name}({region})에서 2025학년도 전 학년 학급 수가 제일 많은 학과는 제일 적은 학과보다 몇 반 더 많은지 알려 주세요.")
    t.answer_number(hi - lo)
    t.tags += ["reduction", "code-lookup"]


@template("education", count=2)
async def district_biggest_school_classes(t: Draft) -> None:
    """Seoul district + school kind → 2025 disclosure → the school with most pupils → its NEIS code → 2024 grade-1 classes."""
    kind = ("중학교", "고등학교")[t.variant]
    for offset in range(6):
        district = t.pick(SEOUL_SGG, offset=offset * 2)
        probe = await t.explore("class_and_student_status", {"pbanYr": "2025", "schulKndCode": KIND_CODE[kind],
                                                             "sggCode": SEOUL_SGG[district]}, size=1000)
        scored = [(r["SCHUL_NM"], _students(r, "COL_FGR_SUM")) for r in probe.records]
        try:
            top = _unique_max([(n, s) for n, s in scored if s is not None])
        except DraftError:
            continue
        hit = await t.explore("search_school_info", {"SCHUL_NM": top, "ATPT_OFCDC_SC_CODE": "B10"})
        if hit.total_count == 1:
            break
    else:
        raise DraftError(f"{t.task_id}: no district with a clear biggest school")
    status = await t.call("class_and_student_status", {"pbanYr": "2025", "schulKndCode": KIND_CODE[kind],
                                                        "sggCode": SEOUL_SGG[district]}, step=0, size=1000)
    assert len(status.records) == len(probe.records)
    school = (await t.call("search_school_info", {"SCHUL_NM": top, "ATPT_OFCDC_SC_CODE": "B10"}, step=1)).records[0]
    classes = await t.call("get_school_class_info", {"ATPT_OFCDC_SC_CODE": "B10", "SD_SCHUL_CODE": school["SD_SCHUL_CODE"],
                                                     "AY": "2024", "GRADE": "1"}, step=2)
    if not classes.total_count:
        raise DraftError(f"{t.task_id}: no 2024 classes")
    if t.variant == 0:
        t.ask(f"서울 {district}에 있는 {kind} 중 2025년 학교알리미 공시 기준으로 전체 학생 수가 가장 많은 학교는 2024학년도에 1학년이 몇 반이었나요?")
    else:
        t.ask(f"2025년 공시에서 학생이 제일 많은 서울 {district} {kind}를 찾아서, 그 학교의 2024학년도 1학년 학급 수를 알려 주세요.")
    t.answer_number(classes.total_count)
    t.tags += ["reduction", "code-lookup"]


@template("education", count=3)
async def gyeonggi_city_school_change(t: Draft) -> None:
    """Gyeonggi city → its 시군 code (a Gyeonggi statistics table) → two disclosure years (parallel) → the biggest
    school's change in pupils (evaluate_expression)."""
    kind = ("초등학교", "중학교", "초등학교")[t.variant]
    cities = await t.explore("gg_birth_stat_2024", {"SEX_NM": "남자"}, size=100)
    for offset in range(0, 12, 3):
        city = t.pick(sorted(r["SIGUN_NM"] for r in cities.records if r["SIGUN_NM"].endswith("시")), offset=offset)
        code = next(r["SIGUN_CD"] for r in cities.records if r["SIGUN_NM"] == city)
        new = await t.explore("students_by_grade_and_class", {"pbanYr": "2025", "schulKndCode": KIND_CODE[kind],
                                                              "sggCode": code}, size=1000)
        old = await t.explore("students_by_grade_and_class", {"pbanYr": "2021", "schulKndCode": KIND_CODE[kind],
                                                              "sggCode": code}, size=1000)
        before = {r["SCHUL_CODE"]: _students(r, "COL_S_SUM") for r in old.records}
        try:
            top = _unique_max([(r["SCHUL_CODE"], s) for r in new.records
                               if (s := _students(r, "COL_S_SUM")) is not None])
        except DraftError:
            continue
        if before.get(top) is not None:
            break
    else:
        raise DraftError(f"{t.task_id}: no city with a clear biggest school")
    await t.call("gg_birth_stat_2024", {"SIGUN_NM": city}, step=0)
    new = await t.call("students_by_grade_and_class", {"pbanYr": "2025", "schulKndCode": KIND_CODE[kind],
                                                        "sggCode": code}, step=1, size=1000)
    old = await t.call("students_by_grade_and_class", {"pbanYr": "2021", "schulKndCode": KIND_CODE[kind],
                                                        "sggCode": code}, step=1, size=1000)
    s25 = next(_students(r, "COL_S_SUM") for r in new.records if r["SCHUL_CODE"] == top)
    s21 = next(_students(r, "COL_S_SUM") for r in old.records if r["SCHUL_CODE"] == top)
    await t.call("evaluate_expression", {"expression": f"{s25}-{s21}"}, step=2, compare=())
    phrasing = (
        f"경기도 {city}의 {kind} 가운데 2025년 학교알리미 공시 기준 학생 수가 가장 많은 학교는, 2021년 공시 때와 비교해 학생 수가 얼마나 변했나요? (2025년 − 2021년, 줄었으면 음수)",
        f"학교알리미 학년별 학생 수 공시로 보면 경기 {city}에서 2025년 학생이 제일 많은 {kind}는 2021년보다 몇 명 늘었나요? 줄었다면 음수로 답해 주세요.",
        f"{city}(경기) 관내 {kind}들의 학년별 학생 수 공시를 2021년과 2025년으로 비교하려고 해요. 2025년에 학생 수 1위인 학교는 4년 사이 학생이 몇 명 증감했나요? 감소는 음수로 주세요.",
    )
    t.ask(phrasing[t.variant % 3])
    t.answer_number(s25 - s21)
    t.tags += ["reduction", "parallel", "code-lookup"]


@template("education", count=3)
async def region_listing_then_classes(t: Draft) -> None:
    """Every school of a region (pages) → the oldest / newest school → its 2025 classes."""
    region, kind, newest, grade = [("경기", "초등학교", True, "6"), ("서울", None, False, None),
                                   ("경기", None, False, None)][t.variant]
    atpt, _ = OFFICE[region]
    args = {"ATPT_OFCDC_SC_CODE": atpt} | ({"SCHUL_KND_SC_NM": kind} if kind else {})
    records, step = await t.call_all_pages("search_school_info", args, step=0)
    dated = [(r["SD_SCHUL_CODE"], int(r["FOND_YMD"])) for r in records if r.get("FOND_YMD")]
    if not newest:
        dated = [(c, -d) for c, d in dated]
    code = _unique_max(dated)
    school = next(r for r in records if r["SD_SCHUL_CODE"] == code)
    cargs = {"ATPT_OFCDC_SC_CODE": atpt, "SD_SCHUL_CODE": code, "AY": "2025"} | ({"GRADE": grade} if grade else {})
    classes = await t.call("get_school_class_info", cargs, step=step)
    if not classes.total_count:
        raise DraftError(f"{t.task_id}: no classes")
    if t.variant == 0:
        t.ask("경기도 초등학교 가운데 가장 최근에 설립된 학교는 2025학년도에 6학년이 몇 반인가요?")
    elif t.variant == 1:
        t.ask("서울에 있는 모든 학교(초·중·고·특수학교 등)를 통틀어 가장 먼저 설립된 학교의 2025학년도 전체 학급 수는 몇 개인가요?")
    else:
        t.ask("경기도교육청 관할 학교 전체 중에서 설립일이 가장 이른 학교는 2025학년도에 학급이 모두 몇 개 있나요?")
    t.answer_number(classes.total_count)
    t.notes = f"school {school['SCHUL_NM']}"
    t.tags += ["reduction", "paging"]


# ------------------------------------------------------------------------------------------ HRDK chains


async def _pass_rates_2024(t: Draft) -> list[dict[str, Any]]:
    return list((await t.explore("get_qualification_pass_rate", {"baseYY": "2024"}, size=1000)).records)


def _unambiguous(names: list[str], name: str) -> bool:
    """``name`` as a partial-match filter finds only itself."""
    return sum(name in other for other in names) == 1


@template("education", count=3)
async def qualification_grade_spread(t: Draft) -> None:
    """One field's 기사/산업기사/기능사 (parallel, by name) → 2024 practical pass rates → max − min (%p)."""
    rows = await _pass_rates_2024(t)
    names = sorted({r["jmFldNm"] for r in rows})
    stems = sorted(n[:-2] for n in names if n.endswith("기사") and not n.endswith("산업기사")
                   and all(f"{n[:-2]}{g}" in names for g in ("산업기사", "기능사"))
                   and all(_unambiguous(names, f"{n[:-2]}{g}") for g in ("기사", "산업기사", "기능사")))
    stem = t.pick(stems)
    rates = {}
    for grade in ("기사", "산업기사", "기능사"):
        res = await t.call("get_qualification_pass_rate", {"jmNm": f"{stem}{grade}", "baseYY": "2024"}, step=0)
        rates[grade] = float(res.records[0]["silPassRate"])
    hi, lo = max(rates.values()), min(rates.values())
    result = await t.call("evaluate_expression", {"expression": f"{hi}-{lo}"}, step=1, compare=())
    phrasing = (
        f"{stem}기사, {stem}산업기사, {stem}기능사의 2024년 실기시험 합격률을 비교하면 가장 높은 것과 가장 낮은 것의 차이는 몇 %p인가요?",
        f"2024년 통계에서 {stem} 분야 세 등급(기사·산업기사·기능사) 중 실기 합격률 최고와 최저는 몇 퍼센트포인트 차이 나나요?",
        f"{stem} 관련 기사/산업기사/기능사 자격 가운데 2024년 실기 합격률이 제일 높은 등급과 제일 낮은 등급의 합격률 차이를 알려 주세요(%p).",
    )
    t.ask(phrasing[t.variant % 3])
    t.answer_number(round(float(number(result.records[0]["value"])), 2))
    t.tags += ["comparison", "parallel"]


POPULAR_QUALS = ("정보처리기사", "전기기사", "산업안전기사", "전기기능사", "한식조리기능사", "제과기능사",
                 "정보처리산업기사", "지게차운전기능사", "건설안전기사")


async def _next_practical(t: Draft, name: str, step: int, today: str) -> tuple[dict[str, Any], str]:
    """name → jmCd (pass-rate record) → the qualification's 2026 rounds → the next practical registration."""
    rate = await t.call("get_qualification_pass_rate", {"jmNm": name, "baseYY": "2024"}, step=step)
    code = rate.records[0]["jmCd"]
    rounds = await t.call("get_national_qualification_exam_schedule", {"jmCd": code, "implYy": "2026"}, step=step + 1)
    day = today.replace("-", "")
    upcoming = sorted(r["pracRegStartDt"] for r in rounds.records if r["pracRegStartDt"] > day)
    if not upcoming:
        raise DraftError(f"{t.task_id}: no practical round left in 2026")
    return rate.records[0], upcoming[0]


@template("education", count=2)
async def next_practical_registration(t: Draft) -> None:
    """Fixed current_date; qualification name → code → 2026 rounds → the next practical registration start."""
    today = ("2026-05-10", "2026-08-03")[t.variant]
    t.today(today)
    name = t.pick(POPULAR_QUALS)
    _, date = await _next_practical(t, name, 0, today)
    if t.variant == 0:
        t.ask(f"{name} 실기시험을 보려고 해요. 오늘 기준으로 다음 실기 원서접수는 언제부터 시작하나요?")
    else:
        t.ask(f"지금부터 따지면 {name}의 다음 실기(2차) 시험 접수 시작일이 언제인지 알려 주세요.")
    t.answer_string(*_date_answers(date))
    t.tags += ["current-date", "code-lookup"]


@template("education", count=3)
async def top_acquired_qualification_trend(t: Draft) -> None:
    """Region + age group → every 2024 acquisition record (pages) → the qualification (of one grade) most
    acquired → its pass rates by year → change 2023 → 2024 (evaluate_expression)."""
    region, rgn, age, age_nm, series = [("서울", "001", "5", "50대", None), ("경기", "009", "2", "20대", "기사"),
                                        ("부산", "002", "2", "20대", "산업기사")][t.variant]
    records, step = await t.call_all_pages("get_qualification_acquisition_status",
                                           {"acquYy": "2024", "qualgbCd": "T", "rgnCd": rgn, "ageGrupCd": age}, step=0)
    totals = collections.Counter()
    for r in records:
        if series is None or r["seriesNm"] == series:
            totals[r["jmCd"]] += int(number(r["acquCnt"]))
    code = _unique_max(list(totals.items()))
    rates = await t.call("get_qualification_pass_rate", {"jmCd": code}, step=step)
    by_year = {r["statisYy"]: float(r["silPassRate"]) for r in rates.records}
    result = await t.call("evaluate_expression", {"expression": f"{by_year['2024']}-{by_year['2023']}"},
                          step=step + 1, compare=())
    if series is None:
        t.ask(f"2024년에 {region}에서 국가기술자격을 새로 취득한 {age_nm}가 가장 많이 딴 종목은 실기 합격률이 "
              f"2023년에서 2024년 사이 몇 %p 변했나요? (2024년 − 2023년)")
    elif t.variant == 1:
        t.ask(f"{region} 지역 {age_nm} 신규 취득자가 2024년에 가장 많이 딴 {series} 등급 종목은, 실기 합격률이 "
              f"2023년 대비 2024년에 몇 %p 달라졌나요? 하락이면 음수로 답해 주세요.")
    else:
        t.ask(f"2024년 {region}의 {age_nm} 국가기술자격 신규 취득자 기준으로 {series} 중에서 취득자가 제일 많은 종목을 찾고, "
              f"그 종목의 실기 합격률 변화(2024년 값 − 2023년 값, %p)를 알려 주세요.")
    t.answer_number(round(float(number(result.records[0]["value"])), 2))
    t.notes = f"qualification {code}"
    t.tags += ["reduction", "paging", "code-lookup"]


@template("education", count=3)
async def open_paper_attachments(t: Draft) -> None:
    """Published practical papers (pages of 50) → the newest/oldest post → its attachments."""
    args, newest = [({"jmNm": "산업기사"}, True), ({}, True), ({}, False)][t.variant]
    records, step = await t.call_all_pages("list_open_exam_questions", args, step=0)
    dated = [(r["artlSeq"], int(r["regDttm"])) for r in records]
    seq = _unique_max(dated if newest else [(s, -d) for s, d in dated])
    post = await t.call("get_open_exam_question", {"artlSeq": seq}, step=step)
    files = post.records[0].get("fileList") or []
    if t.variant == 0:
        t.ask("산업기사 종목의 실기 공개문제 중 가장 최근에 등록된 글에는 첨부파일이 몇 개 있나요?")
        t.answer_number(len(files))
    elif t.variant == 1:
        t.ask("국가기술자격 공개문제 게시판 전체에서 가장 최근에 올라온 공개문제의 첫 번째 첨부파일 이름이 뭔가요?")
        t.answer_string(files[0]["fileNm"])
    else:
        t.ask("국가기술자격 실기 공개문제 중에서 가장 오래전에 등록된 글을 찾아 첨부파일이 몇 개인지 알려 주세요.")
        t.answer_number(len(files))
    t.tags += ["reduction", "paging"]


@template("education", count=2)
async def pass_statistics_all_years(t: Draft) -> None:
    """Every qualification's pass statistics of every year (pages) → the record at the top → a follow-up on
    that qualification (its latest practical pass rate, or its next practical registration)."""
    records, step = await t.call_all_pages("get_qualification_pass_rate", {}, step=0)
    if t.variant == 0:
        top = _unique_max([((r["jmCd"], r["statisYy"]), int(r["silExamCnt"])) for r in records])
        follow = await t.call("get_qualification_pass_rate", {"jmCd": top[0], "baseYY": "2024"}, step=step)
        t.ask("2019~2024년 국가기술자격 합격률 통계 전체에서 한 해 실기 응시자 수가 가장 많았던 종목은 "
              "2024년 실기 합격률이 몇 %였나요?")
        t.answer_number(float(follow.records[0]["silPassRate"]))
    else:
        today = "2026-04-15"
        t.today(today)
        top = _unique_max([((r["jmCd"], r["statisYy"]), float(r["silPassRate"])) for r in records])
        rounds = await t.call("get_national_qualification_exam_schedule", {"jmCd": top[0], "implYy": "2026"}, step=step)
        upcoming = sorted(r["pracRegStartDt"] for r in rounds.records if r["pracRegStartDt"] > today.replace("-", ""))
        if not upcoming:
            raise DraftError(f"{t.task_id}: no practical round left")
        t.ask("2019년부터 2024년까지 통계에서 실기 합격률이 가장 높게 기록된 국가기술자격 종목에 도전하려고 해요. "
              "오늘 기준으로 그 종목의 다음 실기 원서접수 시작일은 언제인가요?")
        t.answer_string(*_date_answers(upcoming[0]))
    t.notes = f"qualification {top[0]} ({top[1]})"
    t.tags += ["reduction", "paging", "code-lookup"]


# ------------------------------------------------------------------------------------- ENVIRONMENT tasks


@template("education", count=2)
async def watch_biggest_schools(t: Draft) -> None:
    """Two Seoul districts (parallel disclosures) → each district's biggest school → watchlist entries."""
    kind = ("중학교", "초등학교")[t.variant]
    districts = sorted(SEOUL_SGG)
    first = t.pick(districts)
    second = t.pick([d for d in districts if d != first], offset=3)
    third = t.pick([d for d in districts if d not in (first, second)], offset=6)
    picks = []
    for district in (first, second, third):
        res = await t.call("class_and_student_status", {"pbanYr": "2025", "schulKndCode": KIND_CODE[kind],
                                                         "sggCode": SEOUL_SGG[district]}, step=0, size=1000)
        top = _unique_max([(r["SCHUL_NM"], s) for r in res.records if (s := _students(r, "COL_FGR_SUM")) is not None])
        students = next(_students(r, "COL_FGR_SUM") for r in res.records if r["SCHUL_NM"] == top)
        picks.append((top, students))
    for name, students in picks:
        await t.call("add_to_watchlist", {"list_name": "관심 학교", "item": name, "note": str(students)}, step=1)
    if t.variant == 0:
        t.ask(f"서울 {first}, {second}, {third}에서 2025년 학교알리미 공시 기준으로 학생 수가 가장 많은 {kind}를 각각 찾아 "
              f"'관심 학교' 관심목록에 학교 이름으로 추가해 주세요. 메모에는 그 학교의 전체 학생 수를 숫자만 적어 주세요.")
    else:
        t.ask(f"아이 학교를 알아보는 중이에요. {first}·{second}·{third}(모두 서울) 각 구에서 2025년 공시 학생 수 1위인 {kind}를 "
              f"제 '관심 학교' 목록에 이름으로 넣어 주시고, 메모 칸에는 학생 수만 숫자로 남겨 주세요.")
    t.state_only()
    t.tags += ["reduction", "parallel", "workspace"]


@template("education", count=2)
async def note_next_practical_dates(t: Draft) -> None:
    """Fixed current_date; two qualifications (parallel) → codes → 2026 rounds → notes with the next dates."""
    today = ("2026-02-20", "2026-06-30")[t.variant]
    t.today(today)
    a = t.pick(POPULAR_QUALS, offset=4)
    b = t.pick([q for q in POPULAR_QUALS if q != a], offset=7)
    c = t.pick([q for q in POPULAR_QUALS if q not in (a, b)], offset=2)
    found = {}
    for name in (a, b, c):
        rate = await t.call("get_qualification_pass_rate", {"jmNm": name, "baseYY": "2024"}, step=0)
        found[name] = rate.records[0]["jmCd"]
    dates = {}
    for name in (a, b, c):
        rounds = await t.call("get_national_qualification_exam_schedule", {"jmCd": found[name], "implYy": "2026"}, step=1)
        upcoming = sorted(r["pracRegStartDt"] for r in rounds.records if r["pracRegStartDt"] > today.replace("-", ""))
        if not upcoming:
            raise DraftError(f"{t.task_id}: no practical round left")
        dates[name] = _date_answers(upcoming[0])[0]
    for name in (a, b, c):
        await t.call("write_note", {"key": f"{name} 실기접수", "text": dates[name]}, step=2)
    t.ask(f"{a}, {b}, {c}의 다음 실기시험 원서접수 시작일을 오늘 기준으로 찾아서 각각 메모로 남겨 주세요. "
          f"메모 키는 '<종목명> 실기접수'(예: '{a} 실기접수'), 내용은 YYYY-MM-DD 형식의 날짜만 적어 주세요.")
    t.state_only()
    t.tags += ["current-date", "parallel", "workspace"]
