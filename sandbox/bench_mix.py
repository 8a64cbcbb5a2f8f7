"""A representative request mix over all ten platforms, for throughput measurements.

Every entry is a paged list query as an agent would send it (pages of 100 records); several ask for deep pages of
the world's largest tables (stock prices, tollbooth volumes, the largest Gyeonggi dataset).
Entity values come from the world so the mix works at any scale.
"""

from __future__ import annotations

from .keys import KeyStore
from .world.runtime import World

Request = tuple[str, str, dict[str, str]]  # (label, path, query)


def _deep(total: int, size: int, fraction: float = 0.9) -> int:
    """A 1-based page number about ``fraction`` of the way through ``total`` rows."""
    return max(1, int(total * fraction) // size)


def request_mix(world: World, keys: KeyStore) -> list[Request]:
    k = keys.first
    unit = world.scalar('SELECT "unitCode" FROM ex_unit ORDER BY "unitCode" LIMIT 1')
    day_ex = world.scalar('SELECT min("sumDate") FROM ex_traffic_ic')
    day = world.scalar('SELECT max("USE_YMD") FROM seoul_subway_ridership')
    month, month_rows = world.rows('SELECT "RENT_NM" m, count(*) n FROM seoul_bike_rent_month GROUP BY 1 '
                                   'ORDER BY 2 DESC, 1 LIMIT 1')[0].values()
    prices = world.count("krx_price")
    recent = world.count("dart_disclosure", '"rcept_dt" BETWEEN ? AND ?', ["20260901", "20261130"])
    acqu = world.count("hrdk_acqu", '"acquYy" = ? AND "qualgbCd" = ?', ["2024", "T"])
    bills = world.count("assembly_bill", '"AGE" = ?', ["21"])
    biggest = {p: world.rows("SELECT service, row_count FROM district_datasets WHERE platform = ? "
                             "ORDER BY row_count DESC, service LIMIT 1", [p])[0] for p in ("gg", "seoul")}
    school = world.rows('SELECT "ATPT_OFCDC_SC_CODE" o, "SD_SCHUL_CODE" s FROM edu_school '
                        'ORDER BY "SD_SCHUL_CODE" LIMIT 1')[0]
    seoul_start = max(1, int(month_rows * 0.9) - 99)
    ds_start = max(1, int(biggest["seoul"]["row_count"] * 0.9) - 99)
    return [
        ("ex trafficIc (one tollbooth, a day)", "/ex/openapi/trafficapi/trafficIc",
         {"key": k("ex"), "type": "json", "unitCode": str(unit).strip(), "sumDate": day_ex, "numOfRows": "100"}),
        ("ex locationinfoUnit", "/ex/openapi/locationinfo/locationinfoUnit",
         {"key": k("ex"), "type": "json", "numOfRows": "100", "pageNo": "2"}),
        ("seoul CardSubwayStatsNew (a day)", f"/seoul/{k('seoul')}/json/CardSubwayStatsNew/1/100/{day}", {}),
        ("seoul tbCycleRentUseMonthInfo (deep window)",
         f"/seoul/{k('seoul')}/json/tbCycleRentUseMonthInfo/{seoul_start}/{seoul_start + 99}/{month}", {}),
        ("seoul LOCALDATA largest (deep window)",
         f"/seoul/{k('seoul')}/json/{biggest['seoul']['service']}/{ds_start}/{ds_start + 99}", {}),
        ("dart list.json (one company)", "/dart/api/list.json",
         {"crtfc_key": k("dart"), "corp_code": "00126380", "bgn_de": "20240101", "end_de": "20261130",
          "page_count": "100"}),
        ("dart list.json (3 months, deep page)", "/dart/api/list.json",
         {"crtfc_key": k("dart"), "bgn_de": "20260901", "end_de": "20261130", "page_count": "100",
          "page_no": str(_deep(recent, 100))}),
        ("krx getStockPriceInfo (deep page, all stocks)",
         "/datago/1160100/service/GetStockSecuritiesInfoService/getStockPriceInfo",
         {"serviceKey": k("krx"), "resultType": "json", "numOfRows": "100", "pageNo": str(_deep(prices, 100))}),
        ("krx getStockPriceInfo (one stock, a year)",
         "/datago/1160100/service/GetStockSecuritiesInfoService/getStockPriceInfo",
         {"serviceKey": k("krx"), "resultType": "json", "numOfRows": "100", "likeSrtnCd": "005930",
          "beginBasDt": "20250101", "endBasDt": "20260101"}),
        ("kdic institutions", "/datago/B190017/service/GetInsurgTrgetFnltInfoService/getInsurgTrgetFnltInfoList",
         {"ServiceKey": k("kdic"), "resultType": "json", "numOfRows": "100"}),
        ("edu schoolInfo (deep page)", "/neis/hub/schoolInfo",
         {"KEY": k("edu"), "Type": "json", "pSize": "100", "pIndex": str(_deep(world.count("edu_school"), 100))}),
        ("edu classInfo (one school)", "/neis/hub/classInfo",
         {"KEY": k("edu"), "Type": "json", "ATPT_OFCDC_SC_CODE": school["o"], "SD_SCHUL_CODE": school["s"]}),
        ("hrdk qualAcquPtcond (deep page)", "/datago/B490007/qualAcquPtcond/getQualAcquPtcond",
         {"serviceKey": k("hrdk"), "dataFormat": "json", "acquYy": "2024", "qualgbCd": "T", "numOfRows": "100",
          "pageNo": str(_deep(acqu, 100))}),
        ("law lawSearch (laws by name)", "/law/DRF/lawSearch.do",
         {"OC": k("law"), "target": "law", "type": "JSON", "query": "법", "display": "100", "page": "2"}),
        ("law lawSearch (precedents)", "/law/DRF/lawSearch.do",
         {"OC": k("law"), "target": "prec", "type": "JSON", "query": "손해배상", "display": "100"}),
        ("assembly member bills (deep page)", "/assembly/portal/openapi/nzmimeepazxkubdpn",
         {"KEY": k("assembly"), "Type": "json", "AGE": "21", "pSize": "100", "pIndex": str(_deep(bills, 100))}),
        ("assembly current members", "/assembly/portal/openapi/nwvrqwxyaytdsfvhu",
         {"KEY": k("assembly"), "Type": "json", "pSize": "100"}),
        ("gg largest dataset (deep page)", f"/gg/{biggest['gg']['service']}",
         {"KEY": k("gg"), "Type": "json", "pSize": "100",
          "pIndex": str(_deep(biggest["gg"]["row_count"], 100))}),
    ]
