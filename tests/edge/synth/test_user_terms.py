"""The realiser says what a user knows (Appendix J): labels without the description's examples, codes in the
words of their code table, identifiers by the world's names; walks start from inputs a user knows."""

from __future__ import annotations

import numpy as np

from edge.filter.user_voice import query_defects
from edge.synth.execute import Trace
from edge.synth.realise import eul, ga, param_name, realise, ro, say, topic
from edge.synth.user_terms import code_table, label, opaque, spoken_code, world_name
from edge.synth.walk import _user_known
from mcp_gateway.catalog import load_catalog

CATALOG = load_catalog()
BRANDS = CATALOG.get("get_rest_area_brands")
SEOUL = CATALOG.get("seoul_localdata_010101_db")
GG = CATALOG.get("gg_aed_location")


def test_a_parameter_is_named_by_its_label_not_its_description():
    assert BRANDS.param("stdRestNm").description_ko.startswith("휴게소명(예: 만남의광장(부산)휴게소)")
    assert param_name(BRANDS, "stdRestNm") == "휴게소명"
    assert label("의안번호 7자리(예: 2211220)") == "의안번호"
    assert label("학교급코드: 02 초등학교, 03 중학교, 04 고등학교") == "학교급코드"
    assert label("기준일자 YYYYMMDD(완전일치)") == "기준일자"


def test_a_code_is_said_in_the_words_of_its_code_table():
    status = SEOUL.param("TRDSTATEGBN")
    assert code_table(status.description_ko) == {"01": "영업/정상", "02": "휴업", "03": "폐업"}
    assert spoken_code(status, "03") == ("영업상태", "폐업") and not opaque(status, "03")
    assert say(SEOUL, "TRDSTATEGBN", "03") == ("영업상태", "폐업")
    assert code_table("시도교육청코드(B10 서울, C10 부산)") == {"B10": "서울", "C10": "부산"}


def test_opaque_identifiers_are_told_from_values_a_user_knows():
    assert opaque(BRANDS.param("stdRestCd"), "000022") and opaque(GG.param("SIGUN_CD"), "41130")
    assert not opaque(BRANDS.param("stdRestNm"), "만남의광장(부산)휴게소")
    assert not opaque(GG.param("SIGUN_NM"), "성남시")
    bus = next(s for s in CATALOG if s.param("ROUTE_NM") is not None and "번호" in s.param("ROUTE_NM").description_ko)
    assert not opaque(bus.param("ROUTE_NM"), "6816")  # a bus number is said as a number


def test_the_world_names_a_code_from_the_records_it_returned():
    records = [{"SIGUN_CD": "41130", "SIGUN_NM": "성남시"}, {"SIGUN_CD": "41130", "SIGUN_NM": "성남시"}]
    assert world_name(GG, "SIGUN_CD", "41130", records) == ("시군명", "성남시")
    assert world_name(GG, "SIGUN_CD", "41110", records) is None  # no record of it: nothing to say


def test_questions_say_words_and_names_and_have_no_defect():
    rng = np.random.default_rng(0)
    sem = Trace("sem", SEOUL.name, {"TRDSTATEGBN": "03"}, others=[("seoul_localdata_010101_dd", {"TRDSTATEGBN": "03"})],
                final={"kind": "sum"})
    query, _ = realise(sem, CATALOG, rng)
    assert "영업상태가 폐업인" in query and "03" not in query and "코드" not in query
    partners = ("seoul_localdata_010101_dd", "seoul_localdata_020301_db")
    three = Trace("sem", SEOUL.name, {"TRDSTATEGBN": "03"}, final={"kind": "sum"},
                  others=[(t, {"TRDSTATEGBN": "03"}) for t in partners])
    query, _ = realise(three, CATALOG, rng)  # a third tool joins the list: all are named
    assert all(topic(CATALOG.get(t)) in query for t in [SEOUL.name, *(t for t, _ in three.others)]), query
    assert "영업상태가 폐업인" in query and "동물병원 인허가 정보를" in query
    cmp = Trace("cmp", GG.name, {"SIGUN_CD": "41110"}, others=[(GG.name, {"SIGUN_CD": "41110"}),
                                                               (GG.name, {"SIGUN_CD": "41130"})],
                final={"kind": "compare", "pick": "max", "tool": GG.name, "key": "SIGUN_CD"},
                spoken={"41110": ("시군명", "수원시"), "41130": ("시군명", "성남시")})
    query, _ = realise(cmp, CATALOG, rng)
    assert query.startswith("시군명 수원시, 성남시 각각의") and "41110" not in query


