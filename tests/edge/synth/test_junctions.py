"""Junction typing at the φ boundaries and every DRV operator against hand-computed records."""

from __future__ import annotations

import random

import pytest

from edge.synth.item import JunctionType
from edge.synth.junctions import as_date, as_number, derive, distinct_values, junction_type, pivots

RECORDS = [
    {"name": "가", "price": "1,700", "date": "2023-04-01", "kind": "휘발유", "route": "경부선"},
    {"name": "나", "price": "1650", "date": "20230315", "kind": "경유", "route": "호남선"},
    {"name": "다", "price": "1,700", "date": "2023.05.20", "kind": "휘발유", "route": "호남선"},
    {"name": "라", "price": "", "date": "2022-12-31", "kind": "경유", "route": "경부선"},
    {"name": "마", "price": "1600", "date": "2023-04-02", "kind": "LPG", "route": "영동선"},
]


@pytest.mark.parametrize(("n", "expected"), [(1, JunctionType.SEQ), (2, JunctionType.FAN), (5, JunctionType.FAN),
                                             (6, JunctionType.DRV), (100, JunctionType.DRV)])
def test_junction_type_at_the_fan_budget_boundaries(n, expected):
    assert junction_type(n) is expected


def test_junction_type_refuses_no_value_and_follows_phi():
    with pytest.raises(ValueError, match="at least one value"):
        junction_type(0)
    assert junction_type(3, phi=2) is JunctionType.DRV
    assert junction_type(2, phi=2) is JunctionType.FAN


def names(records):
    return [r["name"] for r in records]


def test_max_and_min_take_the_first_of_a_tie_and_skip_unreadable_values():
    assert names(derive(RECORDS, "max", field="price")) == ["가"]  # 가 and 다 tie at 1700: the first one
    assert names(derive(RECORDS, "min", field="price")) == ["마"]  # 라 has no price: never selected


def test_thresholds_keep_record_order():
    assert names(derive(RECORDS, "ge", field="price", pivot=1700)) == ["가", "다"]
    assert names(derive(RECORDS, "le", field="price", pivot="1,650")) == ["나", "마"]
    assert derive(RECORDS, "ge", field="price", pivot=2000) == []


def test_equality_and_date_after_across_date_formats():
    assert names(derive(RECORDS, "eq", field="kind", pivot="경유")) == ["나", "라"]
    assert names(derive(RECORDS, "date_after", field="date", pivot="2023-04-01")) == ["다", "마"]
    assert names(derive(RECORDS, "date_after", field="date", pivot="20221231")) == ["가", "나", "다", "마"]


def test_latest_and_earliest_read_every_date_format():
    assert names(derive(RECORDS, "latest", field="date")) == ["다"]  # 2023.05.20
    assert names(derive(RECORDS, "earliest", field="date")) == ["라"]  # 2022-12-31
    assert derive(RECORDS, "latest", field="kind") == []  # no date: nothing selected


def test_a_selection_in_each_branch_says_what_it_keeps():
    """Past a fan-out, one selection keeps one value per branch only where the words pick it: a tie at the extreme
    or at the most frequent value would be broken by record order, which no question can say."""
    from edge.synth.execute import _selects_one

    assert not _selects_one(RECORDS, "max", "price", "name")  # 가 and 다 tie at 1,700
    assert _selects_one(RECORDS, "min", "price", "name")  # 마 alone at 1,600
    assert _selects_one(RECORDS, "latest", "date", "name") and _selects_one(RECORDS, "earliest", "date", "name")
    assert not _selects_one(RECORDS, "most_frequent", "route", "route")  # 경부선 and 호남선 twice each
    assert _selects_one(RECORDS[1:], "most_frequent", "route", "route")  # 호남선 twice, the others once
    ties_one_value = [{"name": "가", "price": "9"}, {"name": "가", "price": "9"}, {"name": "나", "price": "1"}]
    assert _selects_one(ties_one_value, "max", "price", "name")  # the tied records hand on the same value
    assert not _selects_one(RECORDS, "latest", "kind", "name")  # no date in the field: nothing to select


