"""KOPA-Bench templates: traffic (Korea Expressway ``ex`` and Seoul transport ``seoul``).

The world's "today" is 2026-09-01 (a Tuesday): tollbooth volumes run to 2026-08-31, Seoul subway and
bus card statistics to 2026-08-28 (they are published a few days late). Tasks that say "어제" or
"지난주" fix ``current_date`` to that day. Chains: a tollbooth name → its code → its hourly volumes;
a route's fuel prices → the cheapest station → its rest-area code → its menu; every page of the
rest-area menus or the bike-station master → a reduction → the next lookup; a subway line's
ridership → the busiest station → that station a week earlier or its station code.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date, timedelta
from typing import Any

from ..draft import Draft, DraftError
from ..registry import template
from ..values import number

TODAY = date(2026, 9, 1)
YESTERDAY = TODAY - timedelta(days=1)  # the last tollbooth volume day
LAST_FRIDAY = date(2026, 8, 28)  # the last day of Seoul card statistics


# ------------------------------------------------------------------------------------------ helpers

def _ymd(day: date) -> str:
    return day.strftime("%Y%m%d")




def _price(value: Any) -> float | None:
    """A fuel price ("1,699원") as a number; None for a fuel not sold ("X")."""
    try:
        return number(value)
    except ValueError:
        return None


def _unique_max(items: list[Any], key: Any) -> Any | None:
    """The item with the largest key, or None when the largest is tied."""
    if not items:
        return None
    ranked = sorted(items, key=key, reverse=True)
    if len(ranked) > 1 and key(ranked[0]) == key(ranked[1]):
        return None
    return ranked[0]


def _unique_min(items: list[Any], key: Any) -> Any | None:
    return _unique_max(items, lambda x: -key(x))


def _volume(records: list[dict[str, Any]]) -> int:
    return int(sum(number(r["trafficAmout"]) for r in records))


def _by_hour(records: list[dict[str, Any]]) -> dict[str, int]:
    hours: dict[str, int] = defaultdict(int)
    for r in records:
        hours[r["sumTm"]] += int(number(r["trafficAmout"]))
    return dict(hours)




# ------------------------------------------------------------------------------ expressway: fuel & food

@template("traffic", count=2)
async def cheapest_fuel_best_food(t: Draft) -> None:
    """Route → its stations' fuel prices → the cheapest station → its rest-area code → its representative menus
    (and brands) → a watchlist entry, or how far the dearest menu is above the menus' average (evaluate_expression)."""
    fuel = await t.explore_all("get_rest_area_fuel_prices")
    kind, label = (("gasolinePrice", "휘발유"), ("diselPrice", "경유"))[t.variant % 2]
    routes = sorted({r["routeName"] for r in fuel if sum(f["routeName"] == r["routeName"] for f in fuel) >= 6})
    valid = []
    for route in routes:
        priced = [r for r in fuel if r["routeName"] == route and _price(r[kind]) is not None]
        cheapest = _unique_min(priced, lambda r: _price(r[kind]))
        if cheapest is None:
            continue
        loc = await t.explore("list_rest_area_locations", {"serviceAreaCode": cheapest["serviceAreaCode"]})
        if not loc.records:
            continue
        std = loc.records[0]["stdRestCd"]
        foods = await t.explore("get_rest_area_best_foods", {"stdRestCd": std}, size=1000)
        best = _unique_max([f for f in foods.records if f["bestfoodyn"] == "Y"], lambda f: number(f["foodCost"]))
        brands = await t.explore("get_rest_area_brands", {"stdRestCd": std}, size=1000)
        coffee = sorted({b["brdName"] for b in brands.records if "커피" in b.get("brdDesc", "")})
        if best is not None and (coffee or t.variant % 2 == 0):
            valid.append((route, cheapest, std, best, coffee))
    route, cheapest, std, best, coffee = valid[t.pick(range(len(valid)))]
    await t.call_all_pages("get_rest_area_fuel_prices", {"routeName": route}, step=0)
    await t.call_all_pages("list_rest_area_locations", {"serviceAreaCode": cheapest["serviceAreaCode"]}, step=1)
    await t.call_all_pages("get_rest_area_best_foods", {"stdRestCd": std}, step=2)
    if t.variant % 2 == 0:
        await t.call("add_to_watchlist", {"list_name": "먹어볼 메뉴", "item": best["foodNm"]}, step=3)
        t.ask(f"{route} 고속도로 휴게소 주유소 중에서 {label}가 제일 싼 곳에 들를 생각이에요. 그 휴게소 대표 메뉴 중에서 "
              f"가장 비싼 메뉴가 뭔지 알려 주고, 그 메뉴 이름을 '먹어볼 메뉴' 관심목록에 메모 없이 넣어 주세요.")
        t.answer_string(best["foodNm"])
    else:
        await t.call_all_pages("get_rest_area_brands", {"stdRestCd": std}, step=2)
        prices = [int(number(f["foodCost"])) for f in foods.records if f["bestfoodyn"] == "Y"]
        gap = await t.evaluate(f"{int(number(best['foodCost']))} - ({' + '.join(map(str, prices))}) / {len(prices)}",
                               step=3)
        t.ask(f"{route}에서 {label} 값이 가장 싼 휴게소 주유소를 찾아 주세요. 그 휴게소의 대표 메뉴 중 제일 비싼 "
              f"메뉴와 가격, 그 가격이 대표 메뉴 평균 가격보다 몇 원 비싼지, 그리고 입점한 커피 전문점 브랜드도 함께 "
              f"알려 주세요.")
        t.answer_judge(f"{cheapest['serviceAreaName']} 휴게소({label} {cheapest[kind]})의 가장 비싼 대표 메뉴는 "
                       f"{best['foodNm']}({int(number(best['foodCost']))}원)로 대표 메뉴 평균 가격보다 {gap:.2f}원 "
                       f"비싸고, 입점한 커피 전문점은 {', '.join(coffee)}입니다.")
        t.tags.append("arithmetic")
    t.tags.append("reduction")


