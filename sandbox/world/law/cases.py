"""Court precedents (판례) and Constitutional Court decisions (헌재결정례) citing the world's laws.

Each precedent draws a case kind (민사/형사/…), a court level, a real-format case number
(2023다212345, 2022노1234, 2023가합12345 …) and a 사건명 tied to the statute it mainly cites;
its 참조조문 names current articles of world laws ("민법 제750조, 제751조"), and the same
citations go to ``law_prec_ref`` so "precedents citing law X" is a lookup, not a text scan.
참조판례 points at earlier 대법원 precedents of the world.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np
import pyarrow as pa

from ..context import BuildContext
from ..korean import person_names
from .facts import (
    CASE_KIND_WEIGHTS,
    CASE_KINDS,
    CASE_NAMES,
    COURT_CODE_LOWER,
    COURT_CODE_SUPREME,
    DISTRICT_COURTS,
    HIGH_COURTS,
    LAW_FIRMS,
    SUPREME_COURT,
)

LAST_DECISION = date(2025, 5, 30)

# 판시사항 concepts per case kind.
CONCEPTS = {
    "민사": ("상당인과관계", "손해배상의 범위", "고의 또는 과실", "신의성실의 원칙", "대항력", "소멸시효의 기산점"),
    "형사": ("고의", "공모공동정범", "위법성 조각사유", "불법영득의사", "죄수 관계", "증거능력"),
    "일반행정": ("재량권의 일탈ㆍ남용", "처분성", "원고적격", "정당한 이유", "업무상 재해", "비례의 원칙"),
    "세무": ("실질과세의 원칙", "부당행위계산", "과세표준", "신의성실의 원칙", "경정청구"),
    "특허": ("진보성", "신규성", "권리범위", "식별력", "기술적 사상의 창작"),
    "가사": ("혼인을 계속하기 어려운 중대한 사유", "재산분할의 대상", "자녀의 복리", "기여분", "유류분 산정"),
}
VERDICTS = {"적극": "해당한다고 보아야 한다", "소극": "해당한다고 볼 수 없다"}


@dataclass
class CitableLaw:
    """A law precedents may cite: its current 조문 numbers, and the real ones to prefer."""

    law_id: str
    name: str
    kind: str
    tags: str
    citable_from: int  # first year a decision may cite it
    articles: list[tuple[int, int]]
    keys: list[tuple[int, int]]


def article_label(number: int, branch: int) -> str:
    return f"제{number}조" + (f"의{branch}" if branch else "")


def build_cases(ctx: BuildContext, laws: list[CitableLaw]) -> None:
    statutes = [law for law in laws if law.kind in ("법률", "헌법")]
    prec, refs = _precedents(ctx.rng("law.precedents"), ctx.n(5200, minimum=60), statutes)
    ctx.add_table("law_prec", prec, sort_by=("선고일자 DESC", "판례일련번호"), indexes=[("판례일련번호",)],
                  key=("판례일련번호",), description="판례 (court precedents) with full text and 참조조문")
    ctx.add_table("law_prec_ref", refs, sort_by=("법령명", "판례일련번호"), key=("판례일련번호", "법령ID", "조문번호",
                                                                              "조문가지번호"),
                  description="normalised 참조조문: which precedent cites which law article")
    ctx.add_table("law_detc", _decisions(ctx.rng("law.detc"), ctx.n(800, minimum=20), statutes),
                  sort_by=("종국일자", "헌재결정례일련번호"), indexes=[("헌재결정례일련번호",)],
                  key=("헌재결정례일련번호",), description="헌재결정례 (Constitutional Court decisions)")


def _decision_dates(rng: np.random.Generator, n: int, oldest: int) -> list[date]:
    years = np.clip(LAST_DECISION.year - np.floor(rng.exponential(7.0, size=n)).astype(int), oldest,
                    LAST_DECISION.year)
    days = rng.integers(0, 365, size=n)
    return sorted(min(date(int(y), 1, 2) + timedelta(days=int(d)), LAST_DECISION) for y, d in zip(years, days))


def _precedents(rng: np.random.Generator, n: int, laws: list[CitableLaw]) -> tuple[pa.Table, pa.Table]:
    by_name = {law.name: law for law in laws}
    tail = [law for law in laws if not law.tags]
    kinds = list(CASE_KIND_WEIGHTS)
    kind_of = rng.choice(len(kinds), size=n, p=np.array(list(CASE_KIND_WEIGHTS.values())))
    level = rng.choice(3, size=n, p=[0.5, 0.2, 0.3])  # 0 대법원, 1 고등법원, 2 1심
    dates = _decision_dates(rng, n, 1995)
    serials = 150000 + np.cumsum(rng.integers(1, 60, size=n))
    judges = person_names(rng, 4 * n)
    cols: dict[str, list] = {k: [] for k in (
        "판례일련번호", "사건명", "사건번호", "선고일자", "법원명", "법원종류코드", "사건종류명", "사건종류코드",
        "판결유형", "선고", "데이터출처명", "판시사항", "판결요지", "참조조문", "참조판례", "판례내용")}
    refs: dict[str, list] = {k: [] for k in ("판례일련번호", "법령ID", "법령명", "조문번호", "조문가지번호")}
    supreme_so_far: list[tuple[date, str]] = []
    for i in range(n):
        kind = kinds[int(kind_of[i])]
        code, tag, (sup, high, first), first_court = CASE_KINDS[kind]
        lv = int(level[i])
        court = (SUPREME_COURT if lv == 0 else "특허법원" if kind == "특허"
                 else HIGH_COURTS[int(rng.integers(len(HIGH_COURTS)))] if lv == 1
                 else first_court or DISTRICT_COURTS[int(rng.integers(len(DISTRICT_COURTS)))])
        mark = sup if lv == 0 else high if lv == 1 else first[int(rng.integers(len(first)))]
        title, main_law = CASE_NAMES[kind][int(rng.integers(len(CASE_NAMES[kind])))]
        earliest = date(by_name[main_law].citable_from, 1, 2) + timedelta(days=int(rng.integers(0, 900)))
        decided = min(max(dates[i], earliest), LAST_DECISION)
        digits = int(rng.integers(3, 7 if lv == 0 and mark == "다" else 6))
        case_no = f"{decided.year - int(rng.integers(0, 3 if lv == 0 else 2))}{mark}" \
                  f"{int(rng.integers(10 ** (digits - 1), 10 ** digits))}"
        cited = _citations(rng, by_name[main_law], [law for law in laws if law.citable_from <= decided.year], tag,
                           [law for law in tail if law.citable_from <= decided.year])
        issues = _issues(rng, cited, CONCEPTS[kind])
        ruling = "결정" if rng.random() < 0.08 else "판결"
        before = [s for s in supreme_so_far if s[0] < decided]
        earlier = ([before[int(j)] for j in rng.integers(0, len(before), size=2)]
                   if before and rng.random() < 0.45 else [])
        ref_cases = ", ".join(f"대법원 {d.year}. {d.month}. {d.day}. 선고 {no} 판결" for d, no in dict.fromkeys(earlier))
        values = (int(serials[i]), title, case_no, decided.strftime("%Y%m%d"), court,
                  COURT_CODE_SUPREME if lv == 0 else COURT_CODE_LOWER, kind, code, ruling, "선고", "대법원",
                  "<br/>".join(f"[{k}] {s}" if len(issues) > 1 else s for k, (s, _) in enumerate(issues, 1)),
                  "<br/>".join(f"[{k}] {g}" if len(issues) > 1 else g for k, (_, g) in enumerate(issues, 1)),
                  _reference_text(cited), ref_cases,
                  _full_text(rng, kind, lv, court, decided, issues, judges[4 * i:4 * i + 4], ruling))
        for col, value in zip(cols, values):
            cols[col].append(value)
        for group in cited:
            for law, number, branch in group:
                for col, value in zip(refs, (int(serials[i]), law.law_id, law.name, number, branch)):
                    refs[col].append(value)
        if lv == 0:
            supreme_so_far.append((decided, case_no))
    ref_table = pa.table(refs)
    keys = [f"{a}:{b}:{c}:{d}" for a, b, c, d in zip(refs["판례일련번호"], refs["법령ID"], refs["조문번호"],
                                                     refs["조문가지번호"])]
    _, first_idx = np.unique(np.array(keys), return_index=True)  # one row per cited article
    return pa.table(cols), ref_table.take(pa.array(np.sort(first_idx)))


def _pick_articles(rng: np.random.Generator, law: CitableLaw, k: int) -> list[tuple[int, int]]:
    pool = law.keys or law.articles
    idx = sorted(set(int(x) for x in rng.integers(0, len(pool), size=k)))
    return [pool[j] for j in idx]


def _citations(rng: np.random.Generator, main: CitableLaw, laws: list[CitableLaw], tag: str,
               tail: list[CitableLaw]) -> list[list[tuple[CitableLaw, int, int]]]:
    """Citation groups, one per 판시 issue: the main law first, sometimes related or long-tail laws."""
    groups = [[(main, n, b) for n, b in _pick_articles(rng, main, int(rng.integers(1, 4)))]]
    related = [law for law in laws if tag in law.tags and law is not main]
    if related and rng.random() < 0.5:
        other = related[int(rng.integers(len(related)))]
        groups.append([(other, n, b) for n, b in _pick_articles(rng, other, int(rng.integers(1, 3)))])
    if tail and rng.random() < 0.25:
        other = tail[int(rng.integers(len(tail)))]
        groups[-1].extend((other, n, b) for n, b in _pick_articles(rng, other, 1))
    return groups


def _reference_text(groups: list[list[tuple[CitableLaw, int, int]]]) -> str:
    """"[1] 민법 제750조, 제751조 / [2] 근로기준법 제23조" (no numbering for a single issue)."""
    parts = []
    for group in groups:
        laws: dict[str, list[str]] = {}
        for law, number, branch in group:
            laws.setdefault(law.name, []).append(article_label(number, branch))
        parts.append(", ".join(f"{name} {', '.join(arts)}" for name, arts in laws.items()))
    return parts[0] if len(parts) == 1 else " / ".join(f"[{k}] {p}" for k, p in enumerate(parts, 1))


def _issues(rng: np.random.Generator, groups: list[list[tuple[CitableLaw, int, int]]], concepts: tuple[str, ...]
            ) -> list[tuple[str, str]]:
    """(판시사항, 판결요지) per citation group."""
    out = []
    for group in groups:
        law, number, branch = group[0]
        concept = concepts[int(rng.integers(len(concepts)))]
        where = f"{law.name} {article_label(number, branch)}"
        if rng.random() < 0.5:
            verdict = "적극" if rng.random() < 0.6 else "소극"
            holding = f"{where}에서 정한 '{concept}'에 해당하는지 여부({verdict})"
            gist = (f"{where}의 문언과 체계, 입법 취지 등에 비추어 보면, 이 사건의 사실관계는 '{concept}'에 "
                    f"{VERDICTS[verdict]}.")
        else:
            holding = f"{where}에서 정한 '{concept}'의 의미 및 그 판단 기준"
            gist = (f"{where}에서 말하는 '{concept}'의 존부는 당사자의 지위와 관계, 행위의 경위와 결과 등 "
                    f"여러 사정을 종합적으로 고려하여 판단하여야 한다.")
        out.append((holding, gist))
    return out


def _full_text(rng: np.random.Generator, kind: str, level: int, court: str, decided: date,
               issues: list[tuple[str, str]], judges: list[str], ruling: str) -> str:
    criminal = kind == "형사"
    parties = (["【피 고 인】 피고인", f"【상 고 인】 {'검사' if rng.random() < 0.4 else '피고인'}",
                f"【변 호 인】 법무법인 {LAW_FIRMS[int(rng.integers(len(LAW_FIRMS)))]} 담당변호사 {judges[3]}"]
               if criminal else
               [f"【원고, {'피상고인' if level == 0 else '피항소인'}】 원고 (소송대리인 법무법인 "
                f"{LAW_FIRMS[int(rng.integers(len(LAW_FIRMS)))]} 담당변호사 {judges[3]})",
                f"【피고, {'상고인' if level == 0 else '항소인'}】 피고"])
    lower = f"【원심판결】 {'서울고등법원' if level == 0 else '서울중앙지방법원'} " \
            f"{decided.year - 1}. {int(rng.integers(1, 13))}. {int(rng.integers(1, 29))}. 선고 판결"
    order = "상고를 기각한다." if level == 0 else "원고의 청구를 기각한다." if not criminal else "피고인을 징역 1년에 처한다."
    reasons = "<br/>".join(f" {k}. {gist}" for k, (_, gist) in enumerate(issues, 1))
    bench = (f"대법관 {judges[0]}(재판장) {judges[1]}(주심) {judges[2]}" if level == 0
             else f"재판장 판사 {judges[0]} 판사 {judges[1]} 판사 {judges[2]}")
    return "<br/>".join([*parties, *([lower] if level < 2 else []), "【주    문】", f" {order}", "【이    유】",
                         " 상고이유를 판단한다." if level == 0 else " 1. 인정 사실 및 판단", reasons,
                         f" 그러므로 주문과 같이 {ruling}한다.", bench])


def _decisions(rng: np.random.Generator, n: int, laws: list[CitableLaw]) -> pa.Table:
    """헌재결정례: 위헌확인/위헌소원/위헌제청 against articles of world laws."""
    marks = (("헌마", "위헌확인", "헌법소원"), ("헌바", "위헌소원", "헌법소원"), ("헌가", "위헌제청", "위헌법률"))
    real = [law for law in laws if law.keys]
    dates = _decision_dates(rng, n, 1989)
    serials = 1000 + np.cumsum(rng.integers(1, 40, size=n))
    rows: dict[str, list] = {k: [] for k in ("헌재결정례일련번호", "종국일자", "사건번호", "사건명", "사건종류명",
                                             "판시사항", "결정요지", "전문", "참조조문", "심판대상조문")}
    for i in range(n):
        law = real[int(rng.integers(len(real)))] if rng.random() < 0.7 else laws[int(rng.integers(len(laws)))]
        number, branch = _pick_articles(rng, law, 1)[0]
        mark, suffix, kind = marks[int(rng.choice(3, p=[0.45, 0.45, 0.1]))]
        decided = min(max(dates[i], date(law.citable_from, 3, 1)), LAST_DECISION)
        where = f"{law.name} {article_label(number, branch)}"
        holding = f"{where}가 청구인의 기본권을 침해하는지 여부({'소극' if rng.random() < 0.7 else '적극'})"
        values = (int(serials[i]), decided.strftime("%Y%m%d"),
                  f"{max(1988, decided.year - int(rng.integers(0, 3)))}{mark}{int(rng.integers(1, 1500))}",
                  f"{where} {suffix}",
                  kind, holding, f"{where}는 과잉금지원칙에 위배되어 청구인의 기본권을 침해한다고 볼 수 없다.",
                  f"【당 사 자】<br/>청 구 인 {person_names(rng, 1)[0]}<br/>【주 문】<br/>이 사건 심판청구를 기각한다.",
                  f"대한민국헌법 제37조 제2항, {where}", where)
        for col, value in zip(rows, values):
            rows[col].append(value)
    return pa.table(rows)
