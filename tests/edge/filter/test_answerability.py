"""Stage 2: planted leaks are caught and named; the bench's own 145 tasks pass."""

from __future__ import annotations

import pytest

from edge.filter.answerability import check_answerability, intermediate_values
from mcp_gateway.catalog import load_catalog
from tests.edge.filter.items import bench, junction, task_like, wrap


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_bench_tasks_pass(catalog):
    # the bench was audited for leakage; comparison tasks name their options, which is not a leak
    rejected = [r for t in bench().values() if (r := check_answerability(wrap(t), catalog))]
    assert rejected == []


def test_planted_corp_code_is_caught(catalog):
    # fin-001 finds the corp code at step 0; its step-1 call passes it. Put it in the query.
    base = bench()["fin-001"]
    code = base.golden_actions[1].args["corp_code"]
    assert len(code) == 8 and code.isdigit()
    leaky = task_like("fin-001", query=f"고유번호 {code}인 회사가 2026년 1월에 발행을 결정한 전환사채의 리픽싱 최저 조정가액은?")
    rejection = check_answerability(wrap(leaky), catalog)
    assert rejection is not None and rejection.stage == "answerability" and rejection.item_id == "fin-001"
    assert code in rejection.reason and "get_dart_convertible_bond_issuance_decision.corp_code" in rejection.reason


def test_junction_fed_value_is_intermediate_even_when_not_code_like(catalog):
    # trf-001's step 3 writes the menu found at step 2 into a watchlist: with a junction on that parameter, the
    # menu name is an intermediate value; the list name the user chose ("먹어볼 메뉴") is not
    item = wrap(bench()["trf-001"], junctions=(junction("get_rest_area_best_foods", "add_to_watchlist",
                                                        "foodNm", "item", 1),))
    found = {(tool, param): value for tool, param, value in intermediate_values(item, catalog)}
    assert found[("add_to_watchlist", "item")] == "떡만둣국"
    assert ("add_to_watchlist", "list_name") not in found
    assert ("get_rest_area_best_foods", "KEY") not in found and ("get_rest_area_best_foods", "pageNo") not in found


def test_answer_in_query_is_rejected(catalog):
    leaky = task_like("trf-001", query=bench()["trf-001"].query + " 아마 떡만둣국일 것 같아요.")
    rejection = check_answerability(wrap(leaky), catalog)
    assert rejection is not None and "'떡만둣국'" in rejection.reason and "answer" in rejection.reason


def test_number_answer_matches_only_whole_numbers(catalog):
    base = bench()["fin-019"]  # answer 37
    assert check_answerability(wrap(task_like("fin-019", query=base.query + " (2037년 기준 아님)")), catalog) is None
    rejection = check_answerability(wrap(task_like("fin-019", query=base.query + " 답은 37건 정도죠?")), catalog)
    assert rejection is not None and "'37'" in rejection.reason


def test_comparison_options_are_not_a_leak(catalog):
    assert bench()["fin-006"].accepted_answers[0] in bench()["fin-006"].query
    assert check_answerability(wrap(bench()["fin-006"]), catalog) is None


def test_single_call_is_solvable_by_its_first_call(catalog):
    base = bench()["fin-019"].model_dump(mode="json")
    one = task_like("fin-019", golden_actions=base["golden_actions"][:1])
    rejection = check_answerability(wrap(one), catalog)
    assert rejection is not None and "first call only" in rejection.reason


def test_recipe_reading_only_the_first_call_is_decorative(catalog):
    rejection = check_answerability(wrap(bench()["trf-002"], recipe={"answer_calls": [0]}), catalog)
    assert rejection is not None and "first call only" in rejection.reason
    assert check_answerability(wrap(bench()["trf-002"], recipe={"answer_calls": [0, 2]}), catalog) is None