def _avg_price(menus: list[dict[str, Any]]) -> float | None:
    return sum(number(m["foodCost"]) for m in menus) / len(menus) if menus else None


# (what the user asks for, the per-rest-area figure to maximise); every one has a single winner in the world
_MENU_CRITERIA = (
    ("판매 메뉴의 평균 가격이 가장 비싼", lambda ms: _avg_price(ms)),
    ("판매 메뉴의 평균 가격이 가장 싼", lambda ms: -_avg_price(ms)),
    ("프리미엄 메뉴가 가장 많은", lambda ms: sum(m["premiumyn"] == "Y" for m in ms)),
    ("추천 메뉴들의 평균 가격이 가장 비싼", lambda ms: _avg_price([m for m in ms if m["recommendyn"] == "Y"])),
)


@template("traffic", count=4)
async def menu_rest_area_fuel_vs_route(t: Draft) -> None:
    """Every page of the rest-area menus → the rest area that tops a per-rest-area figure → its station code
    and route → the route's fuel prices → how far its price is from the route's average."""
    kind, label = (("diselPrice", "경유"), ("gasolinePrice", "휘발유"))[t.variant % 2]
    criterion, figure = _MENU_CRITERIA[t.variant % len(_MENU_CRITERIA)]
    foods, step = await t.call_all_pages("get_rest_area_best_foods", {}, step=0)
    menus: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for f in foods:
        menus[f["stdRestCd"]].append(f)
    scored = [(figure(ms), std) for std, ms in menus.items() if figure(ms) is not None]
    top = _unique_max(scored, lambda x: x[0])
    if top is None:
        raise DraftError(f"{t.task_id}: tied rest areas for {criterion}")
    std = top[1]
    locs, step = await t.call_all_pages("list_rest_area_locations", {"stdRestCd": std}, step=step)
    loc = locs[0]
    route_fuel, step = await t.call_all_pages("get_rest_area_fuel_prices", {"routeName": loc["routeName"]}, step=step)
    prices = [_price(r[kind]) for r in route_fuel if _price(r[kind]) is not None]
    mine = next((_price(r[kind]) for r in route_fuel if r["serviceAreaCode"] == loc["serviceAreaCode"]), None)
    if mine is None:
        raise DraftError(f"{t.task_id}: the rest area sells no {label}")
    expression = f"{int(mine)} - ({' + '.join(str(int(p)) for p in prices)}) / {len(prices)}"
    value = await t.evaluate(expression, step=step)
    t.ask((f"전국 고속도로 휴게소 중 {criterion} 휴게소를 찾아서, 그 휴게소 주유소의 {label} 가격이 같은 노선 휴게소 "
           f"주유소들의 평균 {label} 가격보다 몇 원 높은지(낮으면 음수) 소수 둘째 자리까지 알려 주세요.",
           f"고속도로 휴게소 음식 정보를 다 놓고 볼 때 {criterion} 곳이 있죠? 거기 주유소 {label} 값에서 같은 고속도로 "
           f"노선 주유소들의 평균 {label} 값을 빼면 얼마인가요? 소수 둘째 자리까지요.",
           f"{criterion} 고속도로 휴게소가 어딘지 궁금해요. 그곳 {label} 값이 그 노선 전체 휴게소 평균과 비교해 "
           f"얼마나 차이 나는지 원 단위로 알려 주세요(싸면 마이너스, 소수 둘째 자리).",
           f"메뉴 가격 기준으로 {criterion} 휴게소를 골라 주세요. 그 주유소 {label} 가격 빼기 같은 노선 "
           f"휴게소들의 {label} 평균 가격은요? 소수점 둘째 자리까지 부탁해요.")[t.variant % 4])
    t.answer_number(round(value, 2))
    t.tags += ["reduction", "arithmetic"]


