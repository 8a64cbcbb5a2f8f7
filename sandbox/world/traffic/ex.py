"""Korea Expressway world: tollbooths and what happens on the roads between them.

Tollbooths (영업소) lie along the real routes of ``traffic_facts``; on top of them come hourly
tollbooth volumes (the one big table, built as one numpy array in unitCode × day × hour ×
in/out × TCS/hi-pass order, so it is already sorted), travel times and section traffic
between neighbouring tollbooths, and incident messages. Rest areas are in ``traffic_ex_rest``.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pyarrow as pa

from .. import korean
from ..context import BuildContext
from ..facts import PROVINCE_CENTRES
from .facts import AS_OF, EX_ROUTES, ExRoute

# Hourly shape of tollbooth traffic (share of the day's volume per hour 00..23).
HOURLY = np.array([0.8, 0.5, 0.4, 0.4, 0.6, 1.4, 3.0, 5.2, 6.4, 5.6, 5.0, 5.0,
                   5.0, 5.2, 5.4, 5.8, 6.2, 6.8, 7.0, 6.0, 4.8, 3.8, 3.0, 1.9])
HOURLY = HOURLY / HOURLY.sum()
HIPASS_SHARE = 0.82  # share of tollbooth traffic paying by hi-pass (tcsType 2)
GENERATED_PREFIXES = ("", "동", "서", "남", "북")


def _ymd(days: list) -> list[str]:
    return [d.strftime("%Y%m%d") for d in days]


def route_points(route: ExRoute, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lat, lon) at fractions ``t`` along a route (a loop runs round a circle)."""
    if route.loop:
        angle = 2 * np.pi * t
        return route.start[0] + 0.2 * np.cos(angle), route.start[1] + 0.26 * np.sin(angle)
    lat = route.start[0] + t * (route.end[0] - route.start[0])
    lon = route.start[1] + t * (route.end[1] - route.start[1])
    return lat, lon


def nearest_provinces(lat: np.ndarray, lon: np.ndarray) -> list[str]:
    codes = list(PROVINCE_CENTRES)
    centres = np.array([PROVINCE_CENTRES[c] for c in codes])
    d = (lat[:, None] - centres[None, :, 0]) ** 2 + (lon[:, None] - centres[None, :, 1]) ** 2
    return [codes[i] for i in d.argmin(axis=1)]


def unique_names(rng: np.random.Generator, known: list[str], n: int, taken: set[str]) -> list[str]:
    """``known`` names still free, padded with generated place names to ``n``."""
    names = [k for k in dict.fromkeys(known) if k not in taken][:n]
    taken.update(names)
    while len(names) < n:
        word = GENERATED_PREFIXES[int(rng.integers(len(GENERATED_PREFIXES)))] + korean.place_words(rng, 1)[0]
        if word not in taken:
            taken.add(word)
            names.append(word)
    return names


def build_units(ctx: BuildContext) -> pa.Table:
    """영업소 (tollbooths): real names in their real order along each route, codes from 101."""
    rng = ctx.rng("ex.units")
    taken: set[str] = set()
    cols: dict[str, list] = {k: [] for k in ("unitCode", "unitName", "routeNo", "routeName", "xValue", "yValue",
                                             "_seq", "_weight")}
    code = 101
    for route in EX_ROUTES:
        n = route.tollbooths
        known = route.known.split()
        names = unique_names(rng, known, n, taken)
        real = [name for name in names if name in known]
        generated = iter(name for name in names if name not in known)
        # Real names keep their order, spread evenly; generated ones fill the gaps.
        order: list[str | None] = [None] * n
        for slot, name in zip(np.round(np.linspace(0, n - 1, len(real))).astype(int), real):
            order[slot] = name
        order = [name if name is not None else next(generated) for name in order]
        t = np.linspace(0, 1, n, endpoint=not route.loop) + rng.normal(0, 0.004, n)
        lat, lon = route_points(route, np.clip(t, 0, 1))
        lat, lon = lat + rng.normal(0, 0.01, n), lon + rng.normal(0, 0.01, n)
        weight = rng.lognormal(0, 0.6, n) * np.array([2.0 if name in known else 1.0 for name in order])
        for i, name in enumerate(order):
            cols["unitCode"].append(str(code))
            cols["unitName"].append(name)
            cols["routeNo"].append(route.route_no)
            cols["routeName"].append(route.name)
            cols["xValue"].append(round(float(lon[i]), 6))
            cols["yValue"].append(round(float(lat[i]), 6))
            cols["_seq"].append(i + 1)
            cols["_weight"].append(float(weight[i]))
            code += 1
    return pa.table(cols)


