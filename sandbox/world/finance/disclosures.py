"""OpenDART disclosures (list.json): periodic reports, major-event reports, ownership reports,
exchange filings, audit reports of unlisted companies and [기재정정] corrections.

Every filing gets a receipt number like DART's: filing date + a 6-digit sequence, the
sequence starting "80" for exchange (KRX) filings and "00" for the rest. The periodic
reports' receipt numbers are shared with fnlttSinglAcnt and the CB decisions' with
cvbdIsDecsn, so an agent can follow a receipt number across endpoints.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from .. import korean
from .calendar import FILING_END, FILING_START, KRX_HOLIDAYS, trading_days, ymd

_HOLIDAYS = np.array(KRX_HOLIDAYS, dtype="datetime64[D]")

# (bsns_year period, reprt_code, report name pattern, deadline month-day, pblntf_detail_ty)
PERIODS = ((1, "11013", "분기보고서 ({y}.03)", "05-15", "A003"),
           (2, "11012", "반기보고서 ({y}.06)", "08-14", "A002"),
           (3, "11014", "분기보고서 ({y}.09)", "11-14", "A003"),
           (4, "11011", "사업보고서 ({y}.12)", "03-31", "A001"))
REPORT_YEARS = (2023, 2024, 2025, 2026)

# Recurring filings of listed companies: (report name, type, detail type, mean per company over
# the window, filer kind, markets that file it). Filer kind: corp | person | holder.
_EVENT_FILINGS = (
    ("임원ㆍ주요주주특정증권등소유상황보고서", "D", "D002", 5.0, "person", "YKN"),
    ("주식등의대량보유상황보고서(일반)", "D", "D001", 0.8, "holder", "YKN"),
    ("주식등의대량보유상황보고서(약식)", "D", "D001", 1.0, "holder", "YK"),
    ("단일판매ㆍ공급계약체결", "I", "I001", 2.0, "corp", "YKN"),
    ("현금ㆍ현물배당결정", "I", "I001", 1.5, "corp", "YK"),
    ("타법인주식및출자증권취득결정", "I", "I001", 0.4, "corp", "YK"),
    ("기업설명회(IR)개최(안내공시)", "I", "I001", 1.0, "corp", "YK"),
    ("최대주주변경", "I", "I001", 0.15, "corp", "YKN"),
    ("연결재무제표기준영업(잠정)실적(공정공시)", "I", "I002", 3.0, "corp", "Y"),
    ("영업(잠정)실적(공정공시)", "I", "I002", 1.5, "corp", "K"),
    ("주요사항보고서(유상증자결정)", "B", "B001", 0.25, "corp", "KN"),
    ("주요사항보고서(신주인수권부사채권발행결정)", "B", "B001", 0.15, "corp", "K"),
    ("주요사항보고서(자기주식취득결정)", "B", "B001", 0.3, "corp", "Y"),
)
_HOLDERS = ("국민연금공단", "삼성자산운용", "미래에셋자산운용", "한국투자신탁운용", "KB자산운용",
            "신한자산운용", "한화자산운용", "브이아이피자산운용", "트러스톤자산운용", "라자드코리아자산운용")
_AUDITORS = ("삼일회계법인", "삼정회계법인", "안진회계법인", "한영회계법인", "대주회계법인",
             "신한회계법인", "이촌회계법인", "한울회계법인")
_MARKET_RM = {"Y": "유", "K": "코", "N": "넥", "E": ""}
CORRECTION_RATE = 0.04


@dataclass
class Filings:
    """Column arrays of filings being assembled (one entry per filing)."""

    company: list[np.ndarray]
    day: list[np.ndarray]
    report_nm: list[np.ndarray]
    ty: list[np.ndarray]
    detail: list[np.ndarray]
    filer: list[np.ndarray]
    krx: list[np.ndarray]  # exchange filings get the "80" receipt series
    tag: list[np.ndarray]  # "P:<year>:<reprt_code>:<company>" for periodic reports, "C:<k>" for CB decision k

    @classmethod
    def empty(cls) -> Filings:
        return cls([], [], [], [], [], [], [], [])

    def add(self, company, day, report_nm, ty, detail, filer, krx=False, tag="") -> None:
        n = len(company)

        def full(value) -> np.ndarray:  # a scalar applies to every filing added
            return np.asarray(value, dtype=object) if np.ndim(value) else np.full(n, value, dtype=object)

        self.company.append(np.asarray(company, dtype=np.int64))
        self.day.append(np.asarray(day, dtype="datetime64[D]"))
        for store, value in ((self.report_nm, report_nm), (self.ty, ty), (self.detail, detail),
                             (self.filer, filer), (self.tag, tag)):
            store.append(full(value))
        self.krx.append(np.full(n, krx, dtype=bool))

    def columns(self) -> dict[str, np.ndarray]:
        return {k: np.concatenate(getattr(self, k)) for k in
                ("company", "day", "report_nm", "ty", "detail", "filer", "krx", "tag")}


def build_disclosures(rng: np.random.Generator, corps: pa.Table, n_listed: int, has_cfs: np.ndarray,
                      cb_rows: list[dict]) -> tuple[pa.Table, dict[str, str]]:
    """The dart_disclosure table and {tag: rcept_no} for periodic reports and CB decisions.

    ``has_cfs`` flags (per corporation) the groups that file consolidated statements.
    """
    cls = corps["corp_cls"].to_numpy(zero_copy_only=False)
    short = corps["_short_name"].to_numpy(zero_copy_only=False).astype(object)
    f = Filings.empty()
    listed = np.arange(n_listed)
    _periodic(rng, f, listed, cls, short)
    window = trading_days(FILING_START, FILING_END)
    for name, ty, detail, mean, filer_kind, markets in _EVENT_FILINGS:
        who = listed[np.isin(cls[listed], list(markets))]
        company = np.repeat(who, rng.poisson(mean, len(who)))
        filer = {"corp": short[company],
                 "person": np.array(korean.person_names(rng, len(company)), dtype=object),
                 "holder": np.array(_HOLDERS, dtype=object)[rng.integers(0, len(_HOLDERS), len(company))]}[filer_kind]
        f.add(company, window[rng.integers(0, len(window), len(company))], name, ty, detail, filer, krx=ty == "I")
    for k, row in enumerate(cb_rows):
        f.add([row["_company"]], [np.datetime64(f"{row['_rcept_dt'][:4]}-{row['_rcept_dt'][4:6]}-{row['_rcept_dt'][6:]}")],
              "주요사항보고서(전환사채권발행결정)", "B", "B001", short[row["_company"]], tag=f"C:{k}")
    unlisted = np.arange(n_listed, corps.num_rows)
    for year in (2023, 2024, 2025):
        who = unlisted[rng.random(len(unlisted)) < 0.7]
        day = np.busday_offset(np.datetime64(f"{year + 1}-03-15"), rng.integers(0, 22, len(who)),
                               roll="forward", holidays=_HOLIDAYS)
        f.add(who, day, f"감사보고서 ({year}.12)", "F", "F001",
              np.array(_AUDITORS, dtype=object)[rng.integers(0, len(_AUDITORS), len(who))])
    cols = f.columns()
    cols, last = _with_corrections(rng, cols)
    rcept_no = _receipt_numbers(rng, cols["day"], cols["krx"])
    dates = ymd(cols["day"])
    in_window = (dates >= FILING_START.replace("-", "")) & (dates <= FILING_END.replace("-", ""))
    c = cols["company"]
    rm = np.where(cols["krx"], np.array([_MARKET_RM[x] for x in cls], dtype=object)[c], "")
    rm = np.where((cols["ty"] == "A") & has_cfs[c], "연", rm)  # "연": has consolidated statements
    table = pa.table({
        "corp_cls": cls[c], "corp_name": short[c],
        "corp_code": corps["corp_code"].to_numpy(zero_copy_only=False)[c],
        "stock_code": corps["stock_code"].to_numpy(zero_copy_only=False)[c],
        "report_nm": cols["report_nm"], "rcept_no": rcept_no, "flr_nm": cols["filer"], "rcept_dt": dates,
        "rm": rm, "_pblntf_ty": cols["ty"], "_pblntf_detail_ty": cols["detail"], "_last": last,
    }).filter(pa.array(in_window))
    tags = cols["tag"]
    tagged = np.flatnonzero(tags != "")
    return table, dict(zip(tags[tagged].tolist(), rcept_no[tagged].tolist()))


def _periodic(rng, f: Filings, listed: np.ndarray, cls: np.ndarray, short: np.ndarray) -> None:
    """Quarterly, half-year and annual reports (KONEX files only half-year and annual ones)."""
    for year in REPORT_YEARS:
        for period, code, pattern, deadline_md, detail in PERIODS:
            if year == 2026 and period == 4:
                continue  # the 2026 annual report is due in March 2027
            who = listed if period in (2, 4) else listed[cls[listed] != "N"]
            deadline = np.datetime64(f"{year + (period == 4)}-{deadline_md}")
            early = np.minimum(rng.geometric(0.22, len(who)) - 1, 25)
            day = np.busday_offset(deadline, -early, roll="forward", holidays=_HOLIDAYS)
            f.add(who, day, pattern.format(y=year), "A", detail, short[who],
                  tag=np.array([f"P:{year}:{code}:{c}" for c in who], dtype=object))


def _with_corrections(rng, cols: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Add [기재정정] filings for a few periodic and major-event reports; originals stop being 'last'."""
    eligible = np.flatnonzero(np.isin(cols["ty"], ["A", "B"]))
    fixed = eligible[rng.random(len(eligible)) < CORRECTION_RATE]
    day = np.busday_offset(cols["day"][fixed], rng.integers(3, 60, len(fixed)), roll="forward", holidays=_HOLIDAYS)
    out = {k: np.concatenate([v, v[fixed]]) for k, v in cols.items()}
    out["day"][len(cols["day"]):] = day
    out["report_nm"][len(cols["day"]):] = ["[기재정정]" + n for n in cols["report_nm"][fixed]]
    out["tag"][len(cols["day"]):] = ""
    last = np.full(len(out["day"]), "Y", dtype=object)
    last[fixed] = "N"
    return out, last


def _receipt_numbers(rng, day: np.ndarray, krx: np.ndarray) -> np.ndarray:
    """Date + series ("00"/"80") + a 4-digit sequence in random order within the day."""
    order = np.lexsort((rng.random(len(day)), krx, day))
    d, k = day[order], krx[order]
    start = np.r_[True, (d[1:] != d[:-1]) | (k[1:] != k[:-1])]
    group_first = np.maximum.accumulate(np.where(start, np.arange(len(d)), 0))
    seq = np.arange(len(d)) - group_first + 1 + np.where(k, 0, 100)
    numbers = np.char.add(np.char.add(ymd(d), np.where(k, "80", "00")), np.char.zfill(seq.astype(str), 4))
    out = np.empty(len(day), dtype=object)
    out[order] = numbers
    return out