def test_walks_start_from_inputs_a_user_knows():
    locations = CATALOG.get("list_rest_area_locations")
    assert _user_known([{"routeName": "경부선", "stdRestCd": "000022"}], locations) == [{"routeName": "경부선"}]
    only_code = [{"stdRestCd": "000022"}]
    assert _user_known(only_code, BRANDS) == only_code  # nothing else selects: kept (the world may name it)


def test_defect_detection_agrees_with_the_realiser_on_a_stated_code():
    from tests.edge.filter.items import task_like, wrap

    actions = [{"step": 0, "tool": SEOUL.name, "args": {"TRDSTATEGBN": "03", "KEY": "{seoul_api_key}"}}]
    raw = wrap(task_like("dst-001", id="syn-raw", query="영업상태코드가 03인 인허가 정보는 몇 건인가요?",
                         golden_actions=actions, platforms=["seoul"], available_tools=[SEOUL.name]))
    said = wrap(task_like("dst-001", id="syn-said", query="영업상태가 폐업인 인허가 정보는 몇 건인가요?",
                          golden_actions=actions, platforms=["seoul"], available_tools=[SEOUL.name]))
    assert [k for k, _ in query_defects(raw, CATALOG)] == ["the query states a code as a code"]
    assert query_defects(said, CATALOG) == []


def test_particles_follow_the_word_as_it_is_read():
    # a final consonant, a vowel; ㄹ takes 로 as a vowel does
    assert [ro("회사명"), ro("어린이집유형"), ro("기준일"), ro("시군코드")] == [
        "회사명으로", "어린이집유형으로", "기준일로", "시군코드로"]
    # numbers by their Korean reading: 272 이백칠십이, 30 삼십, 1523.2 …점 이, 17 십칠
    assert [eul("272"), eul("30"), eul("1523.2"), ro("17"), ro("3")] == ["272를", "30을", "1523.2를", "17로", "3으로"]
    # a parenthetical at the end is not read: the particle follows the word before it
    assert [ga("공원면적(㎡)"), ga("보육아동수(명)"), ga("공원면적(천㎡)"), eul("영업소명 (가)")] == [
        "공원면적(㎡)이", "보육아동수(명)가", "공원면적(천㎡)이", "영업소명 (가)을"]
    assert ga("ABC") == "ABC가"  # neither Hangul nor a digit: the vowel form


def test_a_topic_is_a_noun_phrase_even_where_the_description_ends_by_a_key():
    # "상장종목 기본정보를 기준일자별로 조회합니다." would make "…기본정보를 기준일자별로를 보고" in a question
    assert topic(CATALOG.get("get_listed_stock_item_info")) == "기준일자별 상장종목 기본정보"
    # the data, without its source, the key it is looked up by, or a platform prefix
    assert [topic(CATALOG.get(t)) for t in ("search_laws", "get_stock_price_trend", "get_rest_area_oil_list",
                                            "school_basic_disclosure", "find_dart_corp_code")] == [
        "현행 법령", "상장 종목의 일별 시세", "휴게소 주유소의 유가와 정유사", "한 시군구의 한 학교급 학교 기본정보",
        "회사 고유번호"]


def test_a_code_table_on_a_parameter_not_named_a_code_is_said_in_words():
    disclosures = CATALOG.get("search_dart_disclosures")
    assert spoken_code(disclosures.param("corp_cls"), "K") == ("법인구분", "코스닥")  # 'Y 유가증권시장, K 코스닥, …'
    assert spoken_code(disclosures.param("pblntf_detail_ty"), "A001") == ("공시상세유형", "사업보고서")
    assert not opaque(disclosures.param("corp_cls"), "K")
    # one example is no code table: the assembly term stays a number
    assert spoken_code(CATALOG.get("search_member_sponsored_bills").param("AGE"), "22") is None