@template("traffic", count=2)
async def brand_rest_area_fuel_gap(t: Draft) -> None:
    """Route → its rest areas' brands → the one rest area with a brand → its station code → the route's
    fuel prices → its price against the route's cheapest."""
    brands = await t.explore_all("get_rest_area_brands")
    fuel = await t.explore_all("get_rest_area_fuel_prices")
    locs = await t.explore_all("list_rest_area_locations")
    by_std = {r["stdRestCd"]: r for r in locs}
    fuel_by_code = {r["serviceAreaCode"]: r for r in fuel}
    kind, label = (("gasolinePrice", "휘발유"), ("diselPrice", "경유"))[t.variant % 2]
    pairs = []
    for route in sorted({b["routeNm"] for b in brands}):
        on_route = [b for b in brands if b["routeNm"] == route]
        for brand in sorted({b["brdName"] for b in on_route}):
            rests = sorted({b["stdRestCd"] for b in on_route if b["brdName"] == brand})
            if len(rests) != 1 or rests[0] not in by_std:
                continue
            station = fuel_by_code.get(by_std[rests[0]]["serviceAreaCode"])
            route_prices = [_price(f[kind]) for f in fuel if f["routeName"] == route and _price(f[kind]) is not None]
            if station is None or _price(station[kind]) is None or len(route_prices) < 6:
                continue
            if _price(station[kind]) == min(route_prices):
                continue
            pairs.append((route, brand, rests[0]))
    route, brand, std = t.pick(pairs)
    await t.call_all_pages("get_rest_area_brands", {"routeNm": route}, step=0)
    await t.call_all_pages("list_rest_area_locations", {"stdRestCd": std}, step=1)
    route_fuel, _ = await t.call_all_pages("get_rest_area_fuel_prices", {"routeName": route}, step=2)
    code = by_std[std]["serviceAreaCode"]
    mine = next(_price(r[kind]) for r in route_fuel if r["serviceAreaCode"] == code)
    cheapest = min(_price(r[kind]) for r in route_fuel if _price(r[kind]) is not None)
    value = await t.evaluate(f"{int(mine)} - {int(cheapest)}", step=3)
    t.ask((f"{route} 고속도로에서 {brand} 매장이 있는 휴게소는 한 곳뿐이라던데, 그 휴게소 주유소 {label} 값은 "
           f"같은 노선에서 {label}가 제일 싼 주유소보다 몇 원 더 비싼가요?",
           f"{route}에 {brand}가 입점한 휴게소에서 기름을 넣으려고 해요. 거기 {label} 가격이 {route}에서 가장 싼 "
           f"{label} 가격과 얼마나 차이 나는지 원 단위로 알려 주세요.")[t.variant % 2])
    t.answer_number(value)
    t.tags += ["reduction", "arithmetic"]


# ------------------------------------------------------------------------------ expressway: tollbooths

