"""Seoul transport services (subway, bus, bike) declared for the Seoul path-API engine.

Names, wrappers and positional filters follow the live services: CardSubwayStatsNew
(/USE_DT/LINE_NUM/SUB_STA_NM), CardBusStatisticsServiceNew (/USE_DT/RTE_NO, the stop name
in a field called SBWY_STNS_NM), bikeList (wrapper rentBikeStatus), tbCycleStationInfo
(wrapper stationInfo), tbCycleRentUseMonthInfo (wrapper cycleRentUseMonthInfo, /RENT_NM as
YYYYMM), SearchSTNBySubwayLineInfo (/STATION_CD/STATION_NM/LINE_NUM) and the stop
locations busStopLocationXyInfo. ``busRouteInfo`` is a sandbox name for the route master,
which the live portal serves from a separate host.
"""

from __future__ import annotations

from typing import Any

from ..world.runtime import World
from .seoul_service import SeoulService


def _bike_status(row: dict[str, Any]) -> dict[str, Any]:
    """bikeList speaks camelCase and names the station "<number>. <name>"."""
    return {
        "rackTotCnt": str(row["HOLD_NUM"]),
        "stationName": f"{row['_no']}. {row['RENT_NM']}",
        "parkingBikeTotCnt": str(row["parkingBikeTotCnt"]),
        "shared": str(row["shared"]),
        "stationLatitude": f"{row['STA_LAT']:.6f}",
        "stationLongitude": f"{row['STA_LONG']:.6f}",
        "stationId": row["RENT_ID"],
    }


def transport_services(world: World) -> list[SeoulService]:
    return [
        SeoulService("CardSubwayStatsNew", "seoul_subway_ridership", '"USE_YMD", "SBWY_ROUT_LN_NM", "SBWY_STNS_NM"',
                     path_params=(("USE_DT", "USE_YMD"), ("LINE_NUM", "SBWY_ROUT_LN_NM"),
                                  ("SUB_STA_NM", "SBWY_STNS_NM")), required=1),
        SeoulService("CardBusStatisticsServiceNew", "seoul_bus_ridership", '"USE_YMD", "RTE_NO", "_seq"',
                     path_params=(("USE_DT", "USE_YMD"), ("RTE_NO", "RTE_NO")), required=1),
        SeoulService("bikeList", "seoul_bike_station", '"_no"', wrapper="rentBikeStatus",
                     columns=("HOLD_NUM", "_no", "RENT_NM", "parkingBikeTotCnt", "shared", "STA_LAT", "STA_LONG",
                              "RENT_ID"), format_row=_bike_status),
        SeoulService("tbCycleStationInfo", "seoul_bike_station", '"_no"', wrapper="stationInfo",
                     columns=("RENT_ID", "RENT_NO", "RENT_NM", "RENT_ID_SE", "STA_LOC", "STA_ADD1", "STA_ADD2",
                              "STA_LAT", "STA_LONG", "HOLD_NUM")),
        SeoulService("tbCycleRentUseMonthInfo", "seoul_bike_rent_month", '"RENT_NM", "_no", "_combo"',
                     wrapper="cycleRentUseMonthInfo", path_params=(("RENT_NM", "RENT_NM"),), required=1),
        SeoulService("SearchSTNBySubwayLineInfo", "seoul_subway_station", '"LINE_NUM", "STATION_CD"',
                     columns=("STATION_CD", "STATION_NM", "LINE_NUM", "FR_CODE"),
                     path_params=(("STATION_CD", "STATION_CD"), ("STATION_NM", "STATION_NM"), ("LINE_NUM", "LINE_NUM")),
                     like_params=frozenset({"STATION_NM"})),
        SeoulService("busStopLocationXyInfo", "seoul_bus_stop", '"STOPS_NO"',
                     columns=("STOPS_NO", "STOPS_NM", "XCRD", "YCRD", "NODE_ID", "STOPS_TYPE")),
        SeoulService("busRouteInfo", "seoul_bus_route", '"ROUTE_ID"', path_params=(("ROUTE_NM", "ROUTE_NM"),)),
    ]
