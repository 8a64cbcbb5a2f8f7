"""Seoul subway and bus: stations, routes, stops and daily card ridership.

Subway stations are the real stations of ``traffic_facts.SUBWAY_LINES`` (one row per line a
station serves); ridership is one row per station-line per day, registered 3–4 days later
(REG_YMD), as CardSubwayStatsNew reports it. Bus routes get real-style numbers (간선 143,
지선 6411, 광역 9401, 심야 N13, 마을 마포01); stops get 5-digit ARS numbers whose first two
digits are the district's (01 종로구 … 25 강동구, the real ARS scheme). A route runs along a
corridor of stops between two ends; bus ridership is per route × stop × day.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pyarrow as pa

from .. import korean
from ..context import BuildContext
from ..facts import SEOUL_DISTRICTS
from .facts import AS_OF, SUBWAY_LINES

DATA_LAG_DAYS = 4  # card statistics are published a few days after use
DAY_FACTOR = np.array([1.0, 1.02, 1.02, 1.03, 1.08, 0.74, 0.56])  # Monday..Sunday
STOP_SUFFIXES = ("역", "초등학교", "중학교", "아파트", "사거리", "시장", "주민센터", "우체국", "공원", "삼거리",
                 "고등학교", "빌라", "교회", "입구", "차고지")
# (route type, number of routes at full scale)
ROUTE_KINDS = (("간선", 130), ("지선", 200), ("광역", 15), ("심야", 15), ("마을", 40))


def days_ending(last: object, n: int) -> list:
    return [last - timedelta(days=n - 1 - i) for i in range(n)]


def daily_factor(days: list) -> np.ndarray:
    return DAY_FACTOR[[d.weekday() for d in days]]


def build_subway_stations() -> pa.Table:
    """SearchSTNBySubwayLineInfo rows: real station names, codes counting from the line's first."""
    cols: dict[str, list] = {k: [] for k in ("STATION_CD", "STATION_NM", "LINE_NUM", "FR_CODE", "_line")}
    for line in SUBWAY_LINES:
        names = line.stations.split()
        frs = line.fr_codes.split() or [f"{line.fr_prefix}{line.first_fr + i:02d}" for i in range(len(names))]
        codes = line.codes.split() or [f"{line.code_base + i:04d}" for i in range(len(names))]
        cols["STATION_CD"] += codes
        cols["STATION_NM"] += names
        cols["LINE_NUM"] += [line.line_num] * len(names)
        cols["FR_CODE"] += frs
        cols["_line"] += [line.name] * len(names)
    return pa.table(cols)


def build_subway_ridership(ctx: BuildContext, stations: pa.Table) -> pa.Table:
    """CardSubwayStatsNew: boardings / alightings per station-line per day."""
    rng = ctx.rng("seoul.subway_ridership")
    n_days = max(30, ctx.n(400))
    days = days_ending(AS_OF - timedelta(days=DATA_LAG_DAYS), n_days)
    names = stations.column("STATION_NM").to_pylist()
    transfers = {n: names.count(n) for n in names}
    weight = rng.lognormal(0, 0.7, len(names)) * np.array([1 + 0.8 * (transfers[n] - 1) for n in names])
    base = 9000.0 * weight[None, :] * daily_factor(days)[:, None]
    on = np.round(base * rng.lognormal(0, 0.06, base.shape)).astype(np.int64)
    off = np.round(base * rng.lognormal(0, 0.06, base.shape)).astype(np.int64)
    d_idx, s_idx = np.indices(base.shape).reshape(2, -1)
    lag = rng.integers(3, 5, n_days)
    return pa.table({
        "USE_YMD": pa.array([d.strftime("%Y%m%d") for d in days]).take(pa.array(d_idx)),
        "SBWY_ROUT_LN_NM": stations.column("_line").take(pa.array(s_idx)),
        "SBWY_STNS_NM": stations.column("STATION_NM").take(pa.array(s_idx)),
        "GTON_TNOPE": on.ravel(),
        "GTOFF_TNOPE": off.ravel(),
        "REG_YMD": pa.array([(d + timedelta(days=int(k))).strftime("%Y%m%d")
                             for d, k in zip(days, lag)]).take(pa.array(d_idx)),
    })


def build_bus_stops(ctx: BuildContext) -> pa.Table:
    """Bus stops with ARS numbers (district prefix + 3 digits) and 9-digit node ids."""
    rng = ctx.rng("seoul.bus_stops")
    n = ctx.n(6000, minimum=300)
    district = np.sort(rng.integers(0, len(SEOUL_DISTRICTS), n))
    lat, lon = korean.jitter_coords(rng, [(SEOUL_DISTRICTS[d].lat, SEOUL_DISTRICTS[d].lon) for d in district], 0.018)
    serial = np.zeros(n, dtype=int)
    for d in range(len(SEOUL_DISTRICTS)):
        mask = district == d
        serial[mask] = np.arange(1, mask.sum() + 1)
    words = korean.place_words(rng, n)
    suffix = rng.integers(0, len(STOP_SUFFIXES), n)
    stop_type = np.where(rng.random(n) < 0.12, "중앙차로", "가로변전일")
    return pa.table({
        "STOPS_NO": [f"{d + 1:02d}{s:03d}" for d, s in zip(district, serial)],
        "STOPS_NM": [w + STOP_SUFFIXES[s] for w, s in zip(words, suffix)],
        "XCRD": lon, "YCRD": lat,
        "NODE_ID": [f"1{d + 1:02d}000{s:03d}" for d, s in zip(district, serial)],
        "STOPS_TYPE": stop_type,
        "_district": [SEOUL_DISTRICTS[d].name for d in district],
    })


