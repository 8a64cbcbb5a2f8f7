"""HRD Korea tables: qualifications, exam schedules, pass rates, acquisitions, published papers.

``hrdk_qual`` lists every qualification; ``hrdk_exam_schd`` the exam rounds of 2024–2026 (one
row per grade and round for 국가기술자격, one per qualification for 국가전문자격, keyed to a
series so that a jmCd finds its rounds); ``hrdk_pass_rate`` written/practical applicants and
passers per year; ``hrdk_acqu`` splits each year's practical passers (= new holders) over
month, region, age group and gender, so acquisition counts add up to the pass statistics;
``hrdk_open_qst`` (+ ``hrdk_open_qst_file``) are the published practical exam papers.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa

from ..context import BuildContext
from ..facts import PROVINCES
from .hrdk_catalog import GRADES, Qual, catalogue

QUALGB_NM = {"T": "국가기술자격", "S": "국가전문자격"}
SCHEDULE_YEARS = (2024, 2025, 2026)
STAT_YEARS = tuple(range(2019, 2025))
ACQU_YEARS = (2022, 2023, 2024)
AGE_GROUPS = (("1", "10대"), ("2", "20대"), ("3", "30대"), ("4", "40대"), ("5", "50대"), ("6", "60대 이상"))

# Round calendars (month-day of the ten schedule dates) per grade family; a round is
# (docRegStart, docRegEnd, docExamStart, docExamEnd, docPass, pracRegStart, pracRegEnd,
#  pracExamStart, pracExamEnd, pracPass).
_ROUNDS = {
    "engineer": ("0113 0116 0207 0304 0312 0324 0327 0419 0509 0613",
                 "0414 0417 0510 0530 0611 0623 0626 0719 0806 0912",
                 "0721 0724 0809 0901 0910 0922 0925 1101 1121 1224"),
    "craftsman": ("0106 0109 0121 0125 0206 0210 0213 0315 0402 0418",
                  "0317 0321 0405 0410 0416 0421 0424 0531 0615 0704",
                  "0609 0612 0628 0703 0716 0728 0731 0830 0917 0930",
                  "0825 0828 0920 0925 1015 1020 1023 1122 1210 1224"),
    "professional": ("0106 0109 0201 0201 0305 0317 0320 0405 0416 0529",
                     "0414 0417 0518 0518 0618 0630 0703 0719 0730 0905",
                     "0721 0724 0824 0824 0924 1013 1016 1101 1112 1217"),
    "master": ("0113 0116 0207 0210 0312 0324 0327 0419 0509 0613",
               "0609 0612 0628 0703 0716 0728 0731 0830 0917 0930"),
}
# (description label, grade letter whose series the rows belong to, calendar, first cumulative round in 2024)
_T_SERIES = (("기술사", "T", "professional", 132), ("기능장", "M", "master", 75), ("기사", "E", "engineer", None),
             ("산업기사", "I", "engineer", None), ("기능사", "C", "craftsman", None),
             ("서비스 1급", "1", "engineer", None), ("서비스 2급", "2", "engineer", None),
             ("서비스 단일등급", "S", "craftsman", None))
_SCHD_FIELDS = ("docRegStartDt", "docRegEndDt", "docExamStartDt", "docExamEndDt", "docPassDt",
                "pracRegStartDt", "pracRegEndDt", "pracExamStartDt", "pracExamEndDt", "pracPassDt")
# Typical (written, practical) pass rates per grade.
_PASS_RATES = {"T": (0.10, 0.55), "M": (0.45, 0.40), "E": (0.45, 0.42), "I": (0.40, 0.45),
               "C": (0.42, 0.60), "1": (0.45, 0.35), "2": (0.55, 0.60), "S": (0.60, 0.55)}


def build_hrdk(ctx: BuildContext) -> None:
    rng = ctx.rng("education.hrdk")
    quals = catalogue(rng)
    ctx.add_table("hrdk_qual", pa.table({
        "qualgbCd": [q.qualgb_cd for q in quals], "qualgbNm": [QUALGB_NM[q.qualgb_cd] for q in quals],
        "seriesCd": [q.series_cd for q in quals], "seriesNm": [q.series_nm for q in quals],
        "jmCd": [q.jm_cd for q in quals], "jmNm": [q.jm_nm for q in quals],
        "grdCd": [GRADES[q.grade][3] if q.grade in GRADES else "" for q in quals],
    }), sort_by=("jmCd",), key=("jmCd",), description="HRD Korea national qualifications (종목)")
    _schedules(ctx, quals, rng)
    passers = _pass_rates(ctx, quals, rng)
    _acquisitions(ctx, quals, passers, rng)
    _open_questions(ctx, quals, rng)


def _date(year: int, mmdd: str, shift: int) -> str:
    return (dt.date(year, int(mmdd[:2]), int(mmdd[2:])) + dt.timedelta(days=shift)).strftime("%Y%m%d")


def _schedules(ctx: BuildContext, quals: list[Qual], rng: np.random.Generator) -> None:
    rows: list[dict] = []
    for year in SCHEDULE_YEARS:
        for label, grade, calendar, first in _T_SERIES:
            for seq, template in enumerate(_ROUNDS[calendar], start=1):
                shift = int(rng.integers(-3, 4))
                dates = [_date(year, md, shift) for md in template.split()]
                if first is None:
                    desc = f"국가기술자격 {label} ({year}년도 제{seq}회)"
                else:
                    desc = f"국가기술자격 {label} (제{first + (year - 2024) * len(_ROUNDS[calendar]) + seq - 1}회)"
                rows.append({"implYy": str(year), "implSeq": seq, "qualgbCd": "T", "qualgbNm": QUALGB_NM["T"],
                             "description": desc, **dict(zip(_SCHD_FIELDS, dates)),
                             "_series_cd": GRADES[grade][1]})
        for i, q in enumerate(q for q in quals if q.qualgb_cd == "S"):
            start = dt.date(year, 1 + (i * 5) % 10, 1) + dt.timedelta(days=int(rng.integers(0, 25)))
            offsets = (0, 4, 35, 35, 66, 80, 84, 112, 113, 150)
            dates = [(start + dt.timedelta(days=o)).strftime("%Y%m%d") for o in offsets]
            if i % 2:  # single-stage exams have no second (실기/2차) stage: those dates are blank
                dates[5:] = [""] * 5
            rows.append({"implYy": str(year), "implSeq": 1, "qualgbCd": "S", "qualgbNm": QUALGB_NM["S"],
                         "description": f"{q.jm_nm} ({year}년도 제{year - 1990 + i % 7}회)",
                         **dict(zip(_SCHD_FIELDS, dates)), "_series_cd": q.series_cd})
    ctx.add_table("hrdk_exam_schd", pa.Table.from_pylist(rows), sort_by=("implYy", "qualgbCd", "_series_cd", "implSeq"),
                  key=("implYy", "qualgbCd", "description"),
                  description="Q-Net exam rounds 2024-2026 (qualExamSchd)")


def _pass_rates(ctx: BuildContext, quals: list[Qual], rng: np.random.Generator) -> np.ndarray:
    """Pass statistics of the 국가기술자격; returns practical passers per (qualification, year)."""
    tech = [q for q in quals if q.qualgb_cd == "T"]
    n, ny = len(tech), len(STAT_YEARS)
    pop = np.array([q.popularity for q in tech])
    base = np.maximum(8, pop * 3000 * np.exp(rng.normal(0, 0.3, n)))
    trend = np.exp(rng.normal(0.02, 0.05, n))[:, None] ** np.arange(ny)[None, :]
    recpt = np.round(base[:, None] * trend * np.exp(rng.normal(0, 0.08, (n, ny)))).astype(int)
    rates = np.array([_PASS_RATES[q.grade] for q in tech])
    jm_bias = rng.normal(0, 0.08, (n, 2))
    pil_rate = np.clip(rates[:, :1] + jm_bias[:, :1] + rng.normal(0, 0.04, (n, ny)), 0.03, 0.95)
    sil_rate = np.clip(rates[:, 1:] + jm_bias[:, 1:] + rng.normal(0, 0.04, (n, ny)), 0.05, 0.97)
    pil_exam = np.round(recpt * rng.uniform(0.72, 0.86, (n, ny))).astype(int)
    pil_pass = np.round(pil_exam * pil_rate).astype(int)
    sil_recpt = np.round(pil_pass * rng.uniform(0.9, 1.15, (n, ny))).astype(int) + 1
    sil_exam = np.round(sil_recpt * rng.uniform(0.8, 0.92, (n, ny))).astype(int)
    sil_pass = np.round(sil_exam * sil_rate).astype(int)
    qi, yi = np.meshgrid(np.arange(n), np.arange(ny), indexing="ij")
    qi, yi = qi.ravel(), yi.ravel()

    def rate(passed, sat):
        return np.round(np.where(sat > 0, passed / np.maximum(sat, 1) * 100, 0), 1).ravel()

    ctx.add_table("hrdk_pass_rate", pa.table({
        "statisYy": [str(STAT_YEARS[y]) for y in yi],
        "grdCd": [GRADES[tech[i].grade][3] for i in qi], "grdNm": [tech[i].series_nm for i in qi],
        "jmCd": [tech[i].jm_cd for i in qi], "jmFldNm": [tech[i].jm_nm for i in qi],
        "pilRecptCnt": recpt.ravel(), "pilExamCnt": pil_exam.ravel(), "pilPassCnt": pil_pass.ravel(),
        "pilPassRate": rate(pil_pass, pil_exam),
        "silRecptCnt": sil_recpt.ravel(), "silExamCnt": sil_exam.ravel(), "silPassCnt": sil_pass.ravel(),
        "silPassRate": rate(sil_pass, sil_exam),
    }), sort_by=("statisYy", "jmCd"), key=("statisYy", "jmCd"),
        description="written (pil) and practical (sil) applicants and passers per qualification and year")
    return sil_pass


def _acquisitions(ctx: BuildContext, quals: list[Qual], passers: np.ndarray, rng: np.random.Generator) -> None:
    """Split each year's practical passers over pass months, regions, age groups and genders."""
    tech = [q for q in quals if q.qualgb_cd == "T"]
    region_p = np.array([p.population_weight for p in PROVINCES])
    region_p /= region_p.sum()
    cols: dict[str, list] = {k: [] for k in ("y", "m", "q", "r", "a", "g", "c")}
    for qi, q in enumerate(tech):
        calendar = next(c for _, g, c, _ in _T_SERIES if g == q.grade)
        months = [int(t.split()[9][:2]) for t in _ROUNDS[calendar]]
        age_p = np.array((0.08, 0.45, 0.22, 0.13, 0.09, 0.03)) if q.grade in "CIE12S" else \
            np.array((0.0, 0.05, 0.35, 0.35, 0.2, 0.05))
        male = float(np.clip(rng.normal(0.7, 0.2), 0.05, 0.97))
        cell_p = (np.full(len(months), 1 / len(months))[:, None, None, None] * region_p[None, :, None, None]
                  * age_p[None, None, :, None] * np.array((male, 1 - male))[None, None, None, :]).ravel()
        for year in ACQU_YEARS:
            total = int(passers[qi, STAT_YEARS.index(year)])
            counts = rng.multinomial(total, cell_p)
            nz = np.flatnonzero(counts)
            m, r, a, g = np.unravel_index(nz, (len(months), len(PROVINCES), len(AGE_GROUPS), 2))
            cols["y"].append(np.full(len(nz), year))
            cols["m"].append(np.array(months)[m])
            cols["q"].append(np.full(len(nz), qi))
            cols["r"].append(r)
            cols["a"].append(a)
            cols["g"].append(g)
            cols["c"].append(counts[nz])
    y, m, qi, r, a, g, c = (np.concatenate(cols[k]) for k in ("y", "m", "q", "r", "a", "g", "c"))
    jm = np.array([q.jm_cd for q in tech])
    ctx.add_table("hrdk_acqu", pa.table({
        "acquYy": y.astype(str), "acquMm": np.char.zfill(m.astype(str), 2),
        "qualgbCd": np.full(len(y), "T"), "qualgbNm": np.full(len(y), QUALGB_NM["T"]),
        "seriesCd": np.array([q.series_cd for q in tech])[qi], "seriesNm": np.array([q.series_nm for q in tech])[qi],
        "jmCd": jm[qi], "jmNm": np.array([q.jm_nm for q in tech])[qi],
        "rgnCd": np.char.zfill((r + 1).astype(str), 3), "rgnNm": np.array([p.name for p in PROVINCES])[r],
        "ageGrupCd": np.array([x[0] for x in AGE_GROUPS])[a], "ageGrupNm": np.array([x[1] for x in AGE_GROUPS])[a],
        "genderCd": np.array(["M", "F"])[g], "genderNm": np.array(["남성", "여성"])[g],
        "acquCnt": c,
    }), sort_by=("acquYy", "qualgbCd", "jmCd", "acquMm", "rgnCd", "ageGrupCd", "genderCd"),
        key=("acquYy", "acquMm", "jmCd", "rgnCd", "ageGrupCd", "genderCd"),
        description="new qualification holders by month, region, age group and gender (qualAcquPtcond)")


