"""A small, real runtime for the server tests, standing in until ``mcp_gateway.runtime`` lands.

It serves a few hand-written specs in the paper's style plus a long tail of dataset-like
tools (enough for several ``tools/list`` pages), keeps per-session notes, checks the API key
in the bench profile and answers one tool with an environmental failure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcp_gateway.catalog.spec import Endpoint, FieldSpec, ParamKind, ParamSpec, ToolSpec
from mcp_gateway.limits import DEFAULT_LIMITS, InputLimits
from mcp_gateway.runtime.result import Outcome, ToolResult
from mcp_gateway.runtime.runtime import PROFILES

REAL_KEY = "dart-real-key-5f1e9c"  # the upstream key: never in a response or log line
EPISODE_KEY = "ep-key-token-77"  # what a bench model passes as KEY
N_LONG_TAIL = 240

_PAGING = (
    ParamSpec(name="pageNo", type="integer", description_ko="페이지 번호", kind=ParamKind.PAGE_NO, default=1),
    ParamSpec(name="numOfRows", type="integer", description_ko="한 페이지 결과 수", kind=ParamKind.PAGE_SIZE,
              default=10),
)
_KEY = ParamSpec(name="KEY", description_ko="인증키", kind=ParamKind.API_KEY, required=True)


def _upstream(platform: str, family: str, path: str) -> Endpoint:
    return Endpoint(platform=platform, family=family, path=path)  # type: ignore[arg-type]


CORE = [
    ToolSpec(name="get_dart_convertible_bond_issuance_decision", platform="dart", domain="finance",
             description_ko="전환사채권 발행결정 공시(주요사항보고서)를 조회합니다. 회사 고유번호(corp_code)와 "
                            "기간(bgn_de~end_de)으로 사채 총액, 전환가액, 발행 결정일을 돌려줍니다.",
             params=(_KEY, ParamSpec(name="corp_code", description_ko="공시대상회사 고유번호(8자리)", required=True),
                     ParamSpec(name="bgn_de", description_ko="검색 시작일(YYYYMMDD)"), *_PAGING),
             output=(FieldSpec(name="corp_name", description_ko="회사명"),
                     FieldSpec(name="bd_fta", type="integer", description_ko="사채 권면 총액(원)")),
             endpoint=_upstream("dart", "dart", "/api/cvbdIsDecsn.json")),
    ToolSpec(name="find_dart_corp_code", platform="dart", domain="finance",
             description_ko="회사 이름으로 DART 공시대상회사 고유번호(corp_code)를 찾습니다.",
             params=(_KEY, ParamSpec(name="corp_name", description_ko="회사 이름", required=True), *_PAGING),
             output=(FieldSpec(name="corp_code", description_ko="고유번호"),),
             endpoint=_upstream("dart", "dart", "/corpCode.xml")),
    ToolSpec(name="get_stock_price_trend", platform="krx", domain="finance",
             description_ko="주식 종목의 일별 시세(시가, 종가, 거래량) 추이를 조회합니다.",
             params=(_KEY, ParamSpec(name="basDt", description_ko="기준일자(YYYYMMDD)"), *_PAGING),
             endpoint=_upstream("krx", "datago", "/getStockPriceInfo")),
    ToolSpec(name="class_and_student_status", platform="edu", domain="education",
             description_ko="학교알리미: 학교별 학년·학급별 학급 수와 학생 수 현황을 조회합니다.",
             params=(_KEY, *_PAGING), endpoint=_upstream("edu", "schoolinfo", "/openApi.do")),
    ToolSpec(name="get_tollbooth_traffic_volume", platform="expressway", domain="traffic",
             description_ko="고속도로 영업소(톨게이트)별 교통량을 조회합니다.",
             params=(_KEY, *_PAGING), endpoint=_upstream("expressway", "expressway", "/openapi/trafficapi")),
    ToolSpec(name="write_note", platform="internal", domain="workspace", writes_state=True, paged=False,
             description_ko="작업공간에 메모를 저장합니다(같은 키는 덮어씀).",
             params=(ParamSpec(name="key", description_ko="메모 키", required=True),
                     ParamSpec(name="text", description_ko="메모 내용", required=True))),
    ToolSpec(name="read_note", platform="internal", domain="workspace", writes_state=True, paged=False,
             description_ko="작업공간에 저장한 메모를 읽습니다.",
             params=(ParamSpec(name="key", description_ko="메모 키", required=True),),
             output=(FieldSpec(name="text", description_ko="메모 내용"),)),
]
LONG_TAIL = [
    ToolSpec(name=f"gg_dataset_{i:03d}", platform="gg", domain="district",
             description_ko=f"경기도 공공데이터 {i}번 데이터셋(시군별 시설 현황)을 조회합니다.",
             params=(_KEY, *_PAGING), endpoint=_upstream("gg", "hub", f"/DATASET{i:03d}"))
    for i in range(N_LONG_TAIL)
]


@dataclass
class ToyCatalog:
    tools: dict[str, ToolSpec] = field(default_factory=lambda: {s.name: s for s in CORE + LONG_TAIL})


@dataclass
class ToyRuntime:
    """Implements ``RuntimeProtocol``; ``calls`` and ``resets`` record what the server passed in."""

    profile: str = "chat"
    catalog: ToyCatalog = field(default_factory=ToyCatalog)
    notes: dict[str, dict[str, str]] = field(default_factory=dict)
    calls: list[tuple[str, str]] = field(default_factory=list)  # (tool, session_id)
    resets: list[str] = field(default_factory=list)
    limits: InputLimits = DEFAULT_LIMITS

    async def call(self, tool: str, args: dict[str, Any], session_id: str) -> ToolResult:
        self.calls.append((tool, session_id))
        spec = self.catalog.tools[tool]
        if self.profile == "bench" and spec.param("KEY") and args.get("KEY") != EPISODE_KEY:
            return ToolResult(tool=tool, outcome=Outcome.AUTH_ERROR, upstream_code="020",
                              message="KEY is not a valid key token for this episode")
        if tool == "write_note":
            self.notes.setdefault(session_id, {})[args["key"]] = args["text"]
            return ToolResult(tool=tool, outcome=Outcome.SEMANTIC_SUCCESS, records=[])
        if tool == "read_note":
            text = self.notes.get(session_id, {}).get(args["key"])
            return ToolResult(tool=tool, outcome=Outcome.SEMANTIC_SUCCESS,
                              records=[{"text": text}] if text is not None else [])
        if tool == "get_tollbooth_traffic_volume":
            return ToolResult(tool=tool, outcome=Outcome.RATE_LIMIT, upstream_code="429",
                              message="rate limited upstream after 3 attempts; retry later")
        if tool == "class_and_student_status":
            raise RuntimeError(f"bug while calling with key {REAL_KEY}")  # must not leak through the server
        page_no, size = int(args.get("pageNo", 1)), int(args.get("numOfRows", 10))
        records = [{"corp_name": "한빛전자", "bd_fta": 5_000_000_000}] if tool.startswith("get_dart") else []
        return ToolResult(tool=tool, outcome=Outcome.SEMANTIC_SUCCESS, records=records, total_count=len(records),
                          page_no=page_no, page_size=size, upstream_code="000")

    def input_schema(self, spec: ToolSpec) -> dict[str, Any]:
        return spec.input_schema(include_generic=PROFILES[self.profile])

    def reset_session(self, session_id: str) -> None:
        self.resets.append(session_id)
        self.notes.pop(session_id, None)
