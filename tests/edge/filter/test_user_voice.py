"""Queries a user would write (Appendix J): each defect is detected, named, and its own quality-stage reason;
KOPA-Bench's own queries have none."""

from __future__ import annotations

import asyncio

import pytest

from edge.filter.funnel import run_funnel
from edge.filter.quality import check_quality
from edge.filter.user_voice import (DEFECTS, DESCRIPTION_COPY, OPAQUE_ID, RAW_CODE, defect_counts, query_defects,
                                    user_voice_problem)
from mcp_gateway.catalog import load_catalog
from tests.edge.filter.items import bench, task_like, wrap

CATALOG = load_catalog()
KEY = "{ex_api_key}"


def _item(item_id: str, query: str, *calls: tuple[str, dict], opening: bool = True):
    """An item whose golden trajectory is ``calls`` after a route's fuel prices (a chain, which answerability passes;
    ``opening=False``: the first of ``calls`` opens it, with arguments the question states)."""
    calls = (("get_rest_area_fuel_prices", {"routeName": "중앙선"}), *calls) if opening else calls
    actions = [{"step": k, "tool": tool, "args": {**args, "KEY": KEY}} for k, (tool, args) in enumerate(calls)]
    return wrap(task_like("trf-002", id=item_id, query=query, golden_actions=actions))


COPIED = _item("syn-copy", "휴게소명(예: 만남의광장(부산)휴게소)가 만남의광장(부산)휴게소인 휴게소의 브랜드 매장은 몇 곳인가요?",
               ("get_rest_area_brands", {"stdRestCd": "000366"}))
OPAQUE = _item("syn-opaque", "휴게소 표준코드가 000366인 휴게소의 대표 메뉴는 모두 몇 개인가요?",
               ("get_rest_area_best_foods", {"stdRestCd": "000366"}),
               ("get_rest_area_fuel_prices", {"routeName": "중앙선"}), opening=False)
RAW = _item("syn-raw", "도로운영기관 구분코드가 00인 영업소의 교통량 기록은 모두 몇 건인가요?",
            ("get_tollbooth_traffic_volume", {"exDivCode": "00"}))
SAID = _item("syn-said", "도로운영기관이 한국도로공사인 영업소의 교통량 기록은 모두 몇 건인가요?",
             ("get_tollbooth_traffic_volume", {"exDivCode": "00"}))
NAMED = _item("syn-named", "중앙선 휴게소 가운데 휘발유가 가장 싼 곳의 대표 메뉴는 모두 몇 개인가요?",
              ("get_rest_area_best_foods", {"stdRestCd": "000366"}))


@pytest.mark.parametrize(("item", "kind", "found"), [
    (COPIED, DESCRIPTION_COPY, "예:"), (OPAQUE, OPAQUE_ID, "stdRestCd=000366"), (RAW, RAW_CODE, "exDivCode=00"),
])
def test_each_defect_is_found_and_named(item, kind, found):
    (defect,) = query_defects(item, CATALOG)
    assert defect[0] == kind and found in defect[1]
    assert user_voice_problem(item, CATALOG).startswith(kind)


def test_a_code_said_in_words_and_an_identifier_the_chain_discovers_are_fine():
    assert query_defects(SAID, CATALOG) == []
    assert query_defects(NAMED, CATALOG) == []  # 000366 is a golden argument, but the question never states it


def test_without_a_catalog_machine_identifiers_and_copied_examples_are_still_caught():
    bill = _item("syn-bill", "의안ID가 PRC_C5J6O9N9T1U2C9X0C4D1Q4G7G4P2R2인 의안의 소관위원회는 어디인가요?",
                 ("get_rest_area_brands", {"stdRestCd": "000366"}))
    assert [k for k, _ in query_defects(bill)] == [OPAQUE_ID]
    assert [k for k, _ in query_defects(COPIED)] == [DESCRIPTION_COPY]


def test_bench_queries_read_as_a_user_wrote_them():
    items = [wrap(t) for t in bench().values()]
    counts = defect_counts(items, CATALOG)
    assert counts["items"] == len(items) and all(counts[k] == 0 for k in DEFECTS), counts


def test_the_quality_stage_drops_each_defect_under_its_own_reason():
    result = check_quality([COPIED, OPAQUE, RAW, SAID], catalog=CATALOG)
    assert [i.task.id for i in result.kept] == ["syn-said"]
    by_item = {r.item_id: r.reason for r in result.rejections}
    assert by_item["syn-copy"].startswith(DESCRIPTION_COPY) and by_item["syn-opaque"].startswith(OPAQUE_ID)
    assert by_item["syn-raw"].startswith(RAW_CODE)
    funnel = asyncio.run(run_funnel([COPIED, OPAQUE, RAW, SAID], catalog=CATALOG))
    assert funnel.reasons["quality"] == {DESCRIPTION_COPY: 1, OPAQUE_ID: 1, RAW_CODE: 1}
