"""The rule-based binding proposer: UPSTREAM bindings, CLARIFY candidates, format hints, feasibility, determinism."""

from __future__ import annotations

import pytest

from edge.graph.proposer import (
    BindingProposal,
    ParamSource,
    RuleProposer,
    SourceKind,
    candidates,
    pair_score,
    value_hint,
)
from edge.graph.skeleton import build_skeleton
from mcp_gateway.catalog import Catalog, load_catalog
from mcp_gateway.catalog.spec import Endpoint, FieldSpec, ParamKind, ParamSpec, ToolSpec

KEY = ParamSpec(name="KEY", description_ko="인증키", required=True, kind=ParamKind.API_KEY)


def tool(name: str, params: tuple[ParamSpec, ...] = (), output: tuple[FieldSpec, ...] = ()) -> ToolSpec:
    return ToolSpec(name=name, platform="krx", domain="finance", description_ko=f"{name} 도구",
                    params=(KEY, *params), output=output, endpoint=Endpoint(platform="krx", family="datago", path=name))


def param(name: str, description: str, required: bool = True, **extra) -> ParamSpec:
    return ParamSpec(name=name, description_ko=description, required=required, **extra)


def field(name: str, description: str, type_: str = "string") -> FieldSpec:
    return FieldSpec(name=name, type=type_, description_ko=description)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="module")
def proposer() -> RuleProposer:
    return RuleProposer()


# --- the real catalog -------------------------------------------------------------------------------------------


def test_corp_code_binds_upstream_and_the_rest_is_clarified(catalog, proposer):
    proposal = proposer.propose(catalog.get("find_dart_corp_code"), catalog.get("get_dart_single_company_key_accounts"))
    assert proposal is not None
    assert proposal.bound == {"corp_code": "corp_code"}
    plan = {s.param: s for s in proposal.plan}
    assert list(plan) == ["corp_code", "bsns_year", "reprt_code"]  # every required non-generic parameter, in order
    assert plan["corp_code"] == ParamSource("corp_code", SourceKind.UPSTREAM, field="corp_code")
    assert plan["reprt_code"].kind is SourceKind.CLARIFY
    assert plan["reprt_code"].candidates == ("11013", "11012", "11014", "11011")  # its enum
    assert plan["bsns_year"] == ParamSource("bsns_year", SourceKind.CLARIFY)  # 'YYYY(2015 이후)' gives no value
    assert 0.3 <= proposal.feasibility < 1


def test_fewer_unbound_parameters_mean_higher_feasibility(catalog, proposer):
    finder = catalog.get("find_dart_corp_code")
    overview = proposer.propose(finder, catalog.get("get_dart_company_overview"))
    accounts = proposer.propose(finder, catalog.get("get_dart_single_company_key_accounts"))
    bonds = proposer.propose(finder, catalog.get("get_dart_convertible_bond_issuance_decision"))
    assert overview.bound == accounts.bound == bonds.bound == {"corp_code": "corp_code"}
    # all bound > one unbound without values + one with an enum > two unbound without values
    assert overview.feasibility > accounts.feasibility > bonds.feasibility


def test_an_optional_parameter_is_bound_on_an_equal_name(catalog, proposer):
    proposal = proposer.propose(catalog.get("find_dart_corp_code"), catalog.get("search_dart_disclosures"))
    assert proposal.bound == {"corp_code": "corp_code"}  # optional corp_code; no required parameter at all
    assert [s.param for s in proposal.plan] == ["corp_code"]


def test_a_pair_with_nothing_in_common_gets_none(catalog, proposer):
    assert proposer.propose(catalog.get("find_dart_corp_code"), catalog.get("search_school_info")) is None
    assert proposer.propose(catalog.get("get_dart_api_key"), catalog.get("get_school_class_info")) is None


def test_school_codes_bind_from_the_school_search(catalog, proposer):
    proposal = proposer.propose(catalog.get("search_school_info"), catalog.get("get_school_class_info"))
    assert proposal.bound == {"ATPT_OFCDC_SC_CODE": "ATPT_OFCDC_SC_CODE", "SD_SCHUL_CODE": "SD_SCHUL_CODE"}
    assert proposal.feasibility > 0.9


def test_an_enum_parameter_is_not_filled_by_a_merely_similar_code(catalog, proposer):
    proposal = proposer.propose(catalog.get("search_school_info"), catalog.get("class_and_student_status"))
    assert proposal is None or "schulKndCode" not in proposal.bound  # 학교급코드 (enum) is not a 학교코드


