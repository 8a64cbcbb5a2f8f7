"""World generator for the law domain (국가법령정보센터 DRF): statutes, their versions and articles.

A *law* (법령ID, 6 digits, stable across versions) has 1–4 *versions* (법령일련번호 = MST,
unique, increasing with the promulgation date); the newest version is 현행, older ones 연혁.
Real statutes (민법, 형법, 근로기준법 …) keep their real names, ministries and key article
numbers so that precedents can cite "민법 제750조" and the citation resolves to an article;
a seeded long tail ("○○ 진흥에 관한 법률", its 시행령/시행규칙) brings the count past 1,500.

Tables: ``law_law`` (one row per version, the search-list fields), ``law_article`` (조문단위 of
every version), ``law_addendum`` (부칙 per version). Precedents and Constitutional Court
decisions that cite these laws are built by ``law_cases``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta

import numpy as np
import pyarrow as pa

from ..context import BuildContext
from .cases import CitableLaw, build_cases
from .facts import (
    KIND_CODES,
    MINISTRIES,
    REAL_LAWS,
    REVISION_CODES,
    TAIL_MINISTRIES,
    TAIL_PATTERNS,
    TAIL_TOPICS,
)
from .text import law_articles

__all__ = ["WORLD_TODAY", "LawSpec", "build"]

WORLD_TODAY = date(2025, 6, 1)  # the world's "now": every 현행 version is in force by then
_RULE_OWNER = {"경찰청": "행정안전부", "소방청": "행정안전부", "특허청": "산업통상자원부", "국세청": "기획재정부"}
_REVISIONS = ("일부개정", "타법개정", "전부개정")
_REVISION_P = (0.6, 0.3, 0.1)
# 공포번호 grows with time; anchors (year, number) per numbering series.
_NUMBER_ANCHORS = {"법률": ((1948, 1), (1990, 4200), (2000, 6100), (2010, 10000), (2020, 17000), (2025, 20900)),
                   "대통령령": ((1948, 1), (1990, 13000), (2000, 16700), (2010, 22000), (2020, 30000), (2025, 35500)),
                   "규칙": ((1948, 1), (2000, 100), (2025, 1500))}


@dataclass
class LawSpec:
    """One law (법령ID) before versions are drawn."""

    name: str
    short: str
    ministry: str
    kind: str  # 헌법 | 법률 | 대통령령 | 총리령 | 부령
    kind_name: str  # 법령구분명 as printed ("국토교통부령" for a 부령)
    parent: str
    topic: str
    goal: str
    enacted: date
    tags: str = ""
    keys: list = field(default_factory=list)
    n_articles: int = 20
    decree: bool = False  # has a 시행령
    rule: bool = False  # has a 시행규칙


def build(ctx: BuildContext) -> None:
    """Add the law tables to the world."""
    rng = ctx.rng("law.statutes")
    specs = _law_specs(ctx, rng)
    versions = _versions(rng, specs)
    articles, citable = _articles(ctx.rng("law.articles"), specs, versions)
    ctx.add_table("law_law", versions, sort_by=("법령ID", "법령일련번호"), indexes=[("법령일련번호",)],
                  key=("법령일련번호",), description="법령 versions (MST) with the lawSearch.do list fields")
    ctx.add_table("law_article", articles, sort_by=("법령일련번호", "조문키"), key=("법령일련번호", "조문키"),
                  description="조문단위 of every law version (전문 headings and 조문, 항/호 as JSON)")
    ctx.add_table("law_addendum", _addenda(versions), sort_by=("법령ID", "부칙공포일자"),
                  key=("법령ID", "부칙공포일자", "부칙공포번호"), description="부칙 of every law version")
    build_cases(ctx, citable)


def _law_specs(ctx: BuildContext, rng: np.random.Generator) -> list[LawSpec]:
    families: list[LawSpec] = []
    for name, short, ministry, kind, decree, rule, year, tags, keys in REAL_LAWS:
        enacted = date(year, 1, 1) + timedelta(days=int(rng.integers(0, 360)))
        top = max((n for n, _, _ in keys), default=0)
        n_articles = len(keys) + int(rng.integers(12, 25)) if top > 1 else 20
        families.append(LawSpec(name, short, ministry, kind, kind, "", name.split(" ")[0], "", enacted, tags,
                                list(keys), n_articles, decree, rule))
    taken = {f.name for f in families}
    n_tail = ctx.n(700, minimum=20)
    combos = rng.permutation(len(TAIL_TOPICS) * len(TAIL_PATTERNS))
    ministry_idx = rng.integers(0, len(TAIL_MINISTRIES), size=len(combos))
    for c in combos:
        if len(families) - len(REAL_LAWS) >= n_tail:
            break
        topic, (pattern, goal) = TAIL_TOPICS[c // len(TAIL_PATTERNS)], TAIL_PATTERNS[c % len(TAIL_PATTERNS)]
        name = pattern.format(t=topic)
        if name in taken:
            continue
        taken.add(name)
        enacted = date(int(rng.integers(1962, 2023)), 1, 1) + timedelta(days=int(rng.integers(0, 360)))
        families.append(LawSpec(name, "", TAIL_MINISTRIES[int(ministry_idx[c])], "법률", "법률", "", topic,
                                goal.format(t=topic), enacted, n_articles=int(rng.integers(20, 41)),
                                decree=bool(rng.random() < 0.8), rule=bool(rng.random() < 0.55)))
    specs: list[LawSpec] = []
    for fam in families:
        specs.append(fam)
        if fam.decree:
            specs.append(_child(rng, fam, "대통령령", "대통령령", " 시행령", 0.5))
        if fam.rule:
            kind, kind_name = _rule_kind(fam.ministry)
            specs.append(_child(rng, fam, kind, kind_name, " 시행규칙", 0.8))
    return specs


def _child(rng: np.random.Generator, fam: LawSpec, kind: str, kind_name: str, suffix: str, lag_years: float
           ) -> LawSpec:
    enacted = min(fam.enacted + timedelta(days=int(rng.integers(30, 30 + 365 * lag_years))), date(2024, 6, 30))
    return LawSpec(fam.name + suffix, fam.short + suffix if fam.short else "", fam.ministry, kind, kind_name,
                   fam.name, fam.topic, fam.goal, enacted, fam.tags,
                   n_articles=int(rng.integers(12, 31) if kind == "대통령령" else rng.integers(8, 21)))


def _rule_kind(ministry: str) -> tuple[str, str]:
    """시행규칙 of a 부 is "<부>령"; of a 처/위원회 a 총리령; an 청's rule belongs to its parent 부."""
    owner = _RULE_OWNER.get(ministry, ministry)
    return ("부령", owner + "령") if owner.endswith("부") else ("총리령", "총리령")