def test_most_frequent_breaks_ties_by_first_appearance():
    # 경부선 and 호남선 both appear twice: 경부선 appears first
    assert names(derive(RECORDS, "most_frequent", field="route")) == ["가", "라"]
    assert names(derive(RECORDS, "most_frequent", field="kind")) == ["가", "나", "다", "라"][0::2]  # 휘발유 first


def test_bad_operator_and_missing_pivot_are_clear_errors():
    with pytest.raises(ValueError, match="unknown DRV operator 'median'"):
        derive(RECORDS, "median", field="price")
    with pytest.raises(ValueError, match="needs a pivot"):
        derive(RECORDS, "ge", field="price")


def test_pivots_leave_at_most_phi_distinct_bound_values():
    # by price ≥ pivot, the names left: 1600 → 4 names, 1650 → 3, 1700 → 2
    assert pivots(RECORDS, "ge", field="price", bound="name", phi=3) == [1650, 1700]
    assert pivots(RECORDS, "ge", field="price", bound="route", phi=1) == []  # 1700 leaves 경부선 and 호남선
    assert pivots(RECORDS, "eq", field="kind", bound="route", phi=1) == ["LPG"]
    for pivot in pivots(RECORDS, "date_after", field="date", bound="name", phi=2):
        assert 1 <= len(distinct_values(derive(RECORDS, "date_after", field="date", pivot=pivot), "name")) <= 2
    assert pivots(RECORDS, "max", field="price", bound="name") == []
    # at least two values left: 1700 leaves 가 and 다 (kept), and no eq pivot of kind leaves two routes but 경유, 휘발유
    assert pivots(RECORDS, "ge", field="price", bound="name", phi=3, least=2) == [1650, 1700]
    assert pivots(RECORDS, "ge", field="price", bound="name", phi=3, least=3) == [1650]
    assert pivots(RECORDS, "eq", field="kind", bound="route", phi=5, least=2) == ["휘발유", "경유"]


def _pivots_by_definition(records, operator, field, bound, phi, least=1):
    """Every observed value tried as the pivot through ``derive``: the definition the sweep must agree with."""
    if operator in ("ge", "le"):
        observed = sorted({n for r in records if (n := as_number(r.get(field))) is not None})
        candidates = [int(n) if n.is_integer() else n for n in observed]
    elif operator == "date_after":
        candidates = sorted({d for r in records if (d := as_date(r.get(field))) is not None})
    else:
        candidates = distinct_values(records, field)
    return [p for p in candidates
            if max(least, 1) <= len(distinct_values(derive(records, operator, field=field, pivot=p), bound)) <= phi]


def test_the_pivot_sweep_agrees_with_trying_every_pivot_through_derive():
    rng = random.Random(0)
    for _ in range(400):
        records = []
        for _ in range(rng.randint(0, 25)):
            record = {"kind": rng.choice(["p", "q", "r", ""])}
            if rng.random() < 0.9:
                record["x"] = rng.choice([str(rng.randint(0, 12)), rng.randint(0, 12), f"1,5{rng.randint(0, 9)}", "",
                                          None, "n/a", 2.5])
            if rng.random() < 0.9:
                record["day"] = rng.choice([f"2024-01-0{rng.randint(1, 9)}", "2023.12.31", "20240105", "", "soon"])
            if rng.random() < 0.9:
                record["id"] = rng.choice(["a", "b", "c", "d", "e", "f", "g", "", None])
            records.append(record)
        phi, least = rng.choice([1, 2, 5]), rng.choice([1, 1, 2, 3])
        for operator, field in [("ge", "x"), ("le", "x"), ("date_after", "day"), ("eq", "kind"), ("eq", "x")]:
            assert pivots(records, operator, field=field, bound="id", phi=phi, least=least) == \
                _pivots_by_definition(records, operator, field, "id", phi, least), (operator, field, phi, least,
                                                                                     records)


