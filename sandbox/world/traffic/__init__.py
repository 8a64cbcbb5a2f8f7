"""World generator for the traffic domain: Korea Expressway and Seoul transport.

Expressway tables (``ex_*``) come from ``traffic_ex`` / ``traffic_ex_rest``; Seoul subway,
bus and bike tables (``seoul_*``) from ``traffic_seoul`` / ``traffic_bike``. Real facts
(routes, stations) live in ``traffic_facts``.
"""

from __future__ import annotations

from ..context import BuildContext
from .bike import build_bike_rentals, build_bike_stations
from .ex import build_incidents, build_traffic_ic, build_travel_times, build_units
from .ex_rest import build_fuel, build_rest_items, build_rests
from .seoul import (
    build_bus_ridership,
    build_bus_routes,
    build_bus_stops,
    build_subway_ridership,
    build_subway_stations,
)

__all__ = ["NON_REPRODUCIBLE", "build", "build_expressway", "build_seoul"]

NON_REPRODUCIBLE = ("NON-REPRODUCIBLE: the live service changes every few minutes; "
                    "the sandbox serves one deterministic snapshot. ")


def build(ctx: BuildContext) -> None:
    """Add the traffic tables to the world."""
    build_expressway(ctx)
    build_seoul(ctx)


def build_expressway(ctx: BuildContext) -> None:
    units = build_units(ctx)
    ctx.add_table("ex_unit", units, sort_by=("routeNo", "_seq"), key=("unitCode",),
                  description="영업소 (tollbooths, locationinfo/locationinfoUnit) on the real expressway routes")
    rests = build_rests(ctx)
    ctx.add_table("ex_rest", rests, sort_by=("routeNo", "stdRestCd"), key=("stdRestCd",),
                  description="휴게소 per direction (locationinfo/locationinfoRest)")
    ctx.add_table("ex_fuel", build_fuel(ctx, rests), sort_by=("routeNo", "stdRestCd"), key=("stdRestCd",),
                  description="rest-area filling stations and prices (business/curStateStation, restinfo/restOilList)")
    for name, table in build_rest_items(ctx, rests).items():
        item_key = {"ex_rest_brand": "brdCode", "ex_rest_conv": "psCode", "ex_rest_food": "seq"}[name]
        ctx.add_table(name, table, sort_by=("stdRestCd", item_key), key=("stdRestCd", item_key),
                      description=f"rest-area {name.removeprefix('ex_rest_')} list (restinfo)")
    ctx.add_table("ex_traffic_ic", build_traffic_ic(ctx, units),
                  sort_by=("unitCode", "sumDate", "sumTm", "inoutType", "tcsType"),
                  key=("unitCode", "sumDate", "sumTm", "inoutType", "tcsType", "carType"),
                  description="hourly tollbooth volume (trafficapi/trafficIc) for the last ~90 days")
    trtm, section = build_travel_times(ctx, units)
    ctx.add_table("ex_trtm", trtm, sort_by=("startUnitCode", "endUnitCode"), key=("startUnitCode", "endUnitCode"),
                  description=NON_REPRODUCIBLE + "Travel time between neighbouring tollbooths (trtm/realUnitTrtm)")
    ctx.add_table("ex_section_traffic", section, sort_by=("routeNo", "conzoneId", "vdsId"), key=("vdsId",),
                  description=NON_REPRODUCIBLE + "Section traffic per VDS (odtraffic/trafficAmountByRealtime)")
    ctx.add_table("ex_incident", build_incidents(ctx, units), sort_by=("accDate", "accHour"),
                  key=("accDate", "accHour", "latitude", "altitude"),
                  description=NON_REPRODUCIBLE + "돌발·통제 messages (burstInfo/realTimeSms)")


def build_seoul(ctx: BuildContext) -> None:
    stations = build_subway_stations()
    ctx.add_table("seoul_subway_station", stations, sort_by=("LINE_NUM", "STATION_CD"),
                  key=("STATION_CD", "LINE_NUM"), description="subway stations per line (SearchSTNBySubwayLineInfo)")
    ctx.add_table("seoul_subway_ridership", build_subway_ridership(ctx, stations),
                  sort_by=("USE_YMD", "SBWY_ROUT_LN_NM", "SBWY_STNS_NM"),
                  key=("USE_YMD", "SBWY_ROUT_LN_NM", "SBWY_STNS_NM"),
                  description="daily boardings / alightings per station and line (CardSubwayStatsNew)")
    stops = build_bus_stops(ctx)
    ctx.add_table("seoul_bus_stop", stops, sort_by=("STOPS_NO",), key=("NODE_ID",),
                  description="bus stops with ARS numbers (busStopLocationXyInfo)")
    routes, links = build_bus_routes(ctx, stops)
    ctx.add_table("seoul_bus_route", routes, sort_by=("ROUTE_ID",), key=("ROUTE_ID",),
                  description="bus routes (busRouteInfo)")
    ctx.add_table("seoul_bus_ridership", build_bus_ridership(ctx, routes, stops, links),
                  sort_by=("USE_YMD", "RTE_NO", "_seq"), key=("USE_YMD", "RTE_NO", "STOPS_ID"),
                  description="daily boardings / alightings per bus route and stop (CardBusStatisticsServiceNew)")
    bikes = build_bike_stations(ctx)
    ctx.add_table("seoul_bike_station", bikes, sort_by=("_no",), key=("RENT_ID",),
                  description="따릉이 stations (tbCycleStationInfo) with one snapshot of live counts (bikeList)")
    ctx.add_table("seoul_bike_rent_month", build_bike_rentals(ctx, bikes),
                  sort_by=("RENT_NM", "_no", "_combo"), key=("RENT_NM", "STATION_NAME", "RENT_TYPE", "GENDER_CD",
                                                          "AGE_TYPE"),
                  description="따릉이 monthly rentals per station, rent type, gender and age (tbCycleRentUseMonthInfo)")