def _versions(rng: np.random.Generator, specs: list[LawSpec]) -> pa.Table:
    rows: list[tuple] = []
    for li, spec in enumerate(specs):
        n_ver = int(rng.choice([1, 2, 3, 4], p=[0.25, 0.35, 0.25, 0.15]) if not spec.tags else rng.integers(3, 5))
        start = max(spec.enacted + timedelta(days=365), date(2005, 1, 1))
        span = (date(2025, 1, 31) - start).days
        later = sorted(int(d) for d in rng.integers(0, max(span, 1), size=n_ver - 1))
        dates = [spec.enacted] + [start + timedelta(days=d) for d in later]
        for v, promulgated in enumerate(dates):
            revision = "제정" if v == 0 else str(rng.choice(_REVISIONS, p=_REVISION_P))
            lag = int(rng.choice([0, 90, 180])) if v else int(rng.choice([0, 90, 180, 365]))
            effective = min(promulgated + timedelta(days=lag), WORLD_TODAY)
            rows.append((li, v, v == n_ver - 1, promulgated, effective, revision))
    order = sorted(range(len(rows)), key=lambda i: (rows[i][3], rows[i][0], rows[i][1]))
    mst = 100000 + np.cumsum(rng.integers(1, 36, size=len(rows)))
    law_ids = _law_ids(rng, specs)
    numbers = _promulgation_numbers(rng, specs, rows, order)
    cols: dict[str, list] = {k: [] for k in (
        "법령일련번호", "법령ID", "현행연혁코드", "법령명한글", "법령약칭명", "공포일자", "공포번호", "제개정구분명",
        "소관부처코드", "소관부처명", "법령구분명", "공동부령정보", "시행일자", "자법타법여부",
        "_법종구분코드", "_제개정구분코드", "_버전", "_검색명")}
    for rank, i in enumerate(order):
        li, v, current, promulgated, effective, revision = rows[i]
        spec = specs[li]
        values = (int(mst[rank]), law_ids[li], "현행" if current else "연혁", spec.name, spec.short,
                  promulgated.strftime("%Y%m%d"), int(numbers[i]), revision, MINISTRIES[spec.ministry],
                  spec.ministry, spec.kind_name, "", effective.strftime("%Y%m%d"), "",
                  KIND_CODES[spec.kind], REVISION_CODES[revision], v, spec.name.replace(" ", ""))
        for col, value in zip(cols, values):
            cols[col].append(value)
    return pa.table(cols)


def _law_ids(rng: np.random.Generator, specs: list[LawSpec]) -> list[str]:
    """법령ID: 6 digits, older laws lower, as the real numbering roughly is."""
    order = sorted(range(len(specs)), key=lambda i: (specs[i].enacted, i))
    ids = np.cumsum(rng.integers(1, 5, size=len(specs))) + 1000
    out = [""] * len(specs)
    for rank, i in enumerate(order):
        out[i] = f"{int(ids[rank]):06d}"
    return out