@template("traffic", count=3)
async def tollbooth_yesterday_compare(t: Draft) -> None:
    """Four or five tollbooth names → their codes (parallel) → yesterday's volumes (parallel) → the gap or the
    busiest one's share (arithmetic)."""
    t.today(TODAY.isoformat())
    booths = await t.explore_all("list_tollbooths")
    routes = sorted({b["routeName"] for b in booths if sum(x["routeName"] == b["routeName"] for x in booths) >= 20})
    route = t.pick(routes)
    names = sorted(b["unitName"] for b in booths if b["routeName"] == route)
    chosen = sorted(t.rng.sample(names, 5 if t.variant == 1 else 4))
    codes = {b["unitName"]: b["unitCode"] for b in booths}
    for name in chosen:
        await t.call_all_pages("list_tollbooths", {"unitName": name}, step=0)
    hipass = t.variant == 1
    totals = {}
    for name in chosen:
        args = {"unitCode": codes[name], "sumDate": _ymd(YESTERDAY)}
        if hipass:
            args |= {"inOutType": "0", "tcsType": "2"}
        records, _ = await t.call_all_pages("get_tollbooth_traffic_volume", args, step=1)
        totals[name] = _volume(records)
    if len(set(totals.values())) < len(chosen):
        raise DraftError(f"{t.task_id}: tied volumes")
    high = max(chosen, key=totals.get)
    low = min(chosen, key=totals.get)
    listed = ", ".join(chosen)
    if t.variant == 0:
        value = await t.evaluate(f"{totals[high]} - {totals[low]}", step=2)
        t.ask(f"어제 {route}의 {listed} 톨게이트 가운데 교통량(입구·출구 합계)이 가장 많은 곳과 가장 적은 곳의 "
              f"차이는 몇 대인가요?")
        t.answer_number(value)
    elif t.variant == 1:
        value = await t.evaluate(f"100 * {totals[high]} / ({' + '.join(str(totals[n]) for n in chosen)})", step=2)
        t.ask(f"{listed} 톨게이트로 어제 하이패스를 이용해 들어온 차량을 모두 더하면, 그중 가장 많은 곳이 차지하는 "
              f"비율은 몇 %인가요? 소수 둘째 자리까지 알려 주세요.")
        t.answer_number(round(value, 2))
    else:
        value = await t.evaluate(f"{totals[high]} - {totals[low]}", step=2)
        t.ask(f"어제 하루 동안 {listed} 톨게이트 교통량을 비교해서, 어디가 가장 붐볐고 가장 한산한 곳보다 얼마나 "
              f"많았는지 설명해 주세요.")
        t.answer_judge(f"어제(2026-08-31) 교통량은 {', '.join(f'{n} {totals[n]}대' for n in chosen)}로, {high}이(가) "
                       f"가장 많았고 가장 적은 {low}보다 {int(value)}대 많았습니다.")
    t.tags += ["parallel-compare", "arithmetic"]


