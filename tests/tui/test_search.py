"""Tool search over the real catalog, as the console and the gateway's search mode rank it: a query that
matches nothing finds nothing, and whole words and Korean words rank above substrings."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from tests.tui.test_pilot import SIZE, console, text_of, until
from tui.sources.source import shared_search


def names(query: str, limit: int = 10) -> list[str]:
    return [hit.name for hit in shared_search().find(query, limit)]


def test_a_query_that_matches_no_tool_finds_none() -> None:
    assert names("xyzzy_nonexistent_tool") == []
    assert names("asdfgh") == [] and names("날씨") == [] and names("   ") == []


def test_whole_words_rank_above_substrings() -> None:
    found = names("bus")
    assert found[:5] == ["search_bus_routes", "list_bus_stop_locations", "gg_bus_stop", "seoul_tb_bus_stop_info",
                         "get_bus_ridership_by_stop"]
    assert "gg_multi_use_business" in found[5:]  # still found, below every whole-word match


def test_korean_words_match_with_particles_and_compounds() -> None:
    assert names("버스")[0] == "search_bus_routes"
    assert names("지하철역 정보")[0] == "search_subway_stations"
    assert names("서울에서 가장 가까운 지하철역을 찾아줘")[0] == "search_subway_stations"  # 지하철역을: particle glued on
    assert names("전환사채발행")[0] == "get_dart_convertible_bond_issuance_decision"  # no spaces


def test_scores_are_best_first_and_within_one() -> None:
    scores = [hit.score for hit in shared_search().find("school", 20)]
    assert scores == sorted(scores, reverse=True) and 0 < scores[-1] and scores[0] <= 1.0


async def test_the_tools_tab_says_when_nothing_matches(pilot_home):
    app = console(pilot_home, None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *"xyzzy_nonexistent_tool", "enter")
        schema = app.screen.query_one("#tool-schema", Static)
        await until(pilot, lambda: text_of(schema).startswith("no tool matches"))
        assert text_of(schema).startswith("no tool matches 'xyzzy_nonexistent_tool'")
        hits = app.screen.query_one("#tool-hits", DataTable)
        assert hits.row_count == 0 and hits.border_subtitle == "0 tools"
