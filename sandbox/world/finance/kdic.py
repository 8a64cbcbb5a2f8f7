"""KDIC (예금보험공사) data: insured financial institutions, their products and the fund build-up.

Institution names are the real banks, insurers, securities firms and savings banks for the
well-known part of each sector and generated names for the long tail; addresses, phone
numbers and coordinates are generated. Each institution sells a few products whose
protection status (isrgTgtYn) follows the Depositor Protection Act's rules per product kind,
so the chain institution → products → "is this protected?" works.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .. import korean
from ..facts import PROVINCE_CENTRES
from ..korean import romanize

# sector → (real names with their home pages, total institutions in the sector)
SECTORS: dict[str, tuple[tuple[tuple[str, str], ...], int]] = {
    "은행": ((("국민은행", "www.kbstar.com"), ("신한은행", "www.shinhan.com"), ("우리은행", "www.wooribank.com"),
             ("하나은행", "www.kebhana.com"), ("한국스탠다드차타드은행", "www.standardchartered.co.kr"),
             ("한국씨티은행", "www.citibank.co.kr"), ("아이엠뱅크", "www.imbank.co.kr"),
             ("부산은행", "www.busanbank.co.kr"), ("경남은행", "www.knbank.co.kr"), ("광주은행", "www.kjbank.com"),
             ("전북은행", "www.jbbank.co.kr"), ("제주은행", "www.e-jejubank.com"), ("농협은행", "banking.nonghyup.com"),
             ("수협은행", "www.suhyupbank.co.kr"), ("케이뱅크", "www.kbanknow.com"), ("카카오뱅크", "www.kakaobank.com"),
             ("토스뱅크", "www.tossbank.com")), 17),
    "보험회사": ((("삼성생명보험", "www.samsunglife.com"), ("한화생명보험", "www.hanwhalife.com"),
                ("교보생명보험", "www.kyobo.com"), ("신한라이프생명보험", "www.shinhanlife.co.kr"),
                ("NH농협생명보험", "www.nhlife.co.kr"), ("동양생명보험", "www.myangel.co.kr"),
                ("미래에셋생명보험", "life.miraeasset.com"), ("흥국생명보험", "www.heungkuklife.co.kr"),
                ("삼성화재해상보험", "www.samsungfire.com"), ("현대해상화재보험", "www.hi.co.kr"),
                ("DB손해보험", "www.idbins.com"), ("KB손해보험", "www.kbinsure.co.kr"),
                ("메리츠화재해상보험", "www.meritzfire.com"), ("한화손해보험", "www.hwgeneralins.com"),
                ("롯데손해보험", "www.lotteins.co.kr"), ("흥국화재해상보험", "www.heungkukfire.co.kr")), 50),
    "투자매매중개업자": ((("미래에셋증권", "securities.miraeasset.com"), ("한국투자증권", "securities.koreainvestment.com"),
                   ("NH투자증권", "www.nhqv.com"), ("삼성증권", "www.samsungpop.com"), ("KB증권", "www.kbsec.com"),
                   ("키움증권", "www.kiwoom.com"), ("신한투자증권", "www.shinhansec.com"), ("하나증권", "www.hanaw.com"),
                   ("메리츠증권", "home.imeritz.com"), ("대신증권", "www.daishin.com"), ("유안타증권", "www.myasset.com"),
                   ("한화투자증권", "www.hanwhawm.com"), ("교보증권", "www.iprovest.com"), ("현대차증권", "www.hmsec.com")), 90),
    "상호저축은행": ((("SBI저축은행", "www.sbisb.co.kr"), ("OK저축은행", "www.oksavingsbank.com"),
                  ("웰컴저축은행", "www.welcomebank.co.kr"), ("한국투자저축은행", "www.kisb.co.kr"),
                  ("페퍼저축은행", "www.pepperbank.kr"), ("애큐온저축은행", "www.acuonsb.co.kr"),
                  ("신한저축은행", "www.shinhansavings.com"), ("KB저축은행", "www.kbsavings.com"),
                  ("하나저축은행", "www.hanasavings.com"), ("NH저축은행", "www.nhsavingsbank.co.kr")), 79),
}
_GENERATED_TAIL = {"은행": "은행", "보험회사": "생명보험", "투자매매중개업자": "투자증권", "상호저축은행": "저축은행"}
_REGION_CODES = ("11", "11", "11", "26", "27", "28", "29", "30", "31", "41", "41", "43", "44", "47", "48")
_PROVINCE_NAMES = {"11": "서울특별시", "26": "부산광역시", "27": "대구광역시", "28": "인천광역시", "29": "광주광역시",
                   "30": "대전광역시", "31": "울산광역시", "41": "경기도", "43": "충청북도", "44": "충청남도",
                   "47": "경상북도", "48": "경상남도"}

# Product kinds per sector: (prdKndNm, protected?, name stems)
PRODUCT_KINDS: dict[str, tuple[tuple[str, str, tuple[str, ...]], ...]] = {
    "은행": (("보통예금", "Y", ("입출금통장", "모바일통장", "급여통장")), ("정기예금", "Y", ("정기예금", "e-정기예금")),
            ("정기적금", "Y", ("자유적금", "첫거래적금")), ("외화예금", "Y", ("외화보통예금",)),
            ("주가연계예금(ELD)", "Y", ("지수연동예금",)), ("양도성예금증서(CD)", "N", ("양도성예금증서",)),
            ("환매조건부채권(RP)", "N", ("RP",)), ("특정금전신탁", "N", ("특정금전신탁",))),
    "보험회사": (("개인 보장성보험", "Y", ("종신보험", "건강보험", "암보험")), ("연금보험", "Y", ("연금보험", "연금저축보험")),
              ("저축성보험", "Y", ("저축보험",)), ("변액보험 주계약", "N", ("변액연금보험", "변액유니버설보험")),
              ("법인보험계약", "N", ("단체보험",))),
    "투자매매중개업자": (("투자자예탁금", "Y", ("위탁계좌 예탁금",)), ("개인형퇴직연금(IRP) 예금", "Y", ("IRP 예금",)),
                  ("주가연계증권(ELS)", "N", ("ELS",)), ("환매조건부채권(RP)", "N", ("RP",)),
                  ("CMA(RP형)", "N", ("CMA RP형",)), ("집합투자증권(펀드)", "N", ("펀드",))),
    "상호저축은행": (("보통예금", "Y", ("보통예금", "파킹통장")), ("정기예금", "Y", ("정기예금", "회전정기예금")),
                  ("정기적금", "Y", ("정기적금", "자유적금")), ("표지어음", "Y", ("표지어음",)),
                  ("후순위채권", "N", ("후순위채권",))),
}
FUND_ACCOUNTS = ("은행계정", "금융투자계정", "생명보험계정", "손해보험계정", "종합금융계정", "상호저축은행계정")
_FUND_SCALE = np.array([280_000, 30_000, 90_000, 40_000, 200, 70_000])  # monthly premium, million won
_FUND_START, _FUND_END = "2015-01", "2026-10"


def build_institutions(rng: np.random.Generator) -> pa.Table:
    """kdic_institution: one row per insured institution, numbered like the list (num 1..n)."""
    sector, names, urls = [], [], []
    taken = {nm for real, _ in SECTORS.values() for nm, _ in real}
    for sec, (real, total) in SECTORS.items():
        extra = total - len(real)
        stems = korean.place_words(rng, extra * 3)
        generated = list(dict.fromkeys(s + _GENERATED_TAIL[sec] for s in stems if s + _GENERATED_TAIL[sec] not in taken))
        generated = generated[:extra]
        taken.update(generated)
        sector += [sec] * (len(real) + len(generated))
        names += [nm for nm, _ in real] + generated
        urls += [u for _, u in real] + [f"www.{romanize(nm).lower()}.co.kr" for nm in generated]
    n = len(names)
    region = np.array(_REGION_CODES)[rng.integers(0, len(_REGION_CODES), n)]
    region[np.array(sector) != "상호저축은행"] = "11"  # banks, insurers and brokers sit in Seoul
    centres = [PROVINCE_CENTRES[r] for r in region]
    lat, lon = korean.jitter_coords(rng, centres, spread=0.03)
    area = {"11": "02", "26": "051", "27": "053", "28": "032", "29": "062", "30": "042", "31": "052",
            "41": "031", "43": "043", "44": "041", "47": "054", "48": "055"}
    return pa.table({
        "num": np.arange(1, n + 1, dtype=np.int64),
        "fncsecDscdNm": sector,
        "fnccmpNm": names,
        "fncIstAdr": korean.road_addresses(rng, [_PROVINCE_NAMES[r] for r in region]),
        "cttpc": korean.phone_numbers(rng, [area[r] for r in region]),
        "hmpgUrladr": urls,
        "isrgTgtYn": ["Y"] * n,
        "lttdVal": lat,
        "lgtdVal": lon,
    })


def build_products(rng: np.random.Generator, institutions: pa.Table) -> pa.Table:
    """kdic_product: the products each institution sells, with their protection status."""
    rows: dict[str, list] = {k: [] for k in ("fncsecDscdNm", "fnccmpNm", "prdKndNm", "prdNm", "isrgTgtYn")}
    adjectives = ("", "스마트 ", "플러스 ", "든든 ", "더드림 ", "행복 ")
    for sec, name in zip(institutions["fncsecDscdNm"].to_pylist(), institutions["fnccmpNm"].to_pylist()):
        brand = name.removesuffix("저축은행").removesuffix("은행").removesuffix("보험") or name
        for kind, protected, stems in PRODUCT_KINDS[sec]:
            for stem in stems:
                if rng.random() < 0.75:
                    rows["fncsecDscdNm"].append(sec)
                    rows["fnccmpNm"].append(name)
                    rows["prdKndNm"].append(kind)
                    rows["prdNm"].append(f"{brand} {adjectives[int(rng.integers(len(adjectives)))]}{stem}")
                    rows["isrgTgtYn"].append(protected)
    return pa.table({"num": np.arange(1, len(rows["prdNm"]) + 1, dtype=np.int64), **rows})


def build_fund(rng: np.random.Generator) -> pa.Table:
    """kdic_fund: monthly deposit-insurance fund build-up per fund account (million won)."""
    months = np.arange(np.datetime64(_FUND_START), np.datetime64(_FUND_END) + 1)
    m, a = len(months), len(FUND_ACCOUNTS)
    growth = np.linspace(1.0, 1.6, m)[:, None]
    scale = _FUND_SCALE[None, :] * growth
    quarter_month = (months.astype(int) % 3 == 0)[:, None]  # premiums are due quarterly
    premium = np.round(scale * np.where(quarter_month, 2.6, 0.2) * rng.uniform(0.9, 1.1, (m, a)))
    ym = np.datetime_as_string(months)
    return pa.table({
        "num": np.arange(1, m * a + 1, dtype=np.int64),
        "baseYr": np.repeat([s[:4] for s in ym], a),
        "baseMn": np.repeat([s[5:7] for s in ym], a),
        "fndMakDvsnNm": np.tile(FUND_ACCOUNTS, m),
        "prmfeeAmt": premium.reshape(-1).astype(np.int64),
        "sscrAmt": np.round(scale * rng.uniform(0, 0.05, (m, a))).reshape(-1).astype(np.int64),
        "spprFundRtrvAmt": np.round(scale * rng.exponential(0.3, (m, a))).reshape(-1).astype(np.int64),
        "mnivBnfAmt": np.round(scale * rng.uniform(0.05, 0.2, (m, a))).reshape(-1).astype(np.int64),
        "etcAmt": np.round(scale * rng.uniform(0, 0.02, (m, a))).reshape(-1).astype(np.int64),
        "_baseTm": np.repeat([s.replace("-", "") for s in ym], a),
    })
