"""Where district-dataset rows are: municipalities, dongs, roads, zip codes, coordinates.

Gyeonggi rows lie in one of the 31 시·군 of ``facts.GYEONGGI_MUNICIPALITIES`` and Seoul rows
in one of the 25 자치구 of ``facts.SEOUL_DISTRICTS``. Each region gets a seeded pool of dong
and road names and its real zip-code range, and rows are scattered around the region's
centre (clipped to a radius, so a row's coordinates always match its address). Everything
is vectorised: a million addresses cost a few pyarrow kernels, not a Python loop.

Seoul LOCALDATA prints positions as EPSG:5174 TM metres; ``tm5174`` converts WGS84 with a
Bessel transverse-Mercator projection and the mean Tokyo→WGS84 datum offset over Korea
(good to a few metres, far below what the generated points need).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..facts import GYEONGGI_MUNICIPALITIES, SEOUL_DISTRICTS
from ..korean import PLACE_SYLLABLES

# Zip-code ranges (5-digit 국가기초구역번호) per Gyeonggi SIGUN_CD, approximately as assigned.
GG_ZIP_RANGES: dict[str, tuple[int, int]] = {
    "41110": (16200, 16699), "41130": (13100, 13699), "41150": (11600, 11899), "41170": (13900, 14199),
    "41190": (14400, 14799), "41210": (14200, 14399), "41220": (17700, 18199), "41250": (11300, 11399),
    "41270": (15200, 15699), "41280": (10200, 10599), "41290": (13800, 13899), "41310": (11900, 11999),
    "41360": (12000, 12399), "41370": (18100, 18199), "41390": (14900, 15199), "41410": (15800, 15899),
    "41430": (16000, 16099), "41450": (12900, 13099), "41460": (16800, 17199), "41480": (10800, 10999),
    "41500": (17300, 17499), "41550": (17500, 17699), "41570": (10000, 10199), "41590": (18200, 18699),
    "41610": (12700, 12899), "41630": (11400, 11599), "41650": (11100, 11299), "41670": (12600, 12699),
    "41800": (11000, 11099), "41820": (12400, 12499), "41830": (12500, 12599),
}
# 개방자치단체코드 (7-digit local-government codes LOCALDATA and MANAGE_NO start with).
GG_TEAM_CODES: dict[str, str] = {
    "41110": "3740000", "41130": "3780000", "41150": "3820000", "41170": "3830000", "41190": "3860000",
    "41210": "3900000", "41220": "3910000", "41250": "3920000", "41270": "3930000", "41280": "3940000",
    "41290": "3970000", "41310": "3980000", "41360": "3990000", "41370": "4000000", "41390": "4010000",
    "41410": "4020000", "41430": "4030000", "41450": "4040000", "41460": "4050000", "41480": "4060000",
    "41500": "4070000", "41550": "4080000", "41570": "4090000", "41590": "5530000", "41610": "5540000",
    "41630": "5590000", "41650": "5600000", "41670": "5700000", "41800": "4140000", "41820": "4160000",
    "41830": "4170000",
}
# Seoul: (2-letter LOCALDATA suffix, 개방자치단체코드, zip range, old 6-digit postal prefix), in
# facts.SEOUL_DISTRICTS order.
SEOUL_CODES: dict[str, tuple[str, str, tuple[int, int], str]] = {
    "종로구": ("JN", "3000000", (3000, 3199), "110"), "중구": ("JG", "3010000", (4500, 4699), "100"),
    "용산구": ("YS", "3020000", (4300, 4499), "140"), "성동구": ("SD", "3030000", (4700, 4899), "133"),
    "광진구": ("GJ", "3040000", (4900, 5099), "143"), "동대문구": ("DD", "3050000", (2400, 2699), "130"),
    "중랑구": ("JR", "3060000", (2000, 2299), "131"), "성북구": ("SB", "3070000", (2700, 2899), "136"),
    "강북구": ("GB", "3080000", (1000, 1299), "142"), "도봉구": ("DB", "3090000", (1300, 1499), "132"),
    "노원구": ("NW", "3100000", (1600, 1899), "139"), "은평구": ("EP", "3110000", (3300, 3599), "122"),
    "서대문구": ("SM", "3120000", (3600, 3799), "120"), "마포구": ("MP", "3130000", (3900, 4199), "121"),
    "양천구": ("YC", "3140000", (7900, 8099), "158"), "강서구": ("GS", "3150000", (7500, 7899), "157"),
    "구로구": ("GR", "3160000", (8200, 8399), "152"), "금천구": ("GC", "3170000", (8500, 8699), "153"),
    "영등포구": ("YD", "3180000", (7200, 7499), "150"), "동작구": ("DJ", "3190000", (6900, 7099), "156"),
    "관악구": ("GA", "3200000", (8700, 8899), "151"), "서초구": ("SC", "3210000", (6500, 6899), "137"),
    "강남구": ("GN", "3220000", (6000, 6399), "135"), "송파구": ("SP", "3230000", (5500, 5899), "138"),
    "강동구": ("GD", "3240000", (5200, 5499), "134"),
}
# Seoul district populations (10k), to spread citywide datasets over districts.
SEOUL_WEIGHTS = (14, 12, 22, 28, 34, 34, 38, 43, 29, 31, 50, 46, 31, 37, 44, 56, 40, 23, 38, 38, 49, 41,
                 54, 66, 46)


@dataclass(frozen=True)
class Region:
    """One 시·군 or 자치구 as rows see it."""

    code: str  # SIGUN_CD or Seoul 5-digit district code
    name: str
    province: str  # "경기도" / "서울특별시"
    lat: float
    lon: float
    spread: float  # std-dev of generated coordinates around the centre (degrees)
    weight: float  # relative population, sizes datasets
    zip_range: tuple[int, int]
    team_code: str
    county: bool  # 군: its dongs are 읍/면
    suffix: str = ""  # Seoul LOCALDATA district suffix
    old_post: str = ""


def gyeonggi_regions() -> list[Region]:
    out = []
    for m in GYEONGGI_MUNICIPALITIES:
        spread = 0.02 + 0.003 * np.sqrt(m.population_weight) if not m.name.endswith("군") else 0.06
        out.append(Region(m.sigun_cd, m.name, "경기도", m.lat, m.lon, float(spread), m.population_weight,
                          GG_ZIP_RANGES[m.sigun_cd], GG_TEAM_CODES[m.sigun_cd], m.name.endswith("군")))
    return out


def seoul_regions() -> list[Region]:
    out = []
    for d, w in zip(SEOUL_DISTRICTS, SEOUL_WEIGHTS):
        suffix, team, zips, post = SEOUL_CODES[d.name]
        out.append(Region(d.code, d.name, "서울특별시", d.lat, d.lon, 0.011, w, zips, team, False, suffix, post))
    return out


class AddressBook:
    """Seeded dong and road pools per region, and vectorised address/coordinate generation."""

    DONGS_PER_REGION = 24
    ROADS_PER_REGION = 90

    def __init__(self, rng: np.random.Generator, regions: list[Region]):
        self.regions = regions
        n = len(regions)
        self.dongs = _dong_pool(rng, regions, self.DONGS_PER_REGION)  # n * DONGS names, region-major
        roads = _words(rng, n * self.ROADS_PER_REGION, 2)
        kinds = rng.choice(["로", "길", "대로", "로"], size=len(roads))
        self.roads = pa.array([w + k for w, k in zip(roads, kinds)])
        self.prefix = pa.array([f"{r.province} {r.name}" for r in regions])
        self.names = pa.array([r.name for r in regions])
        self.codes = pa.array([r.code for r in regions])

    def place(self, rng: np.random.Generator, region_idx: np.ndarray) -> dict[str, object]:
        """Addresses and WGS84 coordinates for rows in the given regions (indexes into ``regions``)."""
        n = len(region_idx)
        idx = pa.array(region_idx)
        dong = pc.take(self.dongs, pa.array(region_idx * self.DONGS_PER_REGION
                                            + rng.integers(0, self.DONGS_PER_REGION, n)))
        road = pc.take(self.roads, pa.array(region_idx * self.ROADS_PER_REGION
                                            + rng.integers(0, self.ROADS_PER_REGION, n)))
        prefix = pc.take(self.prefix, idx)
        bldg = pc.cast(pa.array(rng.integers(1, 300, n)), pa.string())
        lot_main = pc.cast(pa.array(rng.integers(1, 1200, n)), pa.string())
        lot_sub = pc.cast(pa.array(rng.integers(1, 60, n)), pa.string())
        road_addr = pc.binary_join_element_wise(prefix, road, bldg, " ")
        lot_addr = pc.binary_join_element_wise(prefix, dong, pc.binary_join_element_wise(lot_main, lot_sub, "-"), " ")
        lo = np.array([r.zip_range[0] for r in self.regions])[region_idx]
        hi = np.array([r.zip_range[1] for r in self.regions])[region_idx]
        zips = pc.utf8_lpad(pc.cast(pa.array(lo + (rng.random(n) * (hi - lo + 1)).astype(np.int64)), pa.string()),
                            5, "0")
        lat, lon = self.coords(rng, region_idx)
        return {"road": road_addr, "lot": lot_addr, "zip": zips, "lat": lat, "lon": lon, "dong": dong,
                "name": pc.take(self.names, idx), "code": pc.take(self.codes, idx)}

    def coords(self, rng: np.random.Generator, region_idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        centre = np.array([[r.lat, r.lon, r.spread] for r in self.regions])[region_idx]
        z = np.clip(rng.normal(0, 1, (len(region_idx), 2)), -2.0, 2.0)  # stay inside the region
        lat = np.round(centre[:, 0] + z[:, 0] * centre[:, 2], 6)
        lon = np.round(centre[:, 1] + z[:, 1] * centre[:, 2] * 1.25, 6)
        return lat, lon


def _words(rng: np.random.Generator, n: int, syllables: int) -> list[str]:
    idx = rng.integers(0, len(PLACE_SYLLABLES), size=(n, syllables))
    return ["".join(PLACE_SYLLABLES[i] for i in row) for row in idx]


def _dong_pool(rng: np.random.Generator, regions: list[Region], per_region: int) -> pa.Array:
    words = _words(rng, len(regions) * per_region, 2)
    out = []
    for i, region in enumerate(regions):
        for j in range(per_region):
            w = words[i * per_region + j]
            if region.county:
                out.append(w + ("읍" if j < 2 else "면"))
            else:
                out.append(w + ("동" if j % 4 else f"{j // 4 + 1}동"))
    return pa.array(out)


# --- WGS84 -> EPSG:5174 (Korean 1985 modified central belt, Bessel) --------------------------
_A = 6377397.155
_F = 1 / 299.1528128
_E2 = 2 * _F - _F * _F
_EP2 = _E2 / (1 - _E2)
_LAT0 = np.radians(38.0)
_LON0 = np.radians(127.0028902777778)
_DLAT, _DLON = -10.3 / 3600, 8.1 / 3600  # WGS84 minus Tokyo datum over Korea, reversed


def _meridian(phi: np.ndarray) -> np.ndarray:
    e4, e6 = _E2 * _E2, _E2 ** 3
    return _A * ((1 - _E2 / 4 - 3 * e4 / 64 - 5 * e6 / 256) * phi
                 - (3 * _E2 / 8 + 3 * e4 / 32 + 45 * e6 / 1024) * np.sin(2 * phi)
                 + (15 * e4 / 256 + 45 * e6 / 1024) * np.sin(4 * phi)
                 - (35 * e6 / 3072) * np.sin(6 * phi))


def tm5174(lat: np.ndarray, lon: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """WGS84 degrees -> EPSG:5174 (X easting, Y northing) metres, rounded like LOCALDATA."""
    phi = np.radians(np.asarray(lat) + _DLAT)
    lam = np.radians(np.asarray(lon) + _DLON)
    n = _A / np.sqrt(1 - _E2 * np.sin(phi) ** 2)
    t = np.tan(phi) ** 2
    c = _EP2 * np.cos(phi) ** 2
    a = (lam - _LON0) * np.cos(phi)
    x = n * (a + (1 - t + c) * a ** 3 / 6 + (5 - 18 * t + t * t + 72 * c - 58 * _EP2) * a ** 5 / 120)
    y = _meridian(phi) - _meridian(np.array(_LAT0)) + n * np.tan(phi) * (
        a ** 2 / 2 + (5 - t + 9 * c + 4 * c * c) * a ** 4 / 24
        + (61 - 58 * t + t * t + 600 * c - 330 * _EP2) * a ** 6 / 720)
    return np.round(x + 200000.0, 6), np.round(y + 500000.0, 6)
