"""Convertible-bond issuance decisions (OpenDART cvbdIsDecsn), priced off the KRX paths.

Mostly KOSDAQ small caps decide CB issues; each decision's conversion price is set at or
just above the reference price the rules prescribe (the higher of the one-month and one-week
average closes and the last close before the board resolution), and its refixing floor is
usually 70% of it. Values are strings as the API prints them: thousands separators on
amounts, "YYYY년 MM월 DD일" dates and "-" for blanks.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .prices import PricePaths

CB_COUNT = 1_500
_FORCED = ("00367482",)  # 라이트론, the paper's example company, always has CB decisions
_FLOOR_RATIO = ((0.7, "증권의 발행 및 공시 등에 관한 규정 제5-23조 제2호"),
                (0.8, "발행당시 전환가액의 80%"), (1.0, "발행당시 전환가액의 100%"))
_PURPOSES = ("fdpp_fclt", "fdpp_bsninh", "fdpp_op", "fdpp_dtrp", "fdpp_ocsa", "fdpp_etc")
_PURPOSE_P = np.array([0.12, 0.01, 0.5, 0.2, 0.15, 0.02])


def _won(v: int) -> str:
    return f"{v:,}" if v else "-"


def _kdate(d: np.datetime64) -> str:
    s = str(d)
    return f"{s[:4]}년 {s[5:7]}월 {s[8:10]}일"


def build_cb(rng: np.random.Generator, listed: pa.Table, paths: PricePaths, n_total: int) -> list[dict]:
    """CB decision rows (with the internal _rcept_dt) in no particular order."""
    cls = listed["corp_cls"].to_numpy(zero_copy_only=False)
    codes = listed["corp_code"].to_numpy(zero_copy_only=False)
    real = listed["_real"].to_numpy(zero_copy_only=False)
    cap = paths.close[:, 0] * paths.shares
    weight = np.select([cls == "K", cls == "N"], [1.0, 0.3], 0.12) / np.sqrt(cap / np.median(cap))
    weight[real] = 0.0
    forced = np.flatnonzero(np.isin(codes, _FORCED))
    issuers = np.concatenate([np.repeat(forced, 2),
                              rng.choice(len(cls), size=max(n_total - 2 * len(forced), 0), p=weight / weight.sum())])
    t = len(paths.days)
    day_idx = rng.integers(21, t - 1, size=len(issuers))
    order = np.lexsort((day_idx, issuers))
    issuers, day_idx = issuers[order], day_idx[order]
    first_series = rng.integers(1, 15, size=len(cls))
    series = np.zeros(len(issuers), dtype=int)
    for i in range(1, len(issuers)):
        series[i] = series[i - 1] + 1 if issuers[i] == issuers[i - 1] else 0
    rows = []
    for k, (c, d) in enumerate(zip(issuers, day_idx)):
        window = paths.close[c, d - 20:d]
        reference = max(window.mean(), window[-5:].mean(), window[-1])
        cv_prc = int(np.ceil(reference * rng.choice([1.0, 1.0, 1.02, 1.05])))
        ratio, basis = _FLOOR_RATIO[rng.choice(3, p=[0.86, 0.09, 0.05])]
        floor = int(np.ceil(cv_prc * ratio))
        cap_won = int(paths.close[c, d] * paths.shares[c])
        fta = int(np.clip(np.round(cap_won * rng.uniform(0.03, 0.15), -8), 1e9, 1e11))
        split = rng.multinomial(10, _PURPOSE_P) * (fta // 10)
        split[np.argmax(split)] += fta - split.sum()
        public = rng.random() < 0.06
        bddd = paths.days[d]
        pymd = np.busday_offset(bddd, int(rng.integers(1, 10)), roll="forward")
        maturity = pymd + np.timedelta64(int(rng.choice([3, 3, 5])) * 365 + 1, "D")
        cnt = fta // cv_prc
        row = {
            "rcept_no": "", "corp_cls": cls[c], "corp_code": codes[c], "corp_name": "",
            "bd_tm": str(first_series[c] + series[k]),
            "bd_knd": f"무기명식 이권부 무보증 {'공모' if public else '사모'} 전환사채",
            "bd_fta": _won(fta), "atcsc_rmislmt": "-", "ovis_fta": "-", "ovis_fta_crn": "-",
            "ovis_ster": "-", "ovis_isar": "-", "ovis_mktnm": "-",
            **{p: _won(int(v)) for p, v in zip(_PURPOSES, split)},
            "bd_intr_ex": f"{rng.choice([0.0, 0.0, 1.0, 2.0]):.1f}", "bd_intr_sf": f"{rng.choice([0.0, 2.0, 3.0, 4.0, 5.0]):.1f}",
            "bd_mtd": _kdate(maturity), "bdis_mthn": "공모" if public else "사모",
            "cv_rt": "100", "cv_prc": _won(cv_prc), "cvisstk_knd": "기명식 보통주", "cvisstk_cnt": _won(int(cnt)),
            "cvisstk_tisstk_vs": f"{cnt / paths.shares[c] * 100:.2f}",
            "cvrqpd_bgd": _kdate(pymd + np.timedelta64(365, "D")),
            "cvrqpd_edd": _kdate(maturity - np.timedelta64(30, "D")),
            "act_mktprcfl_cvprc_lwtrsprc": _won(floor), "act_mktprcfl_cvprc_lwtrsprc_bs": basis,
            "rmislmt_lt70p": "-", "abmg": "-", "sbd": _kdate(pymd), "pymd": _kdate(pymd),
            "rpmcmp": "-", "grint": "-", "bddd": _kdate(bddd),
            "od_a_at_t": str(rng.integers(1, 4)), "od_a_at_b": "0",
            "adt_a_atn": "참석" if rng.random() < 0.8 else "-",
            "rs_sm_atn": "예" if public else "아니오", "ex_sm_r": "-" if public else "사모발행",
            "ovis_ltdtl": "-", "ftc_stt_atn": "미해당",
            "_rcept_dt": str(bddd).replace("-", ""),
            "_company": int(c),
        }
        rows.append(row)
    return rows