def build_traffic_ic(ctx: BuildContext, units: pa.Table) -> pa.Table:
    """Hourly volume per tollbooth × day × in/out × TCS/hi-pass (trafficapi/trafficIc)."""
    rng = ctx.rng("ex.traffic_ic")
    n_days = max(14, ctx.n(92))
    days = [AS_OF - timedelta(days=n_days - i) for i in range(n_days)]
    weekend = np.array([1.18 if d.weekday() >= 5 else 1.0 for d in days])
    weight = np.asarray(units.column("_weight").to_numpy())
    u = len(weight)
    # Expected cars per unit-day-hour-direction-payment; the shape is the sort order of the table.
    lam = (900.0 * weight[:, None, None, None, None] * weekend[None, :, None, None, None]
           * HOURLY[None, None, :, None, None] * np.array([1.0, 0.97])[None, None, None, :, None]
           * np.array([1 - HIPASS_SHARE, HIPASS_SHARE])[None, None, None, None, :])
    amount = rng.poisson(lam).astype(np.int32).ravel()
    shape = (u, n_days, 24, 2, 2)
    idx = np.indices(shape, dtype=np.int32).reshape(5, -1)
    codes, names = units.column("unitCode"), units.column("unitName")
    return pa.table({
        "unitCode": codes.take(pa.array(idx[0])),
        "unitName": names.take(pa.array(idx[0])),
        "sumDate": pa.array(_ymd(days)).take(pa.array(idx[1])),
        "sumTm": pa.array([f"{h:02d}00" for h in range(24)]).take(pa.array(idx[2])),
        "inoutType": pa.array(idx[3].astype(np.int8)),
        "tcsType": pa.array((idx[4] + 1).astype(np.int8)),
        "carType": pa.array(np.ones(len(amount), dtype=np.int8)),
        "trafficAmout": pa.array(amount),
        "exDivCode": pa.array(["00"]).take(pa.array(np.zeros(len(amount), dtype=np.int32))),
    })


def _neighbour_pairs(units: pa.Table) -> list[tuple[int, int, str, str]]:
    """(from row, to row, updownTypeCode, route no) for neighbouring tollbooths, both directions."""
    route_no = units.column("routeNo").to_pylist()
    pairs = []
    for route in EX_ROUTES:
        rows = [i for i, r in enumerate(route_no) if r == route.route_no]
        links = list(zip(rows, rows[1:])) + ([(rows[-1], rows[0])] if route.loop else [])
        pairs += [(a, b, "E", route.route_no) for a, b in links]
        pairs += [(b, a, "S", route.route_no) for a, b in links]
    return pairs