def _promulgation_numbers(rng: np.random.Generator, specs: list[LawSpec], rows: list[tuple], order: list[int]
                          ) -> np.ndarray:
    """공포번호 per numbering series: interpolated from real anchors, strictly increasing in time."""
    numbers = np.zeros(len(rows), dtype=np.int64)
    for series in _NUMBER_ANCHORS:
        idx = [i for i in order if _series(specs[rows[i][0]].kind) == series]
        if not idx:
            continue
        years = np.array([rows[i][3].year + rows[i][3].timetuple().tm_yday / 366 for i in idx])
        xs, ys = zip(*_NUMBER_ANCHORS[series])
        base = np.interp(years, xs, ys).astype(np.int64) + rng.integers(0, 3, size=len(idx))
        steps = np.arange(len(idx))
        numbers[idx] = np.maximum.accumulate(base - steps) + steps
    return numbers


def _series(kind: str) -> str:
    return kind if kind in ("법률", "대통령령") else "법률" if kind == "헌법" else "규칙"


def _articles(rng: np.random.Generator, specs: list[LawSpec], versions: pa.Table
              ) -> tuple[pa.Table, list[CitableLaw]]:
    """Articles per law, replicated into each version (later articles and changes per version)."""
    by_law: dict[str, list[dict]] = {}
    for row in versions.select(["법령일련번호", "법령ID", "법령명한글", "시행일자", "_버전", "현행연혁코드"]).to_pylist():
        by_law.setdefault(row["법령ID"], []).append(row)
    name_to_id = {row[0]["법령명한글"]: lid for lid, row in by_law.items()}
    cols: dict[str, list] = {k: [] for k in ("법령일련번호", "조문키", "조문번호", "조문가지번호", "조문여부",
                                             "조문제목", "조문내용", "조문시행일자", "조문변경여부", "_항")}
    citable: list[CitableLaw] = []
    for spec in specs:
        law_id = name_to_id[spec.name]
        vers = sorted(by_law[law_id], key=lambda r: r["_버전"])
        arts = law_articles(rng, name=spec.name, kind=spec.kind, parent=spec.parent, topic=spec.topic,
                            goal=spec.goal, ministry=spec.ministry, key_articles=spec.keys,
                            n_articles=spec.n_articles)
        n_ver = len(vers)
        # A few plain articles of a multi-version law arrive in a later version or change in one.
        added = np.where((rng.random(len(arts)) < 0.08) & (n_ver > 1), rng.integers(1, max(n_ver, 2), len(arts)), 0)
        changed = rng.integers(0, n_ver, len(arts))
        pinned = {(k[0], k[1]) for k in spec.keys}  # real articles exist in every version
        for a, (number, branch, kind, title, content, hang) in enumerate(arts):
            if number <= 2 or kind == "전문" or (number, branch) in pinned:
                added[a] = 0
            key = f"{number:04d}{branch:02d}{1 if kind == '조문' else 0}"
            for ver in vers[int(added[a]):]:
                values = (ver["법령일련번호"], key, number, branch, kind, title, content, ver["시행일자"],
                          "Y" if ver["_버전"] == changed[a] and ver["_버전"] > 0 and kind == "조문" else "N", hang)
                for col, value in zip(cols, values):
                    cols[col].append(value)
        citable.append(CitableLaw(law_id, spec.name, spec.kind, spec.tags, spec.enacted.year + 1,
                                  [(n, b) for n, b, k, *_ in arts if k == "조문"], [(k[0], k[1]) for k in spec.keys]))
    return pa.table(cols), citable


def _addenda(versions: pa.Table) -> pa.Table:
    rows = versions.select(["법령ID", "공포일자", "공포번호", "시행일자", "법령구분명"]).to_pylist()
    contents = []
    for r in rows:
        pd, ed = r["공포일자"], r["시행일자"]
        act = "이 법" if r["법령구분명"] in ("법률", "헌법") else "이 영" if r["법령구분명"] == "대통령령" else "이 규칙"
        when = "공포한 날부터" if pd == ed else f"{int(ed[:4])}년 {int(ed[4:6])}월 {int(ed[6:])}일부터"
        contents.append(f"부칙 <제{r['공포번호']}호,{pd[:4]}.{pd[4:6]}.{pd[6:]}.>\n"
                        f"제1조(시행일) {act}은 {when} 시행한다.")
    return pa.table({"법령ID": [r["법령ID"] for r in rows], "부칙공포일자": [r["공포일자"] for r in rows],
                     "부칙공포번호": [r["공포번호"] for r in rows], "부칙내용": contents})
