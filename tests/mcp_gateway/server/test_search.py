"""Character n-gram retrieval over Korean tool descriptions, and named tool sets."""

from __future__ import annotations

from mcp_gateway.server import NgramIndex, ToolSet, default_toolsets
from mcp_gateway.server.search import ngrams
from tests.mcp_gateway.server.toy_runtime import ToyCatalog

CATALOG = ToyCatalog()
SPECS = list(CATALOG.tools.values())
INDEX = NgramIndex([f"{s.name} {s.description_ko}" for s in SPECS])


def top(query: str, limit: int = 3) -> list[str]:
    return [SPECS[i].name for i, _ in INDEX.search(query, limit)]


def test_ngrams_cover_hangul_words_and_their_edges() -> None:
    grams = ngrams("전환사채 발행결정")
    assert {" 전", "전환", "환사", "사채", "채 ", " 전환", "전환사", "발행결", "정 "} <= set(grams)
    assert ngrams("get_dart_corp") == ngrams("GET dart corp")  # snake_case names split into words


def test_korean_queries_rank_the_matching_tool_first() -> None:
    assert top("전환사채 발행 결정")[0] == "get_dart_convertible_bond_issuance_decision"
    assert top("전환사채발행결정")[0] == "get_dart_convertible_bond_issuance_decision"  # spacing does not matter
    assert top("학급 학생 수")[0] == "class_and_student_status"
    assert top("고속도로 톨게이트 교통량")[0] == "get_tollbooth_traffic_volume"
    assert top("회사 고유번호 찾기")[0] == "find_dart_corp_code"
    assert top("주식 시세 추이")[0] == "get_stock_price_trend"
    assert top("gg_dataset_017")[0] == "gg_dataset_017"


def test_scores_are_cosines_best_first_and_unmatched_queries_find_nothing() -> None:
    hits = INDEX.search("전환사채", 10)
    scores = [s for _, s in hits]
    assert scores == sorted(scores, reverse=True) and 0 < scores[0] <= 1.0 + 1e-6
    assert INDEX.search("zzqx", 5) == [] and INDEX.search("", 5) == []


def test_default_toolsets_split_the_catalog_by_platform_and_domain() -> None:
    sets = default_toolsets(CATALOG, pinned=["write_note"])
    assert sets["all"].resolve(CATALOG) == SPECS
    assert sets["search"].mode == "search" and sets["search"].pinned == ("write_note",)
    assert [s.name for s in sets["platform/dart"].resolve(CATALOG)] == [
        "get_dart_convertible_bond_issuance_decision", "find_dart_corp_code"]
    assert {s.domain for s in sets["domain/district"].resolve(CATALOG)} == {"district"}
    platform_sets = [n for n in sets if n.startswith("platform/")]
    assert sum(len(sets[n].resolve(CATALOG)) for n in platform_sets) == len(SPECS)


def test_pinned_tools_join_an_explicit_set_once() -> None:
    task = ToolSet("task/t", ("read_note", "find_dart_corp_code"), pinned=("read_note", "write_note"))
    assert [s.name for s in task.resolve(CATALOG)] == ["read_note", "find_dart_corp_code", "write_note"]