def build_travel_times(ctx: BuildContext, units: pa.Table) -> tuple[pa.Table, pa.Table]:
    """Travel time between neighbouring tollbooths (trtm/realUnitTrtm) and section traffic
    per VDS (odtraffic/trafficAmountByRealtime), both as one current snapshot."""
    rng = ctx.rng("ex.trtm")
    pairs = _neighbour_pairs(units)
    code, name = units.column("unitCode").to_pylist(), units.column("unitName").to_pylist()
    lat, lon = units.column("yValue").to_numpy(), units.column("xValue").to_numpy()
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    km = np.hypot((lat[a] - lat[b]) * 111.0, (lon[a] - lon[b]) * 88.0) * 1.25 + 1.0
    speed = np.clip(rng.normal(88, 14, len(pairs)), 18, 110)
    std_date, std_time = AS_OF.strftime("%Y%m%d"), "1200"
    trtm = pa.table({
        "startUnitCode": [code[i] for i in a], "startUnitNm": [name[i] for i in a],
        "endUnitCode": [code[i] for i in b], "endUnitNm": [name[i] for i in b],
        "stdDate": [std_date] * len(pairs), "stdTime": [std_time] * len(pairs),
        "tcsCarTypeCode": ["1"] * len(pairs), "tcsCarTypeName": ["1종"] * len(pairs),
        "timeAvg": np.round(km / speed * 60, 1), "efcvTrfl": rng.integers(20, 900, len(pairs)),
    })
    route_name = {r.route_no: r.name for r in EX_ROUTES}
    vds_per_zone = 2
    rows: dict[str, list] = {k: [] for k in ("routeName", "routeNo", "conzoneId", "conzoneName", "vdsId",
                                             "updownTypeCode", "stdDate", "stdHour", "trafficAmout", "speed",
                                             "shareRatio", "timeAvg", "grade")}
    zone_speed = np.repeat(speed, vds_per_zone) + rng.normal(0, 4, len(pairs) * vds_per_zone)
    zone_speed = np.clip(zone_speed, 8, 115).round(1)
    for k, (i, j, updown, rno) in enumerate(pairs):
        for v in range(vds_per_zone):
            s = float(zone_speed[k * vds_per_zone + v])
            rows["routeName"].append(route_name[rno])
            rows["routeNo"].append(rno)
            rows["conzoneId"].append(f"{rno}CZ{updown}{k:03d}")
            rows["conzoneName"].append(f"{name[i]}IC-{name[j]}IC")
            rows["vdsId"].append(f"{rno}VD{updown}{k:03d}{v}")
            rows["updownTypeCode"].append(updown)
            rows["stdDate"].append(std_date)
            rows["stdHour"].append("12")
            rows["trafficAmout"].append(int(rng.integers(30, 900)))
            rows["speed"].append(s)
            rows["shareRatio"].append(round(float(rng.uniform(2, 45)), 1))
            rows["timeAvg"].append(round(float(km[k] / max(s, 1.0) * 60), 1))
            rows["grade"].append("1" if s >= 70 else "2" if s >= 35 else "3")
    return trtm, pa.table(rows)


ACC_TYPES = (("1", "사고", "사고처리중"), ("2", "공사", "공사중"), ("3", "작업", "작업중"),
             ("4", "기상", "기상악화로 감속운행"), ("5", "정체", "정체중"), ("6", "통제", "진입통제중"))


def build_incidents(ctx: BuildContext, units: pa.Table) -> pa.Table:
    """돌발·통제 messages (burstInfo/realTimeSms) as of the world's today."""
    rng = ctx.rng("ex.incidents")
    n = ctx.n(40, minimum=8)
    route_of = {r.route_no: r for r in EX_ROUTES}
    pick = np.sort(rng.choice(units.num_rows, n, replace=False))
    kinds = rng.choice(len(ACC_TYPES), n, p=[0.3, 0.25, 0.2, 0.05, 0.15, 0.05])
    minutes = np.sort(rng.integers(0, 12 * 60, n))
    unit = units.select(["routeNo", "unitName", "yValue", "xValue"]).to_pylist()
    rows: dict[str, list] = {k: [] for k in ("accDate", "accHour", "accType", "accTypeCode", "smsText", "roadNM",
                                             "nosunNM", "startEndTypeCode", "latitude", "altitude")}
    for k, i in enumerate(pick):
        place = unit[int(i)]
        route = route_of[place["routeNo"]]
        code, word, state = ACC_TYPES[int(kinds[k])]
        towards_end = bool(rng.random() < 0.5)
        direction = route.end_dir if towards_end else route.start_dir
        rows["accDate"].append(AS_OF.strftime("%Y%m%d"))
        rows["accHour"].append(f"{minutes[k] // 60:02d}{minutes[k] % 60:02d}")
        rows["accType"].append(word)
        rows["accTypeCode"].append(code)
        lane = int(rng.integers(1, 4))
        rows["smsText"].append(f"[{route.name}] {direction}방향 {place['unitName']}IC 부근 {lane}차로 {state}, "
                               "안전운전 바랍니다.")
        rows["roadNM"].append(route.name.removesuffix("선") + "고속도로")
        rows["nosunNM"].append(route.name)
        rows["startEndTypeCode"].append("E" if towards_end else "S")
        rows["latitude"].append(place["yValue"])
        rows["altitude"].append(place["xValue"])  # the live feed's name for longitude
    return pa.table(rows)
