"""Key accounts of the periodic reports (OpenDART fnlttSinglAcnt).

Each listed company gets quarterly flows (revenue, operating profit, pre-tax and net income)
and quarter-end balance sheets from 2021 on, consolidated (CFS, groups only) and separate
(OFS). A report row then reads its current, prior and (annual reports) pre-prior period
values off those series, so figures agree across reports and the balance sheet identities
hold: 자산총계 = 유동자산 + 비유동자산 = 부채총계 + 자본총계.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .disclosures import PERIODS, REPORT_YEARS

FIRST_YEAR = 2021  # series start: an annual report of 2023 shows 2021 as its pre-prior period
BS_ACCOUNTS = ("유동자산", "비유동자산", "자산총계", "유동부채", "비유동부채", "부채총계", "자본금", "이익잉여금", "자본총계")
IS_ACCOUNTS = ("매출액", "영업이익", "법인세차감전 순이익", "당기순이익")
ORD = (1, 3, 5, 7, 9, 11, 13, 17, 21, 23, 25, 27, 29)
FS_NAMES = {"CFS": "연결재무제표", "OFS": "재무제표"}
SJ_NAMES = {"BS": "재무상태표", "IS": "손익계산서"}
_QUARTER_END = ("03.31", "06.30", "09.30", "12.31")
_PERIOD_WORD = {1: "1분기", 2: "반기", 3: "3분기"}


def _series(rng: np.random.Generator, mktcap: np.ndarray, n_q: int) -> tuple[np.ndarray, np.ndarray]:
    """Quarterly IS flows (e, q, 4) and quarter-end BS (e, q, 9) per reporting entity."""
    e = len(mktcap)
    revenue0 = mktcap * np.exp(rng.normal(-0.6, 0.8, e)) / 4
    growth = np.cumprod(np.exp(rng.normal(0.01, 0.06, (e, n_q))), axis=1)
    season = 1 + 0.08 * np.sin(np.arange(n_q) * np.pi / 2 + rng.uniform(0, 6, e)[:, None])
    revenue = revenue0[:, None] * growth * season
    margin = np.clip(rng.normal(0.06, 0.07, e)[:, None] + rng.normal(0, 0.03, (e, n_q)), -0.5, 0.4)
    op = revenue * margin
    pretax = op * (1 + rng.normal(0, 0.15, (e, n_q))) + revenue * rng.normal(0, 0.01, (e, n_q))
    net = np.where(pretax > 0, pretax * 0.78, pretax)
    flows = np.stack([revenue, op, pretax, net], axis=2)

    assets = revenue0[:, None] * 4 * np.exp(rng.normal(0.3, 0.4, e))[:, None] * growth
    debt_ratio = np.clip(rng.beta(2.5, 3.5, e)[:, None] + rng.normal(0, 0.02, (e, n_q)), 0.05, 0.95)
    liabilities = assets * debt_ratio
    equity = assets - liabilities
    current_a = assets * rng.uniform(0.25, 0.7, e)[:, None]
    current_l = liabilities * rng.uniform(0.4, 0.8, e)[:, None]
    capital = np.broadcast_to((equity[:, :1] * rng.uniform(0.03, 0.3, e)[:, None]), equity.shape)
    surplus = capital * rng.uniform(0.5, 3, e)[:, None]
    bs = np.stack([current_a, assets - current_a, assets, current_l, liabilities - current_l, liabilities,
                   capital, equity - capital - surplus, equity], axis=2)
    bs = _thousands(bs)
    # Keep the identities exact after rounding: totals are sums of their parts.
    bs[..., 2] = bs[..., 0] + bs[..., 1]
    bs[..., 5] = bs[..., 3] + bs[..., 4]
    bs[..., 8] = bs[..., 2] - bs[..., 5]
    bs[..., 7] = bs[..., 8] - bs[..., 6] - _thousands(surplus)
    return _thousands(flows), bs


def _thousands(a: np.ndarray) -> np.ndarray:
    """Won amounts rounded to thousands, as most filers report them."""
    return (np.round(a / 1000) * 1000).astype(np.int64)


def build_statements(rng: np.random.Generator, listed: pa.Table, mktcap: np.ndarray, has_cfs: np.ndarray,
                     rcept: dict[str, str]) -> pa.Table:
    """The dart_fnltt table: 13 key accounts per (company, filed report, fs_div).

    ``rcept`` maps "P:<year>:<reprt_code>:<company>" to the report's receipt number; reports
    missing there (KONEX quarterlies) have no key accounts either.
    """
    n = listed.num_rows
    entity_company = np.r_[np.flatnonzero(has_cfs), np.arange(n)]
    entity_fs = np.r_[np.full(int(has_cfs.sum()), "CFS"), np.full(n, "OFS")].astype(object)
    n_q = (REPORT_YEARS[-1] - FIRST_YEAR + 1) * 4
    scale = np.where(entity_fs == "CFS", 1.0, rng.uniform(0.45, 0.95, len(entity_fs)))
    flows, bs = _series(rng, mktcap[entity_company] * scale, n_q)
    csum = np.cumsum(flows, axis=1)

    stmts = [(e, y, p, code, rcept[key]) for y in REPORT_YEARS for p, code, *_ in PERIODS
             for e, c in enumerate(entity_company) if (key := f"P:{y}:{code}:{c}") in rcept]
    e_idx, year, period = (np.array([s[i] for s in stmts]) for i in range(3))
    company = entity_company[e_idx]
    q = (year - FIRST_YEAR) * 4 + period - 1
    fy = (year - FIRST_YEAR) * 4  # first quarter of the business year
    annual = period == 4

    def span(last: np.ndarray, first: np.ndarray) -> np.ndarray:
        """Flows summed over quarters first..last."""
        return csum[e_idx, last] - np.where(first[:, None] > 0, csum[e_idx, np.maximum(first - 1, 0)], 0)

    this = np.c_[bs[e_idx, q], np.where(annual[:, None], span(q, fy), flows[e_idx, q])]
    prior = np.c_[bs[e_idx, fy - 1], np.where(annual[:, None], span(q - 4, fy - 4), flows[e_idx, q - 4])]
    preprior = np.c_[bs[e_idx, fy - 5], span(q - 8, fy - 8)]
    this_add = np.c_[bs[e_idx, q], span(q, fy)]
    prior_add = np.c_[prior[:, :len(BS_ACCOUNTS)], span(q - 4, fy - 4)]

    k, n_acc = len(stmts), len(BS_ACCOUNTS) + len(IS_ACCOUNTS)
    is_bs = np.r_[np.ones(len(BS_ACCOUNTS), bool), np.zeros(len(IS_ACCOUNTS), bool)]
    on_bs = np.tile(is_bs, k)
    quarterly_is = np.repeat(~annual, n_acc) & ~on_bs
    annual_rows = np.repeat(annual, n_acc)
    names = _period_names(year, period, listed["est_dt"].to_numpy(zero_copy_only=False)[company])

    def rep(values) -> np.ndarray:
        return np.repeat(np.asarray(values, dtype=object), n_acc)

    def by_statement(bs_values: list[str], is_values: list[str]) -> np.ndarray:
        return np.where(on_bs, rep(bs_values), rep(is_values))

    def amounts(values: np.ndarray, present: np.ndarray | None = None) -> pa.Array:
        return pa.array(values.reshape(-1), mask=None if present is None else ~present)

    return pa.table({
        "rcept_no": rep([s[4] for s in stmts]),
        "bsns_year": rep(year.astype(str)),
        "corp_code": rep(listed["corp_code"].to_numpy(zero_copy_only=False)[company]),
        "stock_code": rep(listed["stock_code"].to_numpy(zero_copy_only=False)[company]),
        "reprt_code": rep([s[3] for s in stmts]),
        "account_nm": np.tile(np.array(BS_ACCOUNTS + IS_ACCOUNTS, dtype=object), k),
        "fs_div": rep(entity_fs[e_idx]),
        "fs_nm": rep([FS_NAMES[x] for x in entity_fs[e_idx]]),
        "sj_div": np.where(on_bs, "BS", "IS").astype(object),
        "sj_nm": np.where(on_bs, SJ_NAMES["BS"], SJ_NAMES["IS"]).astype(object),
        "thstrm_nm": by_statement(names["this_bs"], names["this_is"]),
        "thstrm_dt": by_statement(names["this_bs_dt"], names["this_is_dt"]),
        "thstrm_amount": amounts(this),
        "thstrm_add_amount": amounts(this_add, quarterly_is),
        "frmtrm_nm": by_statement(names["prior_bs"], names["prior_is"]),
        "frmtrm_dt": by_statement(names["prior_bs_dt"], names["prior_is_dt"]),
        "frmtrm_amount": amounts(prior),
        "frmtrm_add_amount": amounts(prior_add, quarterly_is),
        "bfefrmtrm_nm": pa.array(rep(names["preprior"]), mask=~annual_rows),
        "bfefrmtrm_dt": pa.array(by_statement(names["preprior_bs_dt"], names["preprior_is_dt"]), mask=~annual_rows),
        "bfefrmtrm_amount": amounts(preprior, annual_rows),
        "ord": np.tile(np.array(ORD, dtype=np.int64), k),
        "currency": np.full(k * n_acc, "KRW", dtype=object),
    })


def _period_names(year: np.ndarray, period: np.ndarray, est_dt: np.ndarray) -> dict[str, list[str]]:
    """thstrm/frmtrm/bfefrmtrm names and dates as the reports print them ("제 56 기 1분기말")."""
    out: dict[str, list[str]] = {k: [] for k in ("this_bs", "this_is", "prior_bs", "prior_is", "preprior",
                                                 "this_bs_dt", "this_is_dt", "prior_bs_dt", "prior_is_dt",
                                                 "preprior_bs_dt", "preprior_is_dt")}
    for y, p, est in zip(year.tolist(), period.tolist(), est_dt.tolist()):
        t = y - int(est[:4]) + 1
        end = _QUARTER_END[p - 1]
        word = _PERIOD_WORD.get(p)
        row = {
            "this_bs": f"제 {t} 기 {word}말" if word else f"제 {t} 기",
            "this_is": f"제 {t} 기 {word}" if word else f"제 {t} 기",
            "prior_bs": f"제 {t - 1} 기말" if word else f"제 {t - 1} 기",
            "prior_is": f"제 {t - 1} 기 {word}" if word else f"제 {t - 1} 기",
            "preprior": f"제 {t - 2} 기",
            "this_bs_dt": f"{y}.{end} 현재", "this_is_dt": f"{y}.01.01 ~ {y}.{end}",
            "prior_bs_dt": f"{y - 1}.12.31 현재", "prior_is_dt": f"{y - 1}.01.01 ~ {y - 1}.{end}",
            "preprior_bs_dt": f"{y - 2}.12.31 현재", "preprior_is_dt": f"{y - 2}.01.01 ~ {y - 2}.12.31",
        }
        for key, value in row.items():
            out[key].append(value)
    return out