def _route_numbers(rng: np.random.Generator, kind: str, n: int, taken: set[str]) -> list[str]:
    out: list[str] = []
    while len(out) < n:
        if kind == "간선":
            number = str(int(rng.integers(100, 800)))
        elif kind == "지선":
            number = str(int(rng.integers(1000, 8000)))
        elif kind == "광역":
            number = str(int(rng.integers(9000, 9800)))
        elif kind == "심야":
            number = f"N{int(rng.integers(10, 90))}"
        else:
            name = SEOUL_DISTRICTS[int(rng.integers(len(SEOUL_DISTRICTS)))].name
            number = f"{name if len(name) == 2 else name[:-1]}{int(rng.integers(1, 20)):02d}"  # 마포01, 중구01
        if number not in taken:
            taken.add(number)
            out.append(number)
    return out


def build_bus_routes(ctx: BuildContext, stops: pa.Table) -> tuple[pa.Table, pa.Table]:
    """Routes and their stop sequences: each route runs along a corridor between two stops."""
    rng = ctx.rng("seoul.bus_routes")
    taken: set[str] = set()
    kinds = [(kind, number) for kind, full in ROUTE_KINDS
             for number in _route_numbers(rng, kind, ctx.n(full, minimum=4), taken)]
    lat, lon = stops.column("YCRD").to_numpy(), stops.column("XCRD").to_numpy()
    stop_names = stops.column("STOPS_NM").to_pylist()
    route_cols: dict[str, list] = {k: [] for k in ("ROUTE_ID", "ROUTE_NM", "ROUTE_TYPE", "ST_STA_NM", "ED_STA_NM",
                                                   "FIRST_TIME", "LAST_TIME", "TERM")}
    link_route, link_stop, link_seq = [], [], []
    for r, (kind, number) in enumerate(kinds):
        a, b = rng.choice(len(lat), 2, replace=False)
        dx, dy = lon[b] - lon[a], lat[b] - lat[a]
        length = max(np.hypot(dx, dy), 1e-6)
        t = ((lon - lon[a]) * dx + (lat - lat[a]) * dy) / length ** 2
        dist = np.abs((lon - lon[a]) * dy - (lat - lat[a]) * dx) / length
        corridor = np.flatnonzero((t >= 0) & (t <= 1) & (dist < 0.006))
        wanted = int(rng.integers(15, 45)) if kind == "마을" else int(rng.integers(25, 70))
        if len(corridor) > wanted:
            corridor = np.sort(rng.choice(corridor, wanted, replace=False))
        path = np.unique(np.concatenate([[a], corridor, [b]]))
        path = path[np.argsort(t[path], kind="stable")]
        link_route += [r] * len(path)
        link_stop += path.tolist()
        link_seq += list(range(1, len(path) + 1))
        night = kind == "심야"
        route_cols["ROUTE_ID"].append(f"100100{r + 1:03d}" if r < 999 else f"10010{r + 1:04d}")
        route_cols["ROUTE_NM"].append(number)
        route_cols["ROUTE_TYPE"].append(kind)
        route_cols["ST_STA_NM"].append(stop_names[path[0]])
        route_cols["ED_STA_NM"].append(stop_names[path[-1]])
        route_cols["FIRST_TIME"].append("2330" if night else f"04{int(rng.integers(0, 6)) * 10:02d}")
        route_cols["LAST_TIME"].append("0400" if night else f"22{int(rng.integers(0, 6)) * 10:02d}")
        route_cols["TERM"].append(int(rng.integers(5, 25)) if not night else int(rng.integers(20, 45)))
    routes = pa.table(route_cols)
    links = pa.table({"_route": link_route, "_stop": link_stop, "_seq": link_seq})
    return routes, links


def build_bus_ridership(ctx: BuildContext, routes: pa.Table, stops: pa.Table, links: pa.Table) -> pa.Table:
    """CardBusStatisticsServiceNew: boardings / alightings per route × stop × day."""
    rng = ctx.rng("seoul.bus_ridership")
    days = days_ending(AS_OF - timedelta(days=DATA_LAG_DAYS), 31)
    n_links = links.num_rows
    weight = rng.lognormal(0, 0.9, n_links) * 120.0
    base = weight[None, :] * daily_factor(days)[:, None]
    d_idx, l_idx = np.indices(base.shape).reshape(2, -1)
    route_idx = links.column("_route").to_numpy()[l_idx]
    stop_idx = links.column("_stop").to_numpy()[l_idx]
    rte_nm = [f"{n}번({s}~{e})" for n, s, e in zip(*(routes.column(c).to_pylist()
                                                    for c in ("ROUTE_NM", "ST_STA_NM", "ED_STA_NM")))]
    return pa.table({
        "USE_YMD": pa.array([d.strftime("%Y%m%d") for d in days]).take(pa.array(d_idx)),
        "RTE_NO": routes.column("ROUTE_NM").take(pa.array(route_idx)),
        "RTE_NM": pa.array(rte_nm).take(pa.array(route_idx)),
        "STOPS_ID": stops.column("NODE_ID").take(pa.array(stop_idx)),
        "STOPS_ARS_NO": stops.column("STOPS_NO").take(pa.array(stop_idx)),
        "SBWY_STNS_NM": stops.column("STOPS_NM").take(pa.array(stop_idx)),  # the live field name for the stop
        "GTON_TNOPE": rng.poisson(base).ravel(),
        "GTOFF_TNOPE": rng.poisson(base * 0.97).ravel(),
        "_seq": links.column("_seq").to_numpy()[l_idx],
    })
