"""Expressway rest areas (휴게소) and what the restinfo / business services say about them.

A rest-area site lies on a route and has one rest area per direction ("망향(부산방향)").
Each rest area has a 6-digit ``stdRestCd`` (even); its filling station, where there is one,
has the next code (rest code + 1), which is how live clients find ``restOilList`` rows.
Brands, facilities and menus are drawn from catalogues of real chains and common dishes.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .. import korean
from ..context import BuildContext
from ..facts import PROVINCE_BY_CODE
from .ex import nearest_provinces, route_points, unique_names
from .facts import AREA_CODES, EX_ROUTES

OIL_COMPANIES = ("SK", "GS", "S-OIL", "HD현대오일뱅크", "알뜰")
OIL_SHARES = (0.3, 0.25, 0.15, 0.2, 0.1)

# (name, description) of chains found in rest areas, of facilities, and (dish, usual price) of menus.
BRANDS = (("파리바게뜨", "베이커리"), ("롯데리아", "패스트푸드"), ("엔제리너스", "커피전문점"),
          ("투썸플레이스", "커피전문점"), ("할리스", "커피전문점"), ("이디야커피", "커피전문점"),
          ("던킨", "도넛"), ("배스킨라빈스", "아이스크림"), ("크리스피크림도넛", "도넛"),
          ("호두와땅콩", "호두과자"), ("맘스터치", "패스트푸드"), ("뚜레쥬르", "베이커리"),
          ("스타벅스", "커피전문점"), ("파스쿠찌", "커피전문점"), ("탐앤탐스", "커피전문점"),
          ("본죽", "죽전문점"), ("CU", "편의점"), ("GS25", "편의점"), ("세븐일레븐", "편의점"), ("이마트24", "편의점"))
FACILITIES = (("수유실", "영유아 수유 및 기저귀 교환대"), ("약국", "일반의약품 판매"), ("ATM", "현금자동인출기"),
              ("샤워실", "화물차 운전자 샤워실"), ("세차장", "자동세차"), ("전기차충전소", "급속충전기 운영"),
              ("화물차라운지", "화물차 운전자 휴게공간"), ("수면실", "운전자 수면실"), ("세탁실", "코인세탁기"),
              ("전동휠체어충전", "장애인 전동휠체어 충전"), ("택배", "택배 접수"), ("쉼터", "고객 쉼터"))
FOODS = (("우동", 5000), ("라면", 4500), ("돈까스", 9500), ("김치찌개", 8500), ("된장찌개", 8000),
         ("비빔밥", 9000), ("떡만둣국", 8500), ("소떡소떡", 4500), ("호두과자", 5000), ("알감자", 4500),
         ("핫바", 3500), ("제육덮밥", 9500), ("육개장", 9500), ("순두부찌개", 9000), ("짜장면", 7000),
         ("짬뽕", 8500), ("국밥", 9000), ("어묵", 3500), ("김밥", 4000), ("카레라이스", 8000),
         ("떡볶이", 5000), ("갈비탕", 13000), ("한우국밥", 11000), ("물냉면", 9000), ("칼국수", 8000))
REST_COLUMNS = ("stdRestCd", "stdRestNm", "routeNo", "routeName", "svarAddr")


def build_rests(ctx: BuildContext) -> pa.Table:
    """One row per rest area (site × direction), in route order."""
    rng = ctx.rng("ex.rests")
    taken: set[str] = set()
    cols: dict[str, list] = {k: [] for k in ("unitCode", "unitName", "routeNo", "routeName", "xValue", "yValue",
                                             "stdRestCd", "serviceAreaCode", "stdRestNm", "svarAddr",
                                             "_site", "_direction", "_province")}
    for route in EX_ROUTES:
        known = route.rests.split()
        sites = unique_names(rng, known, max(len(known), round(route.tollbooths / 4)), taken)
        t = np.linspace(0.04, 0.96, len(sites)) + rng.normal(0, 0.01, len(sites))
        lat, lon = route_points(route, np.clip(t, 0, 1))
        provinces = nearest_provinces(lat, lon)
        for site, la, lo, prov in zip(sites, lat, lon, provinces):
            for direction in (route.end_dir, route.start_dir):
                cols["routeNo"].append(route.route_no)
                cols["routeName"].append(route.name)
                cols["unitName"].append(f"{site}({direction}방향)")
                cols["stdRestNm"].append(f"{site}({direction})휴게소")
                cols["xValue"].append(round(float(lo + rng.normal(0, 0.004)), 6))
                cols["yValue"].append(round(float(la + rng.normal(0, 0.004)), 6))
                cols["_site"].append(site)
                cols["_direction"].append(direction)
                cols["_province"].append(prov)
    n = len(cols["unitName"])
    cols["unitCode"] = [str(601 + i) for i in range(n)]
    cols["stdRestCd"] = [f"{2 * (i + 1):06d}" for i in range(n)]
    cols["serviceAreaCode"] = [f"A{i + 1:05d}" for i in range(n)]
    cols["svarAddr"] = korean.road_addresses(rng, [PROVINCE_BY_CODE[p].name for p in cols["_province"]])
    return pa.table(cols)


def build_fuel(ctx: BuildContext, rests: pa.Table) -> pa.Table:
    """Filling stations of the rest areas that have one, with today's prices (won per litre)."""
    rng = ctx.rng("ex.fuel")
    rest = rests.to_pylist()
    has = rng.random(len(rest)) < 0.92
    picked = [r for r, h in zip(rest, has) if h]
    n = len(picked)
    company = rng.choice(len(OIL_COMPANIES), n, p=OIL_SHARES)
    cheap = np.where(company == OIL_COMPANIES.index("알뜰"), -40, 0)
    gasoline = (np.round(rng.normal(1695, 30, n) / 10) * 10 + cheap).astype(np.int32)
    diesel = gasoline - (np.round(rng.normal(110, 12, n) / 10) * 10).astype(np.int32)
    lpg = rng.random(n) < 0.3
    lpg_price = np.round(rng.normal(1060, 25, n) / 10).astype(np.int32) * 10
    tel = korean.phone_numbers(rng, [AREA_CODES[r["_province"]] for r in picked])
    return pa.table({
        "stdRestCd": [f"{int(r['stdRestCd']) + 1:06d}" for r in picked],
        "stdRestNm": [f"{r['_site']}({r['_direction']})주유소" for r in picked],
        "serviceAreaCode": [r["serviceAreaCode"] for r in picked],
        "serviceAreaCode2": [f"{int(r['stdRestCd']) + 1:06d}" for r in picked],
        "serviceAreaName": [r["unitName"] for r in picked],
        "routeNo": [r["routeNo"] for r in picked],
        "routeName": [r["routeName"] for r in picked],
        "direction": [r["_direction"] for r in picked],
        "oilCompany": [OIL_COMPANIES[c] for c in company],
        "lpgYn": ["Y" if x else "N" for x in lpg],
        "gasolinePrice": gasoline,
        "diselPrice": diesel,
        "lpgPrice": pa.array(lpg_price, mask=~lpg),
        "telNo": tel,
        "svarAddr": [r["svarAddr"] for r in picked],
        "_restCd": [r["stdRestCd"] for r in picked],
    })