def test_the_llm_writer_refuses_a_leaking_or_foreign_question():
    from edge.graph.llm_proposer import InvalidReply
    from edge.synth.llm_writer import check_query

    ok = check_query({"query": "경부선 휴게소 중 편의시설이 가장 많은 곳은 어디예요?"}, ["000016"], ["경부선"])
    assert ok.startswith("경부선")
    for reply, why in (({"query": "휴게소 000016의 편의시설은 몇 개예요?"}, "junction values"),
                       ({"query": "How many rest areas are there?"}, "Korean"),
                       ({"query": "stdRestCd 기준으로 편의시설은 몇 개예요?"}, "identifiers"),
                       ({"answer": "x"}, "no 'query'")):
        with pytest.raises(InvalidReply, match=why):
            check_query(reply, ["000016"], ["경부선"])


def test_a_comparison_names_its_branches_by_one_argument_only_when_every_branch_sets_it():
    from edge.synth.execute import _label_key

    assert _label_key(["year"], [{"code": "A", "year": 2023}, {"code": "A", "year": 2024}]) == "year"
    # an argument set in one branch and absent in the other also "differs", but cannot label both
    assert _label_key(["SD_SCHUL_CODE"], [{"SD_SCHUL_CODE": "7010057", "ATPT": "B10"}, {"ATPT": "B10"}]) is None
    assert _label_key(["a", "b"], [{"a": 1, "b": 1}, {"a": 2, "b": 2}]) is None


def test_a_drv_threshold_keeps_several_values_where_its_field_allows_and_one_only_where_it_does_not():
    """The process node narrows to a handful (2..φ) when a pivot can; max/min/most-frequent still pick one."""
    from types import SimpleNamespace

    from edge.synth.execute import derivations

    output = [SimpleNamespace(name="price", description_ko="가격"), SimpleNamespace(name="name", description_ko="이름"),
              SimpleNamespace(name="kind", description_ko="유종")]
    draft = SimpleNamespace(spec=lambda tool: SimpleNamespace(output=output))
    options = derivations(draft, "prices", RECORDS, "name")
    for op in ("ge", "le", "eq"):
        for name, pivot in options[op]:
            assert 2 <= len(distinct_values(derive(RECORDS, op, field=name, pivot=pivot), "name")) <= 5, (op, pivot)
    assert ("price", 1700) in options["ge"] and ("kind", "LPG") not in options["eq"]  # LPG: one name only
    for op in ("max", "min", "most_frequent"):
        assert all(len(distinct_values(derive(RECORDS, op, field=f, pivot=p), "name")) == 1 for f, p in options[op])
    # 나 (경유, 호남선) and 마 (LPG, 영동선): every kind leaves one route, so those single picks remain; a price
    # threshold can leave both routes (>= 1600), so it takes only that pivot
    routes = derivations(draft, "prices", [RECORDS[1], RECORDS[4]], "route")
    assert [o for o in routes["eq"] if o[0] == "kind"] == [("kind", "경유"), ("kind", "LPG")]
    assert routes["ge"] == [("price", 1600)]


def test_a_date_with_its_time_of_day_is_a_date_and_a_number_that_only_looks_like_one_is_not():
    assert as_date("20230605100000") == as_date("2023-06-05 10:00") == as_date("2023-06-05T10:00:00") == "20230605"
    assert as_date("20231340") is None and as_date("20230632") is None and as_date("202306051") is None


def test_a_registration_time_is_selected_as_a_date_said_as_a_day_never_as_a_fourteen_digit_number():
    """'등록일시가 20230605100000을 넘지 않는' is no question a user asks; '2023년 6월 5일 이후인' is."""
    from types import SimpleNamespace

    from edge.synth.execute import Hop, derivations
    from edge.synth.item import Junction
    from edge.synth.realise import _which

    output = [SimpleNamespace(name="regDt", description_ko="등록일시")]
    records = [{"id": str(i), "regDt": f"2023{month:02d}0{day}1000{i:02d}"}
               for i, (month, day) in enumerate([(1, 3), (2, 4), (3, 5), (4, 6), (5, 7), (6, 8), (7, 9)])]
    draft = SimpleNamespace(spec=lambda tool: SimpleNamespace(output=output))
    options = derivations(draft, "posts", records, "id")
    assert "ge" not in options and "le" not in options
    assert options["latest"] == [("regDt", None)] and options["date_after"]
    pivot = options["date_after"][0][1]
    junction = Junction(source="posts", target="t", field="id", param="id", cardinality=7, type=JunctionType.DRV,
                        operator="date_after", pivot=pivot)
    said = _which(junction, SimpleNamespace(output=output), Hop(junction, {}, op_field="regDt"), 0)
    assert "2023년" in said and "월" in said and "1000" not in said, said


