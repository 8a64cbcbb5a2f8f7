"""Endpoints of every family used by the client tests (what the catalog will hold, written by hand)."""

from __future__ import annotations

from mcp_gateway.catalog.spec import Endpoint

NEIS_SCHOOLS = Endpoint(platform="edu", family="hub", path="schoolInfo", max_page_size=1000)
NEIS_CLASSES = Endpoint(platform="edu", family="hub", path="classInfo")
ASSEMBLY_MEMBERS = Endpoint(platform="assembly", family="hub", path="nwvrqwxyaytdsfvhu")
GG_AED = Endpoint(platform="gg", family="hub", path="AEDLocation")
SEOUL_BIKES = Endpoint(platform="seoul", family="seoul", path="bikeList")
SEOUL_STATIONS = Endpoint(platform="seoul", family="seoul", path="SearchSTNBySubwayLineInfo",
                          path_params=("STATION_CD", "STATION_NM", "LINE_NUM"))
SEOUL_SUBWAY_RIDERS = Endpoint(platform="seoul", family="seoul", path="CardSubwayStatsNew",
                               path_params=("USE_DT", "LINE_NUM", "SUB_STA_NM"))
KRX_PRICES = Endpoint(platform="krx", family="datago", path="GetStockSecuritiesInfoService/getStockPriceInfo")
KDIC_INSTITUTIONS = Endpoint(platform="kdic", family="datago",
                             path="GetInsurgTrgetFnltInfoService/getInsurgTrgetFnltInfoList")
HRD_SCHEDULE = Endpoint(platform="hrdk", family="datago", path="qualExamSchd/getQualExamSchdList")
HRD_ACQUISITION = Endpoint(platform="hrdk", family="datago", path="qualAcquPtcond/getQualAcquPtcond")
HRD_OPEN_QST = Endpoint(platform="hrdk", family="datago", path="openQst/getOpenQstList")  # upstream cap: 50
DART_LIST = Endpoint(platform="dart", family="dart", path="list.json")
DART_COMPANY = Endpoint(platform="dart", family="dart", path="company.json", upstream_paged=False, list_key="$")
DART_CORP_CODES = Endpoint(platform="dart", family="dart", path="corpCode.xml", max_page_size=1000,
                           upstream_paged=False, list_key="result.list",
                           local_filters={"corp_name": "like", "stock_code": "exact"})
EX_TRAFFIC_IC = Endpoint(platform="ex", family="expressway", path="trafficapi/trafficIc")
EX_UNITS = Endpoint(platform="ex", family="expressway", path="locationinfo/locationinfoUnit")
EX_REST_OIL = Endpoint(platform="ex", family="expressway", path="restinfo/restOilList")  # ignores paging
EX_REST_OIL_UNPAGED = EX_REST_OIL.model_copy(update={"upstream_paged": False})
LAW_SEARCH = Endpoint(platform="law", family="law", path="lawSearch.do", fixed={"target": "law"})
LAW_BODY = Endpoint(platform="law", family="law", path="lawService.do", fixed={"target": "law"},
                    upstream_paged=False)
LAW_ARTICLES = LAW_BODY.model_copy(update={"list_key": "법령.조문.조문단위"})
SCHOOLINFO_BASICS = Endpoint(platform="edu", family="schoolinfo", base="schoolinfo", path="openApi.do",
                             fixed={"apiType": "0"}, upstream_paged=False)

# One answering endpoint per platform (and base), with params that find data: the fault tests' targets.
ONE_PER_PLATFORM = {
    "ex": (EX_TRAFFIC_IC, {}), "seoul": (SEOUL_BIKES, {}), "dart": (DART_LIST, {"bgn_de": "20261001"}),
    "krx": (KRX_PRICES, {"itmsNm": "삼성전자"}), "kdic": (KDIC_INSTITUTIONS, {}), "edu": (NEIS_SCHOOLS, {}),
    "edu-schoolinfo": (SCHOOLINFO_BASICS, {"schulKndCode": "02", "sggCode": "11350"}),
    "hrdk": (HRD_SCHEDULE, {}), "law": (LAW_SEARCH, {}), "assembly": (ASSEMBLY_MEMBERS, {}), "gg": (GG_AED, {}),
}