def _pick_items(rng: np.random.Generator, rests: pa.Table, catalogue: tuple, low: int, high: int
                ) -> tuple[dict[str, list], list[int]]:
    """Choose ``low``..``high`` distinct catalogue items per rest area: (rest columns, item index)."""
    rest = rests.select(list(REST_COLUMNS)).to_pylist()
    cols: dict[str, list] = {c: [] for c in REST_COLUMNS}
    items: list[int] = []
    for r in rest:
        k = int(rng.integers(low, high + 1))
        for item in sorted(rng.choice(len(catalogue), min(k, len(catalogue)), replace=False).tolist()):
            for c in REST_COLUMNS:
                cols[c].append(r[c])
            items.append(item)
    return cols, items


def build_rest_items(ctx: BuildContext, rests: pa.Table) -> dict[str, pa.Table]:
    """restBrandList / restConvList / restBestfoodList rows per rest area."""
    rng = ctx.rng("ex.rest_items")
    cols, items = _pick_items(rng, rests, BRANDS, 2, 6)
    all_day = rng.random(len(items)) < 0.3
    brand = pa.table({**cols, "brdCode": [f"B{i + 1:03d}" for i in items],
                      "brdName": [BRANDS[i][0] for i in items], "brdDesc": [BRANDS[i][1] for i in items],
                      "stime": ["00:00" if a else "07:00" for a in all_day],
                      "etime": ["24:00" if a else "22:00" for a in all_day]})
    cols, items = _pick_items(rng, rests, FACILITIES, 2, 6)
    conv = pa.table({**cols, "psCode": [f"{i + 1:02d}" for i in items],
                     "psName": [FACILITIES[i][0] for i in items], "psDesc": [FACILITIES[i][1] for i in items],
                     "stime": ["00:00"] * len(items), "etime": ["24:00"] * len(items)})
    cols, items = _pick_items(rng, rests, FOODS, 3, 8)
    n = len(items)
    cost = np.array([FOODS[i][1] for i in items]) + rng.integers(-2, 4, n) * 500
    food = pa.table({**cols, "seq": np.arange(1, n + 1), "foodNm": [FOODS[i][0] for i in items], "foodCost": cost,
                     "etc": [""] * n, "bestfoodyn": np.where(rng.random(n) < 0.25, "Y", "N"),
                     "premiumyn": np.where(rng.random(n) < 0.1, "Y", "N"),
                     "recommendyn": np.where(rng.random(n) < 0.3, "Y", "N"),
                     "seasonMenu": ["사계절"] * n})
    return {"ex_rest_brand": brand, "ex_rest_conv": conv, "ex_rest_food": food}