@template("traffic", count=2)
async def tollbooth_peak_hour_weekago(t: Draft) -> None:
    """Tollbooth name → code → exit volumes yesterday and on the same weekday 1 and 2 weeks earlier (parallel)
    → the change at yesterday's peak hour against the earlier average."""
    t.today(TODAY.isoformat())
    booths = await t.explore_all("list_tollbooths")
    names = sorted(b["unitName"] for b in booths)
    for offset in range(len(names)):
        name = t.pick(names, offset=offset)
        code = next(b["unitCode"] for b in booths if b["unitName"] == name)
        probe = await t.explore("get_tollbooth_traffic_volume",
                                {"unitCode": code, "sumDate": _ymd(YESTERDAY), "inOutType": "1"}, size=1000)
        hours = _by_hour(probe.records)
        peak = _unique_max(sorted(hours), lambda h: hours[h])
        if peak is not None and hours[peak] >= 50:
            break
    else:
        raise DraftError(f"{t.task_id}: no tollbooth with a clear peak hour")
    await t.call_all_pages("list_tollbooths", {"unitName": name}, step=0)
    now, _ = await t.call_all_pages("get_tollbooth_traffic_volume",
                                    {"unitCode": code, "sumDate": _ymd(YESTERDAY), "inOutType": "1"}, step=1)
    earlier = []
    for weeks in (1, 2):
        day = YESTERDAY - timedelta(days=7 * weeks)
        records, _ = await t.call_all_pages("get_tollbooth_traffic_volume",
                                            {"unitCode": code, "sumDate": _ymd(day), "inOutType": "1"}, step=1)
        earlier.append(_by_hour(records).get(peak, 0))
    a = _by_hour(now)[peak]
    if sum(earlier) == 0:
        raise DraftError(f"{t.task_id}: no volume in the earlier weeks")
    value = await t.evaluate(f"100 * ({a} - ({earlier[0]} + {earlier[1]}) / 2) / (({earlier[0]} + {earlier[1]}) / 2)",
                            step=2)
    t.ask((f"어제 {name} 톨게이트 출구 교통량이 가장 많았던 시간대가 있죠? 그 시간대 교통량은 1주 전과 2주 전 같은 요일 "
           f"같은 시간대 교통량의 평균보다 몇 % 많았나요(적었으면 음수로)? 소수 둘째 자리까지요.",
           f"{name} 영업소에서 어제 나간 차량이 제일 많았던 한 시간 동안의 교통량을, 지난 두 주 같은 요일 같은 시간의 "
           f"평균과 비교하면 증감률이 몇 %인가요? 소수 둘째 자리까지 알려 주세요.")[t.variant % 2])
    t.answer_number(round(value, 2))
    t.tags += ["reduction", "arithmetic"]


# ------------------------------------------------------------------------------------ Seoul: bikes

def _late_districts(stations: list[dict[str, Any]]) -> list[str]:
    """Districts whose stations all lie beyond the first page of 1,000 (the answer needs later pages)."""
    first = {s["STA_LOC"] for s in stations[:1000]}
    return sorted({s["STA_LOC"] for s in stations[1000:]} - first)


@template("traffic", count=2)
async def bike_district_docks(t: Draft) -> None:
    """Every page of the bike-station master → dock totals or shares per district → arithmetic."""
    stations = await t.explore_all("list_bike_stations")
    late = _late_districts(stations)
    first = t.pick(late)
    others = sorted({s["STA_LOC"] for s in stations} - {first})
    second = t.rng.choice(others)
    records, step = await t.call_all_pages("list_bike_stations", {}, step=0)
    docks = {g: sum(int(number(s["HOLD_NUM"])) for s in records if s["STA_LOC"] == g) for g in (first, second)}
    if t.variant == 0:
        high, low = sorted((first, second), key=lambda g: -docks[g])
        if docks[high] == docks[low]:
            raise DraftError(f"{t.task_id}: equal dock totals")
        value = await t.evaluate(f"{docks[high]} - {docks[low]}", step=step)
        t.ask(f"따릉이 대여소 거치대 수를 구별로 모두 더하면 {first}와 {second} 중 어느 쪽이 몇 개 더 많은가요?")
        t.answer_judge(f"{high}의 거치대가 {docks[high]}개로 {low}({docks[low]}개)보다 {int(value)}개 더 많습니다.")
    else:
        mine = [s for s in records if s["STA_LOC"] == first]
        big = sum(1 for s in mine if number(s["HOLD_NUM"]) >= 15)
        value = await t.evaluate(f"100 * {big} / {len(mine)}", step=step)
        t.ask(f"{first}에 있는 따릉이 대여소 가운데 거치대가 15개 이상인 곳은 몇 %인가요? 소수 둘째 자리까지 알려 주세요.")
        t.answer_number(round(value, 2))
    t.tags += ["reduction", "arithmetic"]


@template("traffic", count=2)
async def bike_edge_station_watchlist(t: Draft) -> None:
    """Every page of the bike-station master → a district's northernmost/southernmost station → a watchlist."""
    stations = await t.explore_all("list_bike_stations")
    counts: dict[str, int] = defaultdict(int)
    for s in stations:
        counts[s["RENT_NM"]] += 1
    north = t.variant % 2 == 0
    for offset in range(25):
        district = t.pick(_late_districts(stations), offset=offset)
        mine = [s for s in stations if s["STA_LOC"] == district]
        pick = _unique_max(mine, lambda s: number(s["STA_LAT"]) * (1 if north else -1))
        if pick is not None and counts[pick["RENT_NM"]] == 1:
            break
    else:
        raise DraftError(f"{t.task_id}: no district with a unique edge station")
    records, step = await t.call_all_pages("list_bike_stations", {}, step=0)
    list_name = ("따릉이", "자전거 출퇴근")[t.variant % 2]
    await t.call("add_to_watchlist", {"list_name": list_name, "item": pick["RENT_NM"]}, step=step)
    t.ask(f"{district}에서 가장 {'북쪽' if north else '남쪽'}(위도 기준)에 있는 따릉이 대여소를 '{list_name}' 관심목록에 "
          f"대여소 이름으로 추가해 주세요. 메모는 필요 없어요.")
    t.state_only()
    t.tags.append("reduction")