def test_every_skeleton_proposal_is_well_formed_and_deterministic(catalog, proposer):
    names = [n for n in catalog.names() if catalog.get(n).platform not in ("seoul", "gg")]
    edges = build_skeleton(catalog, tools=names)
    proposals = [proposer.propose(catalog.get(e.source), catalog.get(e.target)) for e in edges]
    # the retriever keeps weak neighbours too (no similarity floor): the proposer binds nearly all the strong ones
    # and a few of the weak, which a similarity floor of 0.3 would have lost
    strong = [p for e, p in zip(edges, proposals, strict=True) if e.similarity >= 0.3]
    weak = [p for e, p in zip(edges, proposals, strict=True) if e.similarity < 0.3]
    assert sum(p is not None for p in strong) > 0.8 * len(strong)
    assert sum(p is not None for p in weak) > 50
    for edge, proposal in zip(edges, proposals, strict=True):
        if proposal is None:
            continue
        target = catalog.get(edge.target)
        assert 0 <= proposal.feasibility <= 1 and proposal.bound
        planned = [s.param for s in proposal.plan]
        required = [p.name for p in target.params if p.required and not p.is_generic]
        assert set(required) <= set(planned) and len(planned) == len(set(planned))
        assert all(not target.param(name).is_generic for name in planned)
        assert set(proposal.bound.values()) <= {f.name for f in catalog.get(edge.source).output}
    again = [RuleProposer().propose(catalog.get(e.source), catalog.get(e.target)) for e in edges]
    assert again == proposals


# --- the rules, on fixture tools --------------------------------------------------------------------------------


def test_date_format_disagreement_blocks_a_binding(proposer):
    out = field("basDt", "기준일자(YYYYMMDD)")
    iso = param("basDt", "기준일자(YYYY-MM-DD)")
    compact = param("basDt", "기준일자 YYYYMMDD")
    assert pair_score(out, iso) == 0 < pair_score(out, compact)
    source = tool("prices", output=(out,))
    assert proposer.propose(source, tool("by_iso_date", (iso,))) is None
    assert proposer.propose(source, tool("by_date", (compact,))).bound == {"basDt": "basDt"}


def test_value_hints_must_agree(proposer):
    assert value_hint("bsns_year", "사업연도 YYYY") == "year"
    assert value_hint("rcept_dt", "접수일자(YYYYMMDD)") == "date8"
    assert value_hint("corp_code", "고유번호 8자리") == "corp8"
    assert value_hint("srtnCd", "단축코드(6자리 종목코드)") == "stock6"
    assert value_hint("SIGUN_CD", "시군코드") == "code" and value_hint("SIGUN_NM", "시군명") == "name"
    assert value_hint("LOAD_DTM", "수정일자") == "date"
    year = field("STD_YY", "기준연도")
    assert pair_score(year, param("STD_DE", "기준일자 YYYYMMDD")) == 0  # a year is not a date
    assert pair_score(field("SIGUN_NM", "시군명"), param("SIGUN_CD", "시군코드")) == 0  # a name is not a code
    assert pair_score(field("isinCd", "ISIN 코드"), param("srtnCd", "단축코드 6자리")) == 0
    assert pair_score(field("LOAD_DTM", "수정일자"), param("bgn_de", "시작일자 YYYYMMDD")) > 0  # 일자 fits YYYYMMDD


def test_examples_of_different_shape_block_a_binding():
    assert pair_score(field("ERACO", "대수(예: 제22대)"), param("AGE", "대수(예: 22 = 제22대 국회)")) == 0
    assert pair_score(field("AGE", "대수(예: 21)"), param("AGE", "대수(예: 22 = 제22대 국회)")) > 0.5


def test_types_must_carry_the_value():
    assert pair_score(field("cnt", "건수", "integer"), param("cnt", "건수")) > 0  # integer → string
    assert pair_score(field("cnt", "건수"), param("cnt", "건수", type="integer")) == 0  # string → integer
    assert pair_score(field("yr", "연도 YYYY"), param("yr", "연도 YYYY", type="integer")) > 0  # ... unless a year
    assert pair_score(field("rows", "목록", "array"), param("rows", "목록")) == 0


def test_names_descriptions_and_hints_order_the_scores():
    corp = param("corp_code", "고유번호 8자리")
    exact = pair_score(field("corp_code", "고유번호(8자리)"), corp)
    tokens = pair_score(field("corpCode", "고유번호"), corp)
    described = pair_score(field("crp_cd", "고유번호"), corp)
    assert 1 >= exact > tokens > described > 0


def test_required_parameters_bind_greedily_and_a_field_may_feed_several(proposer):
    source = tool("disclosures", output=(field("rcept_dt", "접수일자(YYYYMMDD)"), field("corp_nm", "회사명")))
    target = tool("decisions", (param("bgn_de", "검색 시작 접수일자 YYYYMMDD"), param("end_de", "검색 종료 접수일자 YYYYMMDD"),
                                param("flag", "여부(Y/N)")))
    proposal = proposer.propose(source, target)
    assert proposal.bound == {"bgn_de": "rcept_dt", "end_de": "rcept_dt"}
    assert proposal.plan[-1] == ParamSource("flag", SourceKind.CLARIFY, candidates=("Y", "N"))