def _open_questions(ctx: BuildContext, quals: list[Qual], rng: np.random.Generator) -> None:
    """Published practical exam papers, mostly for 기능사 (craftsman) qualifications."""
    eligible = [q for q in quals if q.grade in ("C", "I", "M")]
    picked = [eligible[i] for i in sorted(rng.choice(len(eligible), size=min(len(eligible), 130), replace=False))]
    posts, files = [], []
    seqs = rng.choice(np.arange(4_000_000, 4_999_999), size=len(picked) * 3, replace=False)
    k = 0
    for q in picked:
        for year in sorted(rng.choice((2023, 2024, 2025), size=int(rng.integers(1, 4)), replace=False)):
            seq = int(seqs[k])
            k += 1
            reg = f"{year}{int(rng.integers(1, 13)):02d}{int(rng.integers(1, 29)):02d}{int(rng.integers(9, 18)):02d}0000"
            posts.append({"artlSeq": seq, "title": f"{year}년 {q.jm_nm} 실기 공개문제", "regDttm": reg,
                          "qualgbCd": q.qualgb_cd, "qualgbNm": QUALGB_NM[q.qualgb_cd],
                          "seriesCd": q.series_cd, "seriesNm": q.series_nm, "jmCd": q.jm_cd, "jmNm": q.jm_nm,
                          "_contents": f"{year}년도 {q.jm_nm} 실기시험 공개문제를 게시합니다. 첨부파일을 참고하시기 바랍니다."})
            for f in range(1, int(rng.integers(1, 3)) + 1):
                ext = "pdf" if f == 1 else "hwp"
                files.append({"artlSeq": seq, "fileSeq": f, "fileNm": f"{year}_{q.jm_nm}_공개문제_{f}.{ext}",
                              "fileUrl": f"https://openapi.hrdkorea.or.kr/file/openQst/{seq}/{f}"})
    ctx.add_table("hrdk_open_qst", pa.Table.from_pylist(posts), sort_by=("qualgbCd", "jmCd", "artlSeq"),
                  key=("artlSeq",), description="published practical exam papers (openQst)")
    ctx.add_table("hrdk_open_qst_file", pa.Table.from_pylist(files), sort_by=("artlSeq", "fileSeq"),
                  key=("artlSeq", "fileSeq"), description="attachments of the published exam papers")