# ------------------------------------------------------------------------------------ Seoul: subway

_LINES = [f"{n}호선" for n in range(1, 9)]


@template("traffic", count=1)
async def subway_weekday_average(t: Draft) -> None:
    """A line's ridership last Friday → its busiest boarding station → that station's Monday to Thursday records
    (parallel) → the five weekdays' average (evaluate_expression)."""
    t.today(TODAY.isoformat())
    for offset in range(len(_LINES)):
        line = t.pick(_LINES, offset=offset)
        probe = await t.explore("get_subway_ridership_by_station", {"USE_DT": _ymd(LAST_FRIDAY), "LINE_NUM": line},
                                size=1000)
        if _unique_max(probe.records, lambda r: number(r["GTON_TNOPE"])) is not None:
            break
    else:
        raise DraftError(f"{t.task_id}: every line's busiest station is tied")
    friday, _ = await t.call_all_pages("get_subway_ridership_by_station",
                                       {"USE_DT": _ymd(LAST_FRIDAY), "LINE_NUM": line}, step=0)
    top = _unique_max(friday, lambda r: number(r["GTON_TNOPE"]))
    station = top["SBWY_STNS_NM"]
    monday = LAST_FRIDAY - timedelta(days=4)
    boardings = []
    for i in range(4):
        args = {"USE_DT": _ymd(monday + timedelta(days=i)), "LINE_NUM": line, "SUB_STA_NM": station}
        result = await t.call("get_subway_ridership_by_station", args, step=1, page=1, size=1000)
        if len(result.records) != 1:
            raise DraftError(f"{t.task_id}: not one ridership record for {args}")
        boardings.append(int(number(result.records[0]["GTON_TNOPE"])))
    boardings.append(int(number(top["GTON_TNOPE"])))
    value = await t.evaluate(f"({' + '.join(map(str, boardings))}) / 5", step=2)
    t.ask(f"지난주 금요일 {line}에서 승차 인원이 가장 많았던 역을 찾아서, 그 역의 지난주 월요일부터 금요일까지 하루 평균 "
          f"승차 인원을 소수 둘째 자리까지 알려 주세요.")
    t.answer_number(round(value, 2))
    t.tags += ["fan-out", "reduction", "arithmetic"]


