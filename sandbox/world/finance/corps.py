"""DART-registered corporations: real large caps plus generated listed and unlisted companies.

One row per corporation with the company.json fields exactly as OpenDART names them, plus
the internal market parameters (``_shares``, ``_price0``, ``_sigma``) the price generator
starts from. Real companies keep their real DART corp_code and KRX ticker; generated ones
draw codes from the same ranges while avoiding the real ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from .. import korean
from ..facts import GYEONGGI_MUNICIPALITIES, SEOUL_DISTRICTS


@dataclass(frozen=True)
class RealCorp:
    """A real listed company; empty strings are filled with generated values."""

    corp_code: str
    stock_code: str
    stock_name: str
    corp_name: str  # formal name as company.json prints it
    corp_name_eng: str
    corp_cls: str
    induty_code: str
    shares: int  # approximate common shares outstanding (late 2024)
    price0: int  # approximate closing price at the start of November 2024
    est_dt: str = ""
    adres: str = ""
    hm_url: str = ""


REAL_CORPS: tuple[RealCorp, ...] = (
    RealCorp("00126380", "005930", "삼성전자", "삼성전자(주)", "SAMSUNG ELECTRONICS CO,.LTD", "Y", "264",
             5_969_782_550, 58_000, "19690113", "경기도 수원시 영통구  삼성로 129 (매탄동)", "www.samsung.com/sec"),
    RealCorp("00164779", "000660", "SK하이닉스", "에스케이하이닉스(주)", "SK hynix Inc.", "Y", "261",
             728_002_365, 190_000, "", "경기도 이천시 부발읍 경충대로 2091", "www.skhynix.com"),
    RealCorp("00164742", "005380", "현대차", "현대자동차(주)", "Hyundai Motor Company", "Y", "301",
             204_757_766, 210_000, "19671229", "서울특별시 서초구 헌릉로 12", "www.hyundai.com"),
    RealCorp("00106641", "000270", "기아", "기아(주)", "Kia Corporation", "Y", "301",
             397_672_632, 95_000, "", "서울특별시 서초구 헌릉로 12", "www.kia.com"),
    RealCorp("00164788", "012330", "현대모비스", "현대모비스(주)", "HYUNDAI MOBIS CO.,LTD", "Y", "303",
             91_795_094, 240_000, "", "서울특별시 강남구 테헤란로 203", "www.mobis.co.kr"),
    RealCorp("00401731", "066570", "LG전자", "엘지전자(주)", "LG Electronics Inc.", "Y", "264",
             163_647_814, 92_000, "20020401", "서울특별시 영등포구 여의대로 128", "www.lge.co.kr"),
    RealCorp("00356361", "051910", "LG화학", "(주)엘지화학", "LG Chem, Ltd.", "Y", "201",
             70_592_343, 300_000, "20010403", "서울특별시 영등포구 여의대로 128", "www.lgchem.com"),
    RealCorp("00126362", "006400", "삼성SDI", "삼성에스디아이(주)", "SAMSUNG SDI CO.,LTD.", "Y", "282",
             68_764_530, 290_000, "", "경기도 용인시 기흥구 공세로 150-20", "www.samsungsdi.co.kr"),
    RealCorp("00155319", "005490", "POSCO홀딩스", "포스코홀딩스(주)", "POSCO Holdings Inc.", "Y", "715",
             84_571_230, 330_000, "", "", "www.posco-inc.com"),
    RealCorp("00421045", "068270", "셀트리온", "(주)셀트리온", "CELLTRION, INC.", "Y", "211",
             216_920_000, 190_000, "", "인천광역시 연수구 아카데미로 23", "www.celltrion.com"),
    RealCorp("00266961", "035420", "NAVER", "네이버(주)", "NAVER Corporation", "Y", "631",
             158_437_008, 180_000, "19990602", "경기도 성남시 분당구 정자일로 95", "www.navercorp.com"),
    RealCorp("00258801", "035720", "카카오", "(주)카카오", "Kakao Corp.", "Y", "631",
             442_000_000, 36_000, "19950216", "제주특별자치도 제주시 첨단로 242", "www.kakaocorp.com"),
    RealCorp("00367482", "069540", "라이트론", "라이트론(주)", "LIGHTRON FIBER-OPTIC DEVICES INC.", "K", "264",
             32_000_000, 1_800),
)

# Generated listed companies per market at full scale (KRX late 2024: ~840 / ~1,780 / ~120).
LISTED_COUNTS = {"Y": 830, "K": 1_560, "N": 110}
UNLISTED_COUNT = 6_000
_PRICE_MEDIAN = {"Y": 15_000, "K": 6_000, "N": 3_000}
_SHARES_MEDIAN = {"Y": 30e6, "K": 18e6, "N": 6e6}
_DAILY_SIGMA = {"Y": 0.018, "K": 0.028, "N": 0.032, "E": 0.0}

# KSIC industry (induty_code) per company-name tail, so names and industries agree.
_TAIL_INDUSTRY = {
    "전자": "264", "바이오": "211", "테크": "292", "솔루션": "582", "케미칼": "201", "에너지": "351",
    "제약": "212", "건설": "411", "중공업": "311", "물산": "467", "산업": "259", "시스템": "582",
    "소재": "222", "정밀": "292", "반도체": "261", "디스플레이": "262", "로직스": "529",
    "모빌리티": "303", "헬스케어": "271", "엔터테인먼트": "591", "푸드": "107", "게임즈": "582",
    "네트웍스": "612", "인베스트": "649", "홀딩스": "715", "파트너스": "649", "메디칼": "271",
    "이노베이션": "701", "머티리얼즈": "222", "통신": "612",
}

# Where generated companies sit: (address prefix, phone area code, 법인등록번호 office prefix).
_OTHER_CITIES = (("부산광역시 해운대구", "051", "1801"), ("대구광역시 달서구", "053", "1701"),
                 ("인천광역시 연수구", "032", "1201"), ("대전광역시 유성구", "042", "1601"),
                 ("광주광역시 북구", "062", "2001"), ("울산광역시 남구", "052", "2301"),
                 ("충청북도 청주시", "043", "1501"), ("충청남도 천안시", "041", "1615"),
                 ("경상남도 창원시", "055", "1940"), ("경상북도 구미시", "054", "1760"))
_LOCATIONS = tuple([(f"서울특별시 {d.name}", "02", "1101") for d in SEOUL_DISTRICTS]
                   + [(f"경기도 {m.name}", "031", "1301") for m in GYEONGGI_MUNICIPALITIES]
                   + list(_OTHER_CITIES))
_LOCATION_P = np.array([2.2] * len(SEOUL_DISTRICTS) + [1.0] * len(GYEONGGI_MUNICIPALITIES)
                       + [1.2] * len(_OTHER_CITIES))
_LOCATION_P = _LOCATION_P / _LOCATION_P.sum()



def isin_check_digit(body: str) -> int:
    """ISIN check digit (ISO 6166): letters → two digits, then the Luhn algorithm."""
    digits = "".join(str(int(c, 36)) for c in body)
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = int(d) * (2 if i % 2 == 0 else 1)
        total += n // 10 + n % 10
    return (10 - total % 10) % 10


def isin_for(ticker: str) -> str:
    body = f"KR7{ticker}00"
    return body + str(isin_check_digit(body))


def _unique_codes(rng: np.random.Generator, n: int, low: int, high: int, step: int, taken: set[int]) -> np.ndarray:
    pool = np.arange(low, high, step)
    pool = pool[~np.isin(pool, np.array(sorted(taken), dtype=np.int64))]
    return rng.choice(pool, size=n, replace=False)


def build_corps(ctx) -> pa.Table:
    """The dart_corp table (listed first in market order, then unlisted)."""
    rng = ctx.rng("finance.corps")
    cls = np.array([c for c, n in LISTED_COUNTS.items() for _ in range(ctx.n(n))]
                   + ["E"] * ctx.n(UNLISTED_COUNT))
    n = len(cls)
    names = korean.company_names(rng, n, taken={r.stock_name for r in REAL_CORPS})
    tails = [next(t for t in _TAIL_INDUSTRY if nm.endswith(t)) for nm in names]
    corp_codes = _unique_codes(rng, n, 100_000, 1_990_000, 1, {int(r.corp_code) for r in REAL_CORPS})
    listed = cls != "E"
    tickers = np.full(n, "", dtype=object)
    tickers[listed] = [f"{t:06d}" for t in _unique_codes(
        rng, int(listed.sum()), 10, 500_000, 10, {int(r.stock_code) for r in REAL_CORPS})]
    loc = rng.choice(len(_LOCATIONS), size=n, p=_LOCATION_P)
    prefixes = [_LOCATIONS[i][0] for i in loc]
    areas = [_LOCATIONS[i][1] for i in loc]
    est = np.datetime64("1955-01-01") + rng.integers(0, 68 * 365, n).astype("timedelta64[D]")
    formal_style = rng.integers(0, 3, n)  # "(주)X", "X(주)", "주식회사 X"
    romans = [korean.romanize(nm) for nm in names]
    corp = {
        "corp_code": [f"{c:08d}" for c in corp_codes],
        "corp_name": [("(주)" + nm, nm + "(주)", "주식회사 " + nm)[s] for nm, s in zip(names, formal_style)],
        "corp_name_eng": [f"{r.upper()} CO.,LTD." if s else f"{r.capitalize()} Inc." for r, s in zip(romans, formal_style)],
        "stock_name": [nm if lst else "" for nm, lst in zip(names, listed)],
        "stock_code": list(tickers),
        "ceo_nm": korean.person_names(rng, n),
        "corp_cls": list(cls),
        "jurir_no": [f"{_LOCATIONS[i][2]}11{s:06d}{c}" for i, s, c in
                     zip(loc, rng.integers(1, 999_999, n), rng.integers(0, 10, n))],
        "bizr_no": [f"{a}{b}{c:05d}" for a, b, c in
                    zip(rng.integers(101, 900, n), rng.choice([81, 86, 87], n), rng.integers(0, 100_000, n))],
        "adres": korean.road_addresses(rng, prefixes),
        "hm_url": [f"www.{r.lower()}.co.kr" if h else "" for r, h in zip(romans, rng.random(n) < 0.8)],
        "ir_url": [""] * n,
        "phn_no": korean.phone_numbers(rng, areas),
        "fax_no": korean.phone_numbers(rng, areas),
        "induty_code": [_TAIL_INDUSTRY[t] for t in tails],
        "est_dt": list(np.char.replace(np.datetime_as_string(est), "-", "")),
        "acc_mt": ["12"] * n,
        "modify_date": list(np.char.replace(np.datetime_as_string(
            np.datetime64("2017-01-02") + rng.integers(0, 3_600, n).astype("timedelta64[D]")), "-", "")),
    }
    market = np.where(listed, cls, "Y")
    corp["_shares"] = np.round(np.exp(rng.normal(np.log([_SHARES_MEDIAN[m] for m in market]), 0.7)), -3).astype(np.int64)
    corp["_price0"] = np.exp(rng.normal(np.log([_PRICE_MEDIAN[m] for m in market]), 0.9))
    corp["_sigma"] = np.array([_DAILY_SIGMA[c] for c in cls]) * np.exp(rng.normal(0, 0.25, n))
    corp["_real"] = np.zeros(n, dtype=bool)
    _prepend_real(corp, rng)
    # The name list.json and corpCode.xml print: the stock name, or the formal name without "(주)".
    corp["_short_name"] = [s or f.replace("(주)", "").replace("주식회사 ", "")
                           for s, f in zip(corp["stock_name"], corp["corp_name"])]
    return pa.table(corp)


def _prepend_real(corp: dict, rng: np.random.Generator) -> None:
    """Put the real companies first, generating only the fields not known for them."""
    k = len(REAL_CORPS)
    loc = rng.choice(len(_LOCATIONS), size=k, p=_LOCATION_P)
    generated_addr = korean.road_addresses(rng, [_LOCATIONS[i][0] for i in loc])
    generated_est = rng.integers(1960, 2001, k)
    real = {
        "corp_code": [r.corp_code for r in REAL_CORPS],
        "corp_name": [r.corp_name for r in REAL_CORPS],
        "corp_name_eng": [r.corp_name_eng for r in REAL_CORPS],
        "stock_name": [r.stock_name for r in REAL_CORPS],
        "stock_code": [r.stock_code for r in REAL_CORPS],
        "ceo_nm": korean.person_names(rng, k),
        "corp_cls": [r.corp_cls for r in REAL_CORPS],
        "jurir_no": [f"{_LOCATIONS[i][2]}11{s:06d}{c}" for i, s, c in
                     zip(loc, rng.integers(1, 99_999, k), rng.integers(0, 10, k))],
        "bizr_no": [f"{a}81{c:05d}" for a, c in zip(rng.integers(101, 900, k), rng.integers(0, 100_000, k))],
        "adres": [r.adres or g for r, g in zip(REAL_CORPS, generated_addr)],
        "hm_url": [r.hm_url for r in REAL_CORPS],
        "ir_url": [""] * k,
        "phn_no": korean.phone_numbers(rng, [_LOCATIONS[i][1] for i in loc]),
        "fax_no": korean.phone_numbers(rng, [_LOCATIONS[i][1] for i in loc]),
        "induty_code": [r.induty_code for r in REAL_CORPS],
        "est_dt": [r.est_dt or f"{y}0{m}01" for r, y, m in zip(REAL_CORPS, generated_est, rng.integers(1, 10, k))],
        "acc_mt": ["12"] * k,
        "modify_date": ["20250102"] * k,
        "_shares": np.array([r.shares for r in REAL_CORPS], dtype=np.int64),
        "_price0": np.array([r.price0 for r in REAL_CORPS], dtype=float),
        "_sigma": np.array([_DAILY_SIGMA[r.corp_cls] for r in REAL_CORPS]),
        "_real": np.ones(k, dtype=bool),
    }
    # Samsung Electronics' registration numbers are public in its company.json.
    real["jurir_no"][0], real["bizr_no"][0] = "1301110006246", "1248100998"
    real["phn_no"][0], real["fax_no"][0] = "02-2255-0114", "031-200-7538"
    for col, values in real.items():
        corp[col] = np.concatenate([np.asarray(values), np.asarray(corp[col])]) if isinstance(values, np.ndarray) \
            else list(values) + list(corp[col])


def listed_mask(corps: pa.Table) -> np.ndarray:
    return np.asarray(corps["corp_cls"].to_numpy(zero_copy_only=False)) != "E"