def test_optional_parameters_need_a_strong_match(proposer):
    source = tool("finder", output=(field("stock_code", "종목코드(6자리)"),))
    similar = tool("similar", (param("likeSrtnCd", "단축코드(종목코드) 부분일치", required=False),))
    equal = tool("equal", (param("stockCode", "종목코드 6자리", required=False),))
    assert proposer.propose(source, similar) is None
    assert proposer.propose(source, equal).bound == {"stockCode": "stock_code"}


def test_clarify_candidates_come_from_default_enum_examples_or_code_lists():
    assert candidates(param("stock_code", "상장 종목코드 6자리(예: 005930)")) == ("005930",)
    assert candidates(param("sidoCode", "시도코드 2자리(예: 11 서울, 26 부산, 41 경기)")) == ("11", "26", "41")
    assert candidates(param("corp_name", "회사명 또는 그 일부(예: 삼성전자), 부분일치")) == ("삼성전자",)
    assert candidates(param("AGE", "대수(예: 22 = 제22대 국회)")) == ("22",)
    assert candidates(param("stdRestNm", "휴게소명(예: 만남의광장(부산)휴게소), 완전일치")) == ("만남의광장(부산)휴게소",)
    assert candidates(param("BILL_ID", "의안ID(예: PRC_T2G4...; 의안 검색 결과의 BILL_ID)")) == ()
    assert candidates(param("ATPT", "시도교육청코드(B10 서울, C10 부산, D10 대구)")) == ("B10", "C10", "D10")
    assert candidates(param("kind", "구분: 02 초등학교, 03 중학교", enum=("02", "03"), default="03")) == ("03", "02")
    assert candidates(param("bsns_year", "사업연도 YYYY(2015 이후)")) == ()


def test_feasibility_rises_with_binding_quality_and_coverage(proposer):
    corp = field("corp_code", "고유번호(8자리)")
    strong = proposer.propose(tool("a", output=(corp,)), tool("t", (param("corp_code", "고유번호 8자리"),)))
    weaker = proposer.propose(tool("a", output=(field("crp_cd", "회사의 고유번호"),)),
                              tool("t", (param("corp_code", "고유번호"),)))
    assert strong.feasibility > weaker.feasibility > 0
    with_enum = tool("t", (param("corp_code", "고유번호 8자리"), param("kind", "구분", enum=("A", "B"))))
    with_nothing = tool("t", (param("corp_code", "고유번호 8자리"), param("memo", "메모")))
    assert strong.feasibility > proposer.propose(tool("a", output=(corp,)), with_enum).feasibility \
        > proposer.propose(tool("a", output=(corp,)), with_nothing).feasibility


def test_an_equal_name_describing_another_thing_does_not_bind_an_optional_parameter(proposer, catalog):
    # a committee's HG_NM is its chair with the party ('차건미 (더불어민주당)'), no member's name: binding it too
    # narrowed every committee → members call to nothing, and Phase A pruned the edge
    committees = proposer.propose(catalog.get("list_assembly_committees"), catalog.get("list_committee_members"))
    assert committees.bound == {"DEPT_CD": "HR_DEPT_CD", "DEPT_NM": "COMMITTEE_NAME"}
    source = tool("rows", output=(field("NAME", "위원장(정당)"), field("PLACE", "사업장명")))
    target = tool("filter", (param("NAME", "의원 이름", required=False), param("PLACE", "명칭, 부분일치", required=False)))
    # 사업장명 and 명칭 share no n-gram, but both say the value is a name
    assert proposer.propose(source, target).bound == {"PLACE": "PLACE"}


def test_a_parameter_described_by_a_field_name_binds_that_field_not_a_same_named_one(proposer, catalog):
    # the law APIs: ``ID`` is described 판례일련번호; the search result's ``id`` is its row number (결과 내 순번)
    source = tool("search", output=(field("id", "결과 내 순번"), field("판례일련번호", "판례일련번호"),
                                    field("사건명", "사건명")))
    proposal = proposer.propose(source, tool("text", (param("ID", "판례일련번호"),)))
    assert proposal.bound == {"ID": "판례일련번호"} and proposal.feasibility >= 0.9
    real = proposer.propose(catalog.get("search_court_precedents"), catalog.get("get_court_precedent_text"))
    assert real.bound == {"ID": "판례일련번호"}
    laws = proposer.propose(catalog.get("search_laws"), catalog.get("get_law_text"))  # 'MST: 법령일련번호(...)'
    assert laws.bound["MST"] == "법령일련번호" and laws.bound["ID"] == "법령ID"


def test_generic_parameters_are_never_planned(proposer):
    source = tool("keys", output=(field("KEY", "인증키"), field("corp_code", "고유번호")))
    proposal = proposer.propose(source, tool("t", (param("corp_code", "고유번호 8자리"),)))
    assert isinstance(proposal, BindingProposal)
    assert [s.param for s in proposal.plan] == ["corp_code"]  # KEY is the runtime's (DEFAULT), not in the plan
    assert proposer.propose(tool("keys", output=(field("KEY", "인증키"),)), tool("t")) is None