def test_a_most_frequent_selection_names_its_field_once():
    from edge.synth.execute import Hop
    from edge.synth.item import Junction, JunctionType
    from edge.synth.realise import _hop_phrase

    votes = Junction(source="get_member_votes_on_bill", target="get_national_assembly_members", field="POLY_NM",
                     param="POLY_NM", cardinality=12, type=JunctionType.DRV, operator="most_frequent")
    phrases = [_hop_phrase(Hop(votes, {}, "POLY_NM", ("더불어민주당",)), CATALOG, choice, {}) for choice in range(3)]
    assert [p.count("정당명") for p in phrases] == [1, 1, 1], phrases
    assert "제일 많이 나오는 정당명으로 찾은" in phrases[1] and not any("의 쪽" in p for p in phrases)


def test_a_yes_no_flag_is_said_as_what_it_asks():
    from edge.synth.execute import Hop
    from edge.synth.item import Junction, JunctionType
    from edge.synth.realise import _conditions, _hop_phrase
    from edge.synth.user_terms import yes_no_flag

    products = CATALOG.get("list_deposit_insured_products")
    assert yes_no_flag(products.param("isrgTgtYn").description_ko, "Y") == ("예금보험 대상", True)
    assert yes_no_flag("최종보고서만 검색할지 여부(Y/N, 기본 N)", "Y") is None  # a clause: no noun phrase says it
    assert yes_no_flag("분교 여부(Y/N)", "03") is None and yes_no_flag("분교명", "Y") is None
    said = _conditions(products, {"isrgTgtYn": "N", "prdKndNm": "정기예금"}, {})
    assert "예금보험 대상에 해당하지 않" in said and "여부" not in said and " N" not in said, said
    assert said.endswith("인") and said.count("해당") == 1, said
    # a DRV selection on a flag field: '대표메뉴에 해당하는 항목', not '대표메뉴 여부가 Y인 항목'
    foods = Junction(source="get_rest_area_best_foods", target="get_rest_area_brands", field="stdRestNm",
                     param="stdRestNm", cardinality=7, type=JunctionType.DRV, operator="eq", pivot="Y")
    hop = Hop(foods, {}, op_field="bestfoodyn", values=("만남의광장(부산)휴게소",))
    phrases = [_hop_phrase(hop, CATALOG, choice, {}) for choice in range(3)]
    assert all("대표메뉴에 해당하는" in p and "Y" not in p for p in phrases), phrases
    # the quality stage counts a flag said as Y or N as a raw code, and not the words
    from tests.edge.filter.items import task_like, wrap

    actions = [{"step": 0, "tool": products.name, "args": {"isrgTgtYn": "Y", "KEY": "{kdic_api_key}"}}]
    raw = wrap(task_like("fin-001", id="syn-flag", query="예금보험 대상 여부가 Y인 상품은 몇 건인가요?",
                         golden_actions=actions, platforms=["kdic"], available_tools=[products.name]))
    assert [k for k, _ in query_defects(raw, CATALOG)] == ["the query states a code as a code"]


def test_a_topic_that_lists_what_its_records_hold_is_named_by_its_first_part():
    from edge.synth.realise import _first_conjunct

    assert [topic(CATALOG.get(t)) for t in ("list_assembly_committees", "list_deposit_insured_institutions")] == [
        "국회 위원회 목록", "예금보험공사 부보금융회사 목록"]
    assert _first_conjunct("휴게소 판매 음식 메뉴와 가격, 대표·프리미엄·추천 메뉴 여부") == "휴게소 판매 음식 메뉴"
    for kept in ("휴게소 주유소의 유가와 정유사",  # one detail may be what tells two tools apart
                 "세션 작업공간에 저장한 보고서 목록(제목과 길이)",  # inside brackets
                 "고등학교의 계열·학과 목록",  # 학과 is a word, not 학 and a particle
                 "의원 발의안과 정부 제출안을 포함한 의안 통합 검색"):  # the objects of a clause
        assert _first_conjunct(kept) == kept


