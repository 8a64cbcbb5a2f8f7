"""Seoul public bikes (따릉이): stations and monthly rentals per station.

Stations are numbered in district order ("102. 망원역 1번출구 앞"); the station number and
name join the station master (tbCycleStationInfo) to the monthly rental statistics
(tbCycleRentUseMonthInfo), whose STATION_NAME is "<number>. <name>". Monthly rows are one
per station × rent type × gender × age band that had rentals in the month.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .. import korean
from ..context import BuildContext
from ..facts import SEOUL_DISTRICTS
from .facts import AS_OF, SUBWAY_LINES

RENT_TYPES = ("정기권", "일일권")
GENDERS = ("M", "F")
AGE_TYPES = ("~10대", "20대", "30대", "40대", "50대", "60대", "70대이상")
LANDMARK_SUFFIXES = ("초등학교 앞", "공원 입구", "사거리", "주민센터 앞", "시장 입구", "버스정류장", "아파트 정문")
MONTHS = 24


def _station_names(rng: np.random.Generator, n: int) -> list[str]:
    subway = sorted({s for line in SUBWAY_LINES for s in line.stations.split()})
    words = korean.place_words(rng, n)
    kind = rng.random(n)
    names = []
    for i in range(n):
        if kind[i] < 0.4:
            station = subway[int(rng.integers(len(subway)))].removesuffix("역")
            names.append(f"{station}역 {int(rng.integers(1, 9))}번출구 앞")
        elif kind[i] < 0.65:
            names.append(f"{words[i]}아파트 {int(rng.integers(101, 120))}동 앞")
        else:
            names.append(words[i] + LANDMARK_SUFFIXES[int(rng.integers(len(LANDMARK_SUFFIXES)))])
    return names


def build_bike_stations(ctx: BuildContext) -> pa.Table:
    """Station master plus the live counts of bikeList (one snapshot)."""
    rng = ctx.rng("seoul.bike_stations")
    n = ctx.n(2700, minimum=60)
    district = np.sort(rng.integers(0, len(SEOUL_DISTRICTS), n))
    lat, lon = korean.jitter_coords(rng, [(SEOUL_DISTRICTS[d].lat, SEOUL_DISTRICTS[d].lon) for d in district], 0.015)
    number = np.arange(101, 101 + n)
    racks = rng.choice([5, 8, 10, 10, 12, 15, 15, 20, 25], n)
    parked = np.minimum(rng.poisson(racks * 0.6), racks * 2)
    names = _station_names(rng, n)
    districts = [SEOUL_DISTRICTS[d].name for d in district]
    ids = rng.permutation(n) + 3  # live ids (ST-3 …) do not follow the station numbers
    return pa.table({
        "RENT_ID": [f"ST-{i}" for i in ids],
        "RENT_NO": [f"{k:05d}" for k in number],
        "RENT_NM": names,
        "RENT_ID_SE": np.where(rng.random(n) < 0.85, "1", "2"),  # 1 LCD, 2 QR
        "STA_LOC": districts,
        "STA_ADD1": korean.road_addresses(rng, [f"서울특별시 {d}" for d in districts]),
        "STA_ADD2": names,
        "STA_LAT": lat, "STA_LONG": lon,
        "HOLD_NUM": racks,
        "parkingBikeTotCnt": parked,
        "shared": np.round(parked / racks * 100).astype(int),
        "_no": number,
    })


def build_bike_rentals(ctx: BuildContext, stations: pa.Table) -> pa.Table:
    """tbCycleRentUseMonthInfo: rentals per month × station × rent type × gender × age band."""
    rng = ctx.rng("seoul.bike_rentals")
    last = AS_OF.year * 12 + AS_OF.month - 3  # 0-based month index; the month before last is the latest published
    months = [f"{(m // 12)}{m % 12 + 1:02d}" for m in range(last - MONTHS + 1, last + 1)]
    n = stations.num_rows
    combos = [(r, g, a) for r in range(len(RENT_TYPES)) for g in range(len(GENDERS)) for a in range(len(AGE_TYPES))]
    age_w = np.array([0.4, 1.6, 1.5, 1.1, 0.8, 0.4, 0.15])
    combo_w = np.array([(1.0 if r == 0 else 0.45) * (1.0 if g == 0 else 0.75) * age_w[a] for r, g, a in combos])
    season = 1 + 0.35 * np.sin((np.array([int(m[4:]) for m in months]) - 4) / 12 * 2 * np.pi)
    station_w = rng.lognormal(0, 0.7, n)
    lam = 25.0 * season[:, None, None] * station_w[None, :, None] * combo_w[None, None, :]
    count = rng.poisson(lam) * (rng.random(lam.shape) < 0.5)  # many groups have no rentals in a month
    m_idx, s_idx, c_idx = np.nonzero(count)
    use = count[m_idx, s_idx, c_idx]
    meter = use * rng.gamma(6, 400, len(use))
    parts = np.array(combos).T  # rent type, gender, age band per combo
    label = [f"{int(no)}. {nm}" for no, nm in zip(stations.column("_no").to_pylist(),
                                                   stations.column("RENT_NM").to_pylist())]
    return pa.table({
        "RENT_NM": pa.array(months).take(pa.array(m_idx)),
        "STATION_NAME": pa.array(label).take(pa.array(s_idx)),
        "RENT_TYPE": pa.array(RENT_TYPES).take(pa.array(parts[0][c_idx])),
        "GENDER_CD": pa.array(GENDERS).take(pa.array(parts[1][c_idx])),
        "AGE_TYPE": pa.array(AGE_TYPES).take(pa.array(parts[2][c_idx])),
        "USE_CNT": use,
        "EXER_AMT": np.round(meter * 0.036, 2),
        "CARBON_AMT": np.round(meter * 0.000232, 2),
        "MOVE_METER": np.round(meter, 2),
        "MOVE_TIME": np.round(meter / 170).astype(np.int64),
        "_no": stations.column("_no").take(pa.array(s_idx)),
        "_combo": c_idx,
    })
