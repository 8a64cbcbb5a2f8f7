"""The school register: every school with the fields of NEIS ``schoolInfo`` (table ``edu_school``).

Schools are spread over the 17 provinces in proportion to the real number of schools of each
kind per province (so Jeju has ~45 middle schools at full scale), then over each province's
시·군·구. Besides the NEIS fields each school keeps internal columns that other tables and
domains chain on: ``_sido_code``/``_sgg_code`` (real region codes), ``_kind_code`` (학교알리미
schulKndCode), ``_pbi_code`` (학교알리미 SCHUL_CODE), ``_urban`` and coordinates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from .. import korean
from ..context import BuildContext
from ..facts import GYEONGGI_BY_CODE, PROVINCE_CENTRES, PROVINCES, SEOUL_DISTRICTS
from ..korean import romanize
from .regions import (
    AREA_CODES,
    NEIS_CODE_PREFIX,
    OFFICE_DOMAINS,
    POSTCODE_RANGES,
    sggs_of,
)

LOAD_DTM = "20250301"  # NEIS stamps every row with its load date


@dataclass(frozen=True)
class Kind:
    """One school kind: its 학교알리미 code, NEIS name, English name and real counts per province."""

    code: str  # schulKndCode
    name: str  # SCHUL_KND_SC_NM
    suffix: str  # name ending, e.g. "초등학교"
    english: str
    web: str  # homepage second-level label (es/ms/hs/sc)
    per_province: tuple[int, ...]  # real school counts in PROVINCES order (2023 education statistics, rounded)


KINDS: tuple[Kind, ...] = (
    Kind("02", "초등학교", "초등학교", "Elementary School", "es",
         (605, 304, 242, 269, 155, 149, 122, 55, 1330, 350, 259, 410, 417, 428, 470, 501, 120)),
    Kind("03", "중학교", "중학교", "Middle School", "ms",
         (388, 172, 125, 139, 91, 89, 64, 23, 657, 162, 128, 187, 208, 246, 272, 268, 45)),
    Kind("04", "고등학교", "고등학교", "High School", "hs",
         (318, 140, 93, 125, 68, 62, 56, 24, 492, 118, 84, 117, 133, 146, 186, 192, 30)),
    Kind("05", "특수학교", "학교", "School", "sc",
         (32, 15, 10, 11, 5, 6, 4, 2, 38, 8, 10, 9, 11, 9, 8, 11, 3)),
    Kind("07", "각종학교(고)", "국제학교", "International School", "hs",
         (8, 3, 2, 4, 1, 1, 1, 1, 12, 1, 1, 2, 1, 1, 2, 3, 1)),
)
KIND_BY_CODE = {k.code: k for k in KINDS}

# High-school types: (HS_SC_NM, SPCLY_PURPS_HS_ORD_NM, HS_GNRL_BUSNS_SC_NM, name ending, weight).
HS_TYPES = (
    ("일반고", None, "일반계", "고등학교", 0.70),
    ("특성화고", None, "전문계", "공업고등학교", 0.07),
    ("특성화고", None, "전문계", "정보산업고등학교", 0.05),
    ("특성화고", None, "전문계", "상업고등학교", 0.04),
    ("특목고", "과학고", "일반계", "과학고등학교", 0.012),
    ("특목고", "외국어고", "일반계", "외국어고등학교", 0.013),
    ("특목고", "예술고", "일반계", "예술고등학교", 0.012),
    ("특목고", "체육고", "일반계", "체육고등학교", 0.006),
    ("특목고", "마이스터고", "전문계", "기술고등학교", 0.02),
    ("자율고", None, "일반계", "고등학교", 0.067),
)


def _allocate(weights: np.ndarray, total: int) -> np.ndarray:
    """Integer counts proportional to ``weights`` summing to ``total`` (largest remainder)."""
    raw = weights / weights.sum() * total
    counts = np.floor(raw).astype(int)
    order = np.argsort(-(raw - counts), kind="stable")
    counts[order[: total - counts.sum()]] += 1
    return counts


def _unique_names(rng: np.random.Generator, stems: list[str], endings: list[str], offices: list[str]) -> list[str]:
    """School names unique within an office: "<sgg stem><place word><ending>", longer words on collision."""
    taken: set[tuple[str, str]] = set()
    out = []
    for stem, ending, office in zip(stems, endings, offices):
        syllables = 2
        while True:
            word = korean.place_words(rng, 1, syllables)[0]
            name = f"{stem}{word}{ending}" if rng.random() < 0.55 else f"{word}{ending}"
            if (office, name) not in taken:
                break
            syllables = 3 if syllables == 2 else syllables
        taken.add((office, name))
        out.append(name)
    return out


def _district_centre(sido: str, sgg: str) -> tuple[float, float]:
    if sido == "11":
        d = next(d for d in SEOUL_DISTRICTS if d.code == sgg)
        return d.lat, d.lon
    if sgg in GYEONGGI_BY_CODE:
        m = GYEONGGI_BY_CODE[sgg]
        return m.lat, m.lon
    return PROVINCE_CENTRES[sido]


def build_schools(ctx: BuildContext) -> pa.Table:
    """Generate the school register and return it (also registered as ``edu_school``)."""
    rng = ctx.rng("education.schools")
    rows: dict[str, list] = {k: [] for k in ("prov", "sgg", "kind")}
    for ki, kind in enumerate(KINDS):
        per_prov = _allocate(np.array(kind.per_province, float), ctx.n(sum(kind.per_province)))
        for pi, count in enumerate(per_prov):
            prov = PROVINCES[pi]
            sggs = sggs_of(prov.code, prov.name)
            w = np.array([s.weight for s in sggs])
            picks = rng.choice(len(sggs), size=count, p=w / w.sum())
            rows["prov"] += [pi] * count
            rows["sgg"] += [sggs[j] for j in picks]
            rows["kind"] += [ki] * count
    n = len(rows["prov"])
    provs = [PROVINCES[i] for i in rows["prov"]]
    sggs = rows["sgg"]
    kinds = [KINDS[i] for i in rows["kind"]]
    kind_codes = np.array([k.code for k in kinds])
    is_high = kind_codes == "04"

    # Founding: 국립/공립/사립 by kind, coeducation, high-school type.
    fond_p = {"02": (0.003, 0.985, 0.012), "03": (0.003, 0.79, 0.207), "04": (0.005, 0.585, 0.41),
              "05": (0.03, 0.6, 0.37), "07": (0.0, 0.1, 0.9)}
    fond = [("국립", "공립", "사립")[rng.choice(3, p=fond_p[k])] for k in kind_codes]
    hs_w = np.array([t[4] for t in HS_TYPES])
    hs_type = np.where(is_high, rng.choice(len(HS_TYPES), size=n, p=hs_w / hs_w.sum()), -1)
    coedu_draw = rng.random(n)
    coedu = np.where(kind_codes == "02", "남여공학",
                     np.where(coedu_draw < 0.78, "남여공학", np.where(coedu_draw < 0.89, "남", "여")))
    endings = []
    for k, t, c in zip(kinds, hs_type, coedu):
        ending = HS_TYPES[t][3] if t >= 0 else k.suffix
        if c == "여" and k.code in ("03", "04") and ending in ("중학교", "고등학교"):
            ending = "여자" + ending
        endings.append(ending)
    stems = [p.short if rng.random() < 0.3 else s.name.split(" ")[0].rstrip("시군구") for p, s in zip(provs, sggs)]
    offices = [p.neis_office for p in provs]
    names = _unique_names(rng, stems, endings, offices)

    # Codes: NEIS 7-digit code (office prefix + serial) and the 학교알리미 code (office + 7 digits).
    sd_code = np.empty(n, dtype=object)
    pbi_code = np.empty(n, dtype=object)
    office_arr = np.array(offices)
    for office in sorted(set(offices)):
        idx = np.flatnonzero(office_arr == office)
        serial = rng.choice(10000, size=len(idx), replace=False)
        sd_code[idx] = [f"{NEIS_CODE_PREFIX[office]}{s:04d}" for s in serial]
        pbi_code[idx] = [f"{office}{s:07d}" for s in rng.choice(10**6, size=len(idx), replace=False)]

    founded_year = np.where(rng.random(n) < 0.03, rng.integers(2019, 2025, n),
                            rng.integers(1946, 2019, n))
    fond_mmdd = rng.integers(3, 6, n) * 100 + rng.integers(1, 29, n)
    memrd_mmdd = rng.integers(3, 6, n) * 100 + rng.integers(1, 29, n)
    zip_lo = np.array([POSTCODE_RANGES[p.code][0] for p in provs])
    zip_hi = np.array([POSTCODE_RANGES[p.code][1] for p in provs])
    zips = (rng.integers(0, 1000, n) + 1000 * (zip_lo + (rng.random(n) * (zip_hi - zip_lo + 1)).astype(int)))
    areas = [AREA_CODES[p.code] for p in provs]
    lat, lon = korean.jitter_coords(rng, [_district_centre(p.code, s.code) for p, s in zip(provs, sggs)], 0.03)
    roads = korean.road_addresses(rng, [f"{p.name} {s.name}" for p, s in zip(provs, sggs)])
    dongs = korean.place_words(rng, n)
    urban = np.array([not s.name.endswith("군") for s in sggs])

    eng, homepage = [], []
    for name, k, office, end in zip(names, kinds, offices, endings):
        stem = name[: -len(end)]
        roman = romanize(stem)
        eng.append(f"{roman.capitalize()} {k.english}")
        homepage.append(f"http://{roman}.{OFFICE_DOMAINS[office]}.{k.web}.kr")

    def hs(col: int, default):
        return [HS_TYPES[t][col] if t >= 0 else default for t in hs_type]

    table = {
        "ATPT_OFCDC_SC_CODE": offices,
        "ATPT_OFCDC_SC_NM": [p.office_name for p in provs],
        "SD_SCHUL_CODE": sd_code.tolist(),
        "SCHUL_NM": names,
        "ENG_SCHUL_NM": eng,
        "SCHUL_KND_SC_NM": [k.name for k in kinds],
        "LCTN_SC_NM": [p.name for p in provs],
        "JU_ORG_NM": [s.office for s in sggs],
        "FOND_SC_NM": fond,
        "ORG_RDNZC": [f"{z:05d}" for z in zips],
        "ORG_RDNMA": roads,
        "ORG_RDNDA": [f"({d}동)" for d in dongs],
        "ORG_TELNO": korean.phone_numbers(rng, areas),
        "HMPG_ADRES": homepage,
        "COEDU_SC_NM": coedu.tolist(),
        "ORG_FAXNO": korean.phone_numbers(rng, areas),
        "HS_SC_NM": hs(0, None),
        "INDST_SPECL_CCCCL_EXST_YN": ["Y" if h == "특성화고" and rng.random() < 0.3 else "N" for h in hs(0, None)],
        "HS_GNRL_BUSNS_SC_NM": hs(2, "해당없음"),
        "SPCLY_PURPS_HS_ORD_NM": hs(1, None),
        "ENE_BFE_SEHF_SC_NM": ["후기" if h in ("일반고", "자율고") else "전기" for h in hs(0, None)],
        "DGHT_SC_NM": np.where(is_high & (rng.random(n) < 0.02), "주야", "주간").tolist(),
        "FOND_YMD": [f"{y}{md:04d}" for y, md in zip(founded_year, fond_mmdd)],
        "FOAS_MEMRD": [f"{y}{md:04d}" for y, md in zip(founded_year, memrd_mmdd)],
        "LOAD_DTM": [LOAD_DTM] * n,
        "_sido_code": [p.code for p in provs],
        "_sgg_code": [s.code for s in sggs],
        "_sgg_nm": [s.name for s in sggs],
        "_kind_code": kind_codes.tolist(),
        "_pbi_code": pbi_code.tolist(),
        "_urban": urban,
        "_hs_type": hs_type,
        "_founded_year": founded_year,
        "_lat": lat,
        "_lon": lon,
    }
    t = pa.table(table)
    ctx.add_table("edu_school", t, sort_by=("ATPT_OFCDC_SC_CODE", "SD_SCHUL_CODE"),
                  indexes=(("SD_SCHUL_CODE",),), key=("SD_SCHUL_CODE",),
                  description="NEIS schoolInfo: every school with office, region and founding data")
    return t