def test_an_assembly_term_is_said_as_its_example_says_it():
    from edge.synth.realise import _conditions
    from edge.synth.user_terms import spoken_number

    bills = CATALOG.get("search_member_sponsored_bills")
    age = bills.param("AGE").description_ko
    assert spoken_number(age, 21) == "제21대 국회" and spoken_number(age, "22") == "제22대 국회"
    assert spoken_number(age, "X") is None and spoken_number("당선 대수(예: 제21대), 부분일치", 21) is None
    assert spoken_number("순번(예: 3 = 3)", 4) is None  # an example without words says nothing of the number
    alone = _conditions(bills, {"AGE": 22}, {})
    assert alone == "제22대 국회의", alone
    both = _conditions(bills, {"AGE": 22, "PROPOSER": "강경석"}, {})
    assert both.startswith("제22대 국회에서 ") and both.endswith("강경석인") and "대수" not in both, both
    assert say(bills, "AGE", 21) == ("", "제21대 국회")
    # the quality stage counts '대수가 22인' as a raw code, and not the words
    from tests.edge.filter.items import task_like, wrap

    actions = [{"step": 0, "tool": bills.name, "args": {"AGE": "22", "KEY": "{assembly_api_key}"}}]

    def defects(query: str) -> list[str]:
        raw = wrap(task_like("pol-001", id="syn-age", query=query, golden_actions=actions, platforms=["assembly"],
                             available_tools=[bills.name]))
        return [k for k, _ in query_defects(raw, CATALOG)]

    assert defects("대수가 22인 국회의원 발의 법률안은 몇 건인가요?") == ["the query states a code as a code"]
    assert defects("제22대 국회의 국회의원 발의 법률안은 몇 건인가요?") == []
    assert defects("22대에 발의된 법률안은 몇 건인가요?") == []  # the bench's own way (pol-022)


def test_each_yearly_edition_of_a_statistic_is_named_by_its_year():
    import collections

    editions = [topic(CATALOG.get(f"gg_foreign_resident_stat_{year}")) for year in (2021, 2023)]
    assert editions == ["2021년 경기도 외국인주민 현황", "2023년 경기도 외국인주민 현황"]
    assert topic(CATALOG.get("gg_urban_park")) == "경기도 도시공원 현황"  # the list itself: no edition
    shared = collections.defaultdict(list)
    for spec in CATALOG:
        shared[topic(spec)].append(spec.name)
    # one question could not tell the tools apart: 213 catalog tools shared a topic before, yearly editions all but 2
    assert [sorted(names) for names in shared.values() if len(names) > 1] == [
        ["gg_game_softwares_facility_provis", "gg_internet_computer_game_facility"]]
    sem = Trace("sem", "gg_foreign_resident_stat_2023", {"NATION_NM": "필리핀"}, final={"kind": "sum"},
                others=[(f"gg_foreign_resident_stat_{year}", {"NATION_NM": "필리핀"}) for year in (2020, 2025)])
    query, _ = realise(sem, CATALOG, np.random.default_rng(0))
    assert all(f"{year}년 경기도 외국인주민 현황" in query for year in (2020, 2023, 2025)), query


def test_a_threshold_rule_takes_its_particle():
    cond = Trace("cond", SEOUL.name, {"TRDSTATEGBN": "03"}, final={"kind": "cond", "cmp": "le", "threshold": 2},
                 others=[("seoul_localdata_010101_dd", {"TRDSTATEGBN": "03"}),
                         ("seoul_localdata_020301_db", {"TRDSTATEGBN": "03"})])
    queries = {realise(cond, CATALOG, np.random.default_rng(seed))[0] for seed in range(8)}
    assert any("2건 이하라면" in q for q in queries) and not any("이하이라면" in q for q in queries), queries
