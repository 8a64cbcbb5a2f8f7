"""Every core tool points at an endpoint the sandbox serves, with the parameters its spec names.

Each tool is called over loopback HTTP with the platform key and its required parameters
filled from the world's own values; the answer must be the platform's success with records —
not its "no such service", a 404, an authorization error, or even an empty "no data".
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_gateway.catalog import Catalog, ToolSpec, load_catalog
from mcp_gateway.catalog.catalog import SPECS_DIR

from .sandbox_calls import Answer, call_tool_endpoint

CORE_TOOLS = [t["name"] for path in sorted(SPECS_DIR.glob("*.json")) for t in json.loads(path.read_text())]

# Required inputs of core tools, as SQL over the world: the first row's columns are the arguments.
REQUIRED_ARGS_SQL = {
    "get_subway_ridership_by_station": "SELECT max(USE_YMD) AS USE_DT FROM seoul_subway_ridership",
    "get_bus_ridership_by_stop": "SELECT max(USE_YMD) AS USE_DT FROM seoul_bus_ridership",
    "get_bike_monthly_rental_usage": "SELECT min(RENT_NM) AS RENT_NM FROM seoul_bike_rent_month",
    "get_dart_company_overview": "SELECT min(corp_code) AS corp_code FROM dart_corp",
    "get_dart_convertible_bond_issuance_decision":
        "SELECT corp_code, _rcept_dt AS bgn_de, _rcept_dt AS end_de FROM dart_cvbd ORDER BY rcept_no LIMIT 1",
    "get_dart_single_company_key_accounts":
        "SELECT corp_code, bsns_year, reprt_code FROM dart_fnltt ORDER BY rcept_no LIMIT 1",
    "get_school_class_info": "SELECT ATPT_OFCDC_SC_CODE, SD_SCHUL_CODE FROM edu_class LIMIT 1",
    "get_school_major_info": "SELECT ATPT_OFCDC_SC_CODE FROM edu_major LIMIT 1",
    "school_basic_disclosure": "SELECT _kind_code AS schulKndCode, _sgg_code AS sggCode FROM edu_school LIMIT 1",
    "class_and_student_status": "SELECT CAST(max(_pban_yr) AS VARCHAR) AS pbanYr, any_value(SCHUL_KND_SC_CODE) AS "
                                "schulKndCode, any_value(_sgg_code) AS sggCode FROM edu_status "
                                "WHERE _pban_yr = (SELECT max(_pban_yr) FROM edu_status)",
    "students_by_grade_and_class": "SELECT CAST(max(_pban_yr) AS VARCHAR) AS pbanYr, any_value(SCHUL_KND_SC_CODE) AS "
                                   "schulKndCode, any_value(_sgg_code) AS sggCode FROM edu_status "
                                   "WHERE _pban_yr = (SELECT max(_pban_yr) FROM edu_status)",
    "get_qualification_acquisition_status": "SELECT acquYy, qualgbCd FROM hrdk_acqu LIMIT 1",
    "get_open_exam_question": "SELECT CAST(min(artlSeq) AS VARCHAR) AS artlSeq FROM hrdk_open_qst",
    "get_law_text": "SELECT CAST(min(법령일련번호) AS VARCHAR) AS MST FROM law_law",
    "get_law_text_by_effective_date": "SELECT CAST(min(법령일련번호) AS VARCHAR) AS MST FROM law_law",
    "get_court_precedent_text": "SELECT CAST(min(판례일련번호) AS VARCHAR) AS ID FROM law_prec",
    "get_constitutional_decision_text": "SELECT CAST(min(헌재결정례일련번호) AS VARCHAR) AS ID FROM law_detc",
    "search_member_sponsored_bills": "SELECT max(AGE) AS AGE FROM assembly_bill",
    "get_bill_detail": "SELECT BILL_NO FROM assembly_bill LIMIT 1",
    "search_plenary_minutes": "SELECT DAE_NUM, CONF_DATE FROM assembly_minutes_plenary LIMIT 1",
    "search_committee_minutes": "SELECT DAE_NUM, CONF_DATE FROM assembly_minutes_committee LIMIT 1",
    "get_bill_vote_results": "SELECT max(AGE) AS AGE FROM assembly_vote",
    "get_member_votes_on_bill": "SELECT AGE, BILL_ID FROM assembly_vote_member LIMIT 1",
}


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def _verdict(spec: ToolSpec, answer: Answer) -> str:
    """'ok', 'no data' or what went wrong, read the way each family reports it."""
    family, body = spec.endpoint.family, answer.body  # type: ignore[union-attr]
    if answer.status != 200:
        return f"HTTP {answer.status}"
    if spec.endpoint.path == "corpCode.xml":  # type: ignore[union-attr]
        return "ok" if "msdownload" in answer.content_type else f"not a ZIP: {answer.content_type}"
    if body is None:
        return "not JSON"
    text = json.dumps(body, ensure_ascii=False)
    checks: dict[str, tuple[bool, bool]] = {  # family -> (success, no data)
        "expressway": (body.get("code") == "SUCCESS", False),
        "seoul": ('"INFO-000"' in text, body.get("RESULT", {}).get("CODE") == "INFO-200"),
        "hub": ('"INFO-000"' in text, body.get("RESULT", {}).get("CODE") == "INFO-200"),
        "dart": (body.get("status") == "000", body.get("status") == "013"),
        "datago": ('"resultCode": "00"' in text, '"resultCode": "03"' in text),
        "law": ('"resultCode": "00"' in text or any(k in body for k in ("법령", "PrecService", "DetcService")), False),
        "schoolinfo": (body.get("resultCode") == "success" and bool(body.get("list")), False),
    }
    success, no_data = checks[family]
    return "ok" if success else "no data" if no_data else f"refused: {text[:200]}"


def _required_args(world: Any, spec: ToolSpec) -> dict[str, str]:
    sql = REQUIRED_ARGS_SQL.get(spec.name)
    args = {k: str(v) for k, v in world.rows(sql)[0].items()} if sql else {}
    missing = [p.name for p in spec.params if p.required and p.kind.value == "normal" and p.name not in args]
    assert not missing, f"{spec.name}: add sample values for required {missing} to REQUIRED_ARGS_SQL"
    return args


@pytest.mark.parametrize("name", CORE_TOOLS)
def test_core_tool_endpoint_serves_records(name: str, catalog: Catalog, world, keys, http) -> None:
    """With the world's own values for its required inputs, the endpoint answers with records."""
    spec = catalog.get(name)
    answer = call_tool_endpoint(http, spec, _required_args(world, spec), keys.first(spec.platform), page_size=5)
    assert _verdict(spec, answer) == "ok", f"{name}: {_verdict(spec, answer)}"


def test_a_wrong_path_is_caught(catalog: Catalog, keys, http) -> None:
    """The check above can fail: a spec pointing at a path the platform lacks is refused."""
    spec = catalog.get("search_school_info")
    broken = spec.model_copy(update={"endpoint": spec.endpoint.model_copy(update={"path": "schoolInfoX"})})
    assert _verdict(broken, call_tool_endpoint(http, broken, {}, keys.first("edu"))).startswith("refused")