def test_a_place_in_the_list_is_selected_as_the_first_or_the_last_never_by_a_threshold():
    """'표시 순서가 296 이상인' is no question a user asks; the first or the last one listed is."""
    from types import SimpleNamespace

    from edge.synth.execute import Hop, derivations
    from edge.synth.item import Junction
    from edge.synth.realise import _which

    output = [SimpleNamespace(name="order", description_ko="표시 순서"), SimpleNamespace(name="price",
                                                                                    description_ko="가격")]
    records = [{**r, "order": str(i + 1)} for i, r in enumerate(RECORDS)]
    draft = SimpleNamespace(spec=lambda tool: SimpleNamespace(output=output))
    options = derivations(draft, "prices", records, "name")
    assert ("order", None) in options["max"] and ("order", None) in options["min"]
    assert all(name != "order" for op in ("ge", "le") for name, _ in options[op]) and options["ge"]  # price keeps them
    source = SimpleNamespace(output=output)
    for op, words in (("min", "맨 앞"), ("max", "맨 뒤")):
        junction = Junction(source="prices", target="t", field="name", param="name", cardinality=5,
                            type=JunctionType.DRV, operator=op)
        said = _which(junction, source, Hop(junction, {}, op_field="order"), 0)
        assert words in said and "표시 순서" not in said, said


def test_a_detail_that_identifies_remarks_on_or_places_a_record_is_no_kind_to_select_by():
    from types import SimpleNamespace

    from edge.synth.execute import derivations

    output = [SimpleNamespace(name="HJ_NM", description_ko="한자 이름"),
              SimpleNamespace(name="SECRETARY", description_ko="비서관"),
              SimpleNamespace(name="JOB_RES_NM", description_ko="위원회 직책(위원장, 간사, 위원)"),
              SimpleNamespace(name="rm", description_ko="비고(유 유가증권시장본부 소관, 코 코스닥, 연 연결, 정 정정)"),
              SimpleNamespace(name="LO", description_ko="경도"), SimpleNamespace(name="LAT", description_ko="WGS84위도"),
              SimpleNamespace(name="HG_NM", description_ko="이름")]
    records = [{"HG_NM": f"의원{i}", "HJ_NM": f"議員{i}", "SECRETARY": f"비서{i}", "rm": ("연", "연", "정")[i % 3],
                "LO": 126.9 + i / 100, "LAT": 37.5 + i / 100,
                "JOB_RES_NM": ("위원장", "간사", "간사", "위원", "위원", "위원")[i]} for i in range(6)]
    draft = SimpleNamespace(spec=lambda tool: SimpleNamespace(output=output))
    options = derivations(draft, "members", records, "HG_NM")
    fields = {name for op, choices in options.items() if op in ("eq", "ge", "le") for name, _ in choices}
    assert fields == {"JOB_RES_NM"} and options["eq"], options  # no threshold on a coordinate either
    # a coordinate picks the northernmost or the westernmost, said so
    from edge.synth.execute import Hop
    from edge.synth.item import Junction, JunctionType
    from edge.synth.realise import _which

    assert {name for name, _ in options["max"]} == {name for name, _ in options["min"]} == {"LO", "LAT"}
    source = SimpleNamespace(output=output)
    for op, field, words in (("max", "LAT", "가장 북쪽에 있는"), ("min", "LO", "가장 서쪽에 있는")):
        junction = Junction(source="members", target="t", field="HG_NM", param="HG_NM", cardinality=6,
                            type=JunctionType.DRV, operator=op)
        said = _which(junction, source, Hop(junction, {}, op_field=field), 0)
        assert said == words, said