@template("traffic", count=2)
async def subway_line_top_station(t: Draft) -> None:
    """A line's ridership last Friday → its busiest station → that station a week earlier (change) or its code."""
    t.today(TODAY.isoformat())
    line = t.pick(_LINES)
    probe = await t.explore("get_subway_ridership_by_station", {"USE_DT": _ymd(LAST_FRIDAY), "LINE_NUM": line},
                            size=1000)
    top = _unique_max(probe.records, lambda r: number(r["GTOFF_TNOPE"]))
    if top is None:
        raise DraftError(f"{t.task_id}: tied stations")
    station = top["SBWY_STNS_NM"]
    records, _ = await t.call_all_pages("get_subway_ridership_by_station",
                                        {"USE_DT": _ymd(LAST_FRIDAY), "LINE_NUM": line}, step=0)
    if t.variant % 2 == 0:
        before = []
        for weeks in (1, 2):
            day = LAST_FRIDAY - timedelta(days=7 * weeks)
            rows, _ = await t.call_all_pages("get_subway_ridership_by_station",
                                             {"USE_DT": _ymd(day), "LINE_NUM": line, "SUB_STA_NM": station}, step=1)
            before.append(int(number(rows[0]["GTOFF_TNOPE"])))
        a = int(number(top["GTOFF_TNOPE"]))
        value = await t.evaluate(f"100 * ({a} - ({before[0]} + {before[1]}) / 2) / (({before[0]} + {before[1]}) / 2)",
                                step=2)
        t.ask(f"지난주 금요일 {line}에서 하차 인원이 가장 많았던 역은, 그 전 두 번의 금요일 평균과 비교해 하차 인원이 "
              f"몇 % 변했나요? 줄었으면 음수로, 소수 둘째 자리까지 알려 주세요.")
        t.answer_number(round(value, 2))
        t.tags += ["reduction", "arithmetic"]
    else:
        code_line = f"{int(line[0]):02d}호선"
        found, _ = await t.call_all_pages("search_subway_stations", {"STATION_NM": station, "LINE_NUM": code_line},
                                          step=1)
        exact = [r for r in found if r["STATION_NM"] == station and r["LINE_NUM"] == code_line]
        if len(exact) != 1:
            raise DraftError(f"{t.task_id}: no single station code for {station}")
        code = exact[0]["STATION_CD"]
        await t.call("add_to_watchlist", {"list_name": "지하철역", "item": code}, step=2)
        t.ask(f"지난주 금요일에 {line}에서 내린 사람이 가장 많았던 역의 전철역코드를 알려 주고, 그 코드를 '지하철역' "
              f"관심목록에 메모 없이 추가해 주세요.")
        t.answer_string(code)
        t.tags.append("reduction")


# ---------------------------------------------------------------------------------------- Seoul: bus

@template("traffic", count=2)
async def bus_terminal_boardings(t: Draft) -> None:
    """Route number → its first and last stops → the route's boardings by stop last Friday (and the Friday
    before, in parallel) → the terminals' share, or how much that share moved (evaluate_expression)."""
    t.today(TODAY.isoformat())
    fridays = (LAST_FRIDAY,) if t.variant % 2 == 0 else (LAST_FRIDAY, LAST_FRIDAY - timedelta(days=7))
    routes = await t.explore_all("search_bus_routes")
    candidates = sorted(r["ROUTE_NM"] for r in routes if r["ROUTE_TYPE"] in ("간선", "지선"))
    for offset in range(len(candidates)):
        number_ = t.pick(candidates, offset=offset)
        route = next(r for r in routes if r["ROUTE_NM"] == number_)
        ends = (route["ST_STA_NM"], route["ED_STA_NM"])
        ok = ends[0] != ends[1]
        for day in fridays:
            rides = await t.explore("get_bus_ridership_by_stop", {"USE_DT": _ymd(day), "RTE_NO": number_}, size=1000)
            names = [r["SBWY_STNS_NM"] for r in rides.records]
            ok = ok and all(names.count(e) == 1 for e in ends)
        if ok:
            break
    else:
        raise DraftError(f"{t.task_id}: no route whose terminals appear once")
    await t.call_all_pages("search_bus_routes", {"ROUTE_NM": number_}, step=0)
    shares = []
    for day in fridays:
        records, _ = await t.call_all_pages("get_bus_ridership_by_stop", {"USE_DT": _ymd(day), "RTE_NO": number_},
                                            step=1)
        on = {r["SBWY_STNS_NM"]: int(number(r["GTON_TNOPE"])) for r in records}
        shares.append(f"100 * ({on[ends[0]]} + {on[ends[1]]}) / {sum(int(number(r['GTON_TNOPE'])) for r in records)}")
    if len(shares) == 1:
        value = await t.evaluate(shares[0], step=2)
        t.ask(f"{number_}번 버스의 기점과 종점 정류장에서 지난주 금요일에 탄 승객은 그날 이 노선 전체 승차 인원의 몇 "
              f"%였나요? 소수 둘째 자리까지 알려 주세요.")
    else:
        value = await t.evaluate(f"{shares[0]} - {shares[1]}", step=2)
        t.ask(f"지난주 금요일 {number_}번 버스 승차 인원 중 출발 정류장(기점)과 종점 정류장에서 탄 사람의 비율은 그 전주 "
              f"금요일보다 몇 %포인트 높아졌나요? 낮아졌으면 음수로, 소수 둘째 자리까지 알려 주세요.")
    t.answer_number(round(value, 2))
    t.tags += ["arithmetic"]
