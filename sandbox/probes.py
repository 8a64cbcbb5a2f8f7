"""One representative request per platform, and how to read its outcome.

Used by ``kopa sandbox check`` (is every platform up and answering in its real envelope?) and
by the throughput benchmark. Reading an outcome knows each envelope family's success marker.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from .keys import KeyStore


@dataclass(frozen=True)
class Probe:
    platform: str
    path_template: str  # may contain {key} (Seoul puts the key in the path)
    query: dict[str, str] = field(default_factory=dict)  # may contain "{key}" values
    reader: str = "json"

    def path(self, keys: KeyStore) -> str:
        return self.path_template.format(key=keys.first(self.platform))

    def params(self, keys: KeyStore) -> dict[str, str]:
        key = keys.first(self.platform)
        return {k: v.format(key=key) for k, v in self.query.items()}


@dataclass
class Outcome:
    ok: bool
    code: str
    records: int
    total: int | None


PROBES: tuple[Probe, ...] = (
    Probe("ex", "/ex/openapi/locationinfo/locationinfoUnit",
          {"key": "{key}", "type": "json", "numOfRows": "10", "pageNo": "1"}, "ex"),
    Probe("seoul", "/seoul/{key}/json/SearchSTNBySubwayLineInfo/1/5/", {}, "seoul"),
    Probe("dart", "/dart/api/list.json",
          {"crtfc_key": "{key}", "corp_code": "00126380", "bgn_de": "20250101", "end_de": "20251231"}, "dart"),
    Probe("krx", "/datago/1160100/service/GetStockSecuritiesInfoService/getStockPriceInfo",
          {"serviceKey": "{key}", "resultType": "json", "numOfRows": "10", "likeSrtnCd": "005930"}, "datago"),
    Probe("kdic", "/datago/B190017/service/GetInsurgTrgetFnltInfoService/getInsurgTrgetFnltInfoList",
          {"ServiceKey": "{key}", "resultType": "json", "numOfRows": "10"}, "kdic"),
    Probe("edu", "/neis/hub/schoolInfo", {"KEY": "{key}", "Type": "json", "ATPT_OFCDC_SC_CODE": "T10"}, "hub"),
    Probe("hrdk", "/datago/B490007/qualExamSchd/getQualExamSchdList",
          {"serviceKey": "{key}", "dataFormat": "json", "implYy": "2025", "numOfRows": "10"}, "hrdk"),
    Probe("law", "/law/DRF/lawSearch.do", {"OC": "{key}", "target": "law", "type": "JSON", "query": "민법"}, "law"),
    Probe("assembly", "/assembly/portal/openapi/nwvrqwxyaytdsfvhu", {"KEY": "{key}", "Type": "json", "pSize": "10"},
          "hub"),
    Probe("gg", "/gg/Tbggibllbrm", {"KEY": "{key}", "Type": "json", "SIGUN_CD": "41110"}, "hub"),
)


def _hub(body: dict[str, Any]) -> Outcome:
    if "RESULT" in body:
        return Outcome(False, body["RESULT"]["CODE"], 0, 0)
    (svc,) = body.values()
    if isinstance(svc, dict):  # Seoul variant
        rows = svc.get("row", [])
        return Outcome(svc["RESULT"]["CODE"] == "INFO-000", svc["RESULT"]["CODE"], len(rows), svc["list_total_count"])
    head, rows = svc[0]["head"], svc[1]["row"]
    code = head[1]["RESULT"]["CODE"]
    rows = rows if isinstance(rows, list) else [rows]
    return Outcome(code == "INFO-000", code, len(rows), int(head[0]["list_total_count"]))


def _as_list(items: Any) -> list[Any]:
    if not items:
        return []
    return items if isinstance(items, list) else [items]


def _datago(body: dict[str, Any]) -> Outcome:
    resp = body["response"]
    code = resp["header"]["resultCode"]
    items = resp["body"]["items"]
    rows = _as_list(items.get("item") if isinstance(items, dict) else items)
    return Outcome(code == "00", code, len(rows), int(resp["body"]["totalCount"]))


def _kdic(body: dict[str, Any]) -> Outcome:
    (root,) = body.values()
    code = root["header"]["resultCode"]
    return Outcome(code == "00", code, len(_as_list(root.get("item"))), int(root.get("totalCount", 0)))


def _hrdk(body: dict[str, Any]) -> Outcome:
    code = body["header"]["resultCode"]
    b = body.get("body", {})
    return Outcome(code == "00", code, len(_as_list(b.get("items"))), int(b.get("totalCount", 0)))


def _dart(body: dict[str, Any]) -> Outcome:
    return Outcome(body["status"] == "000", body["status"], len(body.get("list", [])), body.get("total_count"))


def _ex(body: dict[str, Any]) -> Outcome:
    rows = next((v for v in body.values() if isinstance(v, list)), [])
    return Outcome(body["code"] == "SUCCESS", body["code"], len(rows), int(body.get("count", 0)))


def _law(body: dict[str, Any]) -> Outcome:
    (root,) = body.values()
    if not isinstance(root, dict):
        return Outcome(False, str(root)[:30], 0, 0)
    rows = next((v for k, v in root.items() if isinstance(v, (list, dict))), [])
    return Outcome(True, "OK", len(_as_list(rows)), int(root.get("totalCnt", 0)))


READERS: dict[str, Callable[[dict[str, Any]], Outcome]] = {
    "hub": _hub, "seoul": _hub, "datago": _datago, "kdic": _kdic, "hrdk": _hrdk, "dart": _dart, "ex": _ex,
    "law": _law,
}


def read_outcome(probe: Probe, response: httpx.Response) -> Outcome:
    """Classify a probe's answer: the envelope's own success marker, record and total counts."""
    try:
        body = response.json()
        return READERS[probe.reader](body)
    except (ValueError, KeyError, IndexError, TypeError, StopIteration) as exc:
        return Outcome(False, f"unreadable ({type(exc).__name__})", 0, None)
