"""Which edges walks take: a pass-through edge hands on only what the source's call was given (skipped), a relay
hands on what the walk arrived with (skipped, and a chain ends before one), and a walk wanting more edges starts
and goes where the graph is deep enough."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import numpy as np
import pytest

from bench.taskset.build import open_sandbox_gateway
from edge.synth.attempt import new_draft
from edge.synth.execute import run_chain
from edge.synth.item import TaskType
from edge.synth.walk import LiveGraph, Walk, pass_through, relay
from mcp_gateway.catalog import load_catalog
from tests.conftest import TEST_DATA_DIR, TEST_SCALE

CATALOG = load_catalog()


def _edge(*fields: str) -> SimpleNamespace:
    return SimpleNamespace(plan=[{"param": f, "kind": "upstream", "field": f} for f in fields])


def test_an_edge_from_a_source_that_can_discover_the_value_is_walked():
    votes = CATALOG.get("get_bill_vote_results")  # asked by assembly term (AGE); its records carry bill ids
    assert {"AGE", "BILL_ID"} <= {p.name for p in votes.params}
    assert not pass_through(_edge("BILL_ID", "BILL_NO"), votes)
    assert not pass_through(_edge("BILL_ID", "PROC_RESULT_NOT_A_PARAM"), votes)  # a field it cannot be given


def test_an_edge_handing_on_the_sources_only_input_is_skipped():
    only = next(s for s in (CATALOG.get(n) for n in sorted(CATALOG.names()))
                if len([p for p in s.params if not p.is_generic]) == 1)
    (param,) = [p.name for p in only.params if not p.is_generic]
    assert pass_through(_edge(param), only)
    assert not pass_through(_edge(), only)


def test_an_edge_from_a_source_seen_to_work_without_the_value_is_walked():
    menus = CATALOG.get("get_rest_area_best_foods")  # every input is a rest-area field the edge hands on
    edge = _edge("stdRestCd", "stdRestNm", "routeCd", "routeNm")
    assert pass_through(edge, menus)
    assert pass_through(edge, menus, [{"stdRestCd": "000022", "stdRestNm": "입장(부산)휴게소", "routeCd": "0010",
                                       "routeNm": "경부선"}])  # always given everything it hands on
    assert not pass_through(edge, menus, [{"routeNm": "경부선"}])  # asked by route, its records carry the codes


def _stored(source: str, target: str) -> SimpleNamespace:
    return SimpleNamespace(source=source, target=target, plan=[], posterior=SimpleNamespace(mean=0.9))


def test_a_walk_wanting_more_edges_takes_the_edge_that_goes_on():
    # from A: nine edges to sinks and one to B, which goes on to C; a walk asked for two edges always reaches C
    edges = [_stored("A", f"sink{k}") for k in range(9)] + [_stored("A", "B"), _stored("B", "C")]
    graph = LiveGraph({"A": edges[:10], "B": edges[10:]}, {"A": [{"q": 1}]}, starts=["A"], platform_of={"A": "p"})
    for seed in range(20):
        walk = graph.walk(np.random.default_rng(seed), edges=2)
        assert walk.tools == ["A", "B", "C"]
    one = {tuple(graph.walk(np.random.default_rng(seed), edges=1).tools) for seed in range(20)}
    assert len(one) > 1  # a walk of one edge still chooses among all of them


def test_a_long_walk_starts_where_the_platform_is_deep_enough():
    # one platform: A → B → A (a cycle: one edge onward at most), C → D → E → F, and C → G → C
    edges = {"A": [_stored("A", "B")], "B": [_stored("B", "A")],
             "C": [_stored("C", "D"), _stored("C", "G")], "D": [_stored("D", "E")], "E": [_stored("E", "F")],
             "G": [_stored("G", "C")]}
    graph = LiveGraph(edges, {"A": [{"q": 1}], "C": [{"q": 2}]}, starts=["A", "C"],
                      platform_of={"A": "p", "C": "p"})
    assert [graph.reach(t) for t in "ABCDEFG"] == [1, 1, 3, 2, 1, 0, 4]  # no tool revisited (G → C → D → E → F)
    for seed in range(20):
        assert graph.walk(np.random.default_rng(seed), edges=3).tools == ["C", "D", "E", "F"]
        # asked for more than any start reaches: the farthest-reaching start, as far as it goes
        assert graph.walk(np.random.default_rng(seed), edges=5).tools == ["C", "D", "E", "F"]
    # a walk of one edge still starts anywhere and takes either of C's edges
    ones = {tuple(graph.walk(np.random.default_rng(seed), edges=1).tools) for seed in range(30)}
    assert ones == {("A", "B"), ("C", "D"), ("C", "G")}
    # each platform starts walks alike, however shallow its part of the graph: q's start reaches one edge
    graph = LiveGraph(edges, {"A": [{"q": 1}], "C": [{"q": 2}]}, starts=["A", "C"],
                      platform_of={"A": "q", "C": "p"})
    starts = [graph.walk(np.random.default_rng(seed), edges=3).start for seed in range(40)]
    assert 10 <= starts.count("A") <= 30


REST_CODE = [{"param": "stdRestCd", "kind": "upstream", "field": "stdRestCd"}]


def _keyed(source: str, target: str, plan: list) -> SimpleNamespace:
    return SimpleNamespace(source=source, target=target, plan=plan, posterior=SimpleNamespace(mean=0.9))


def test_a_walk_takes_no_relay():
    # locations → menus by the rest area's code; menus → conveniences by the same code is a relay (the menus give
    # back the code they were asked by); menus → route info by the route name is not
    to_menus = _keyed("locations", "menus", REST_CODE)
    relayed = _keyed("menus", "conveniences", REST_CODE + [{"param": "routeNm", "kind": "upstream", "field": "routeNm"}])
    onward = _keyed("menus", "route", [{"param": "routeNm", "kind": "upstream", "field": "routeNm"}])
    assert relay(to_menus, relayed) and not relay(to_menus, onward) and not relay(None, relayed)
    graph = LiveGraph({"locations": [to_menus], "menus": [relayed, onward]}, {"locations": [{"q": 1}]},
                      starts=["locations"], platform_of={"locations": "ex"})
    assert graph.reach("locations") == 2
    for seed in range(10):
        assert graph.walk(np.random.default_rng(seed), edges=2).tools == ["locations", "menus", "route"]


def test_a_chain_ends_before_a_junction_that_relays_a_value_it_already_handed_on():
    async def chain():
        gateway = open_sandbox_gateway(TEST_DATA_DIR, scale=TEST_SCALE)
        try:
            draft = new_draft(gateway.runtime, 0, 0, TaskType.SEQ)
            walk = Walk("list_rest_area_locations", {"unitCode": "601"}, (  # one rest area: 만남의광장(부산방향)
                _keyed("list_rest_area_locations", "get_rest_area_best_foods", REST_CODE),
                _keyed("get_rest_area_best_foods", "get_rest_area_conveniences", REST_CODE)))
            return draft, await run_chain(draft, walk, want=TaskType.SEQ, rng=np.random.default_rng(0))
        finally:
            await gateway.aclose()

    draft, executed = asyncio.run(chain())
    # the menus are asked by the code the locations gave (a real junction); the conveniences would be asked by the
    # same code again, which the question's first answer already gave: that hop is taken back
    assert [(j.source, j.target) for j in executed.junctions] == [
        ("list_rest_area_locations", "get_rest_area_best_foods")]
    assert "get_rest_area_conveniences" not in {c.tool for c in draft.calls}
    assert executed.trace.bound_values[:1] == ["000002"]


def test_a_junction_whose_key_the_question_gave_is_a_relay():
    """Asked by a rest area's code, the locations hand on that code (and its name, an optional filter) to the menus:
    the question could have asked the menus by the code it gave, so the junction discovers nothing and the attempt is
    dropped (a law's promulgation number relayed from one law search to the other made ~100 of 1,000 items this
    way). A junction that also hands on a value the target requires stays: test_depth's vote list hands on the
    assembly term the question gave and the bill's id (`get_member_votes_on_bill` requires both)."""
    from edge.synth.execute import Abandon

    code_and_name = REST_CODE + [{"param": "stdRestNm", "kind": "upstream", "field": "unitName"}]

    async def chain():
        gateway = open_sandbox_gateway(TEST_DATA_DIR, scale=TEST_SCALE)
        try:
            draft = new_draft(gateway.runtime, 0, 0, TaskType.SEQ)
            walk = Walk("list_rest_area_locations", {"stdRestCd": "000002"}, (
                _keyed("list_rest_area_locations", "get_rest_area_best_foods", code_and_name),))
            await run_chain(draft, walk, want=TaskType.SEQ, rng=np.random.default_rng(0))
        finally:
            await gateway.aclose()

    with pytest.raises(Abandon, match="a relay, its key '000002' is one the question gives"):
        asyncio.run(chain())


def test_a_threshold_on_a_one_junction_chain_is_no_mixed_item():
    """A MIXED attempt whose walk ends after one junction would become MIXED only by a threshold check on its last
    records (a COND tail): two calls, under Table 10's median. It is dropped; the same check past two junctions is
    kept (the attempt runner's rule, ``attempt._check_composed``)."""
    from edge.synth.attempt import AttemptJob, run_attempt

    # a route's menus → their rest areas' brands (rest areas are selected by a menu's price, not by a coordinate)
    one = _keyed("get_rest_area_best_foods", "get_rest_area_brands", REST_CODE)
    graph = LiveGraph({"get_rest_area_best_foods": [one]}, {"get_rest_area_best_foods": [{"routeNm": "경부선"}]},
                      starts=["get_rest_area_best_foods"], platform_of={"get_rest_area_best_foods": "ex"})

    async def attempts(want: TaskType) -> list:
        gateway = open_sandbox_gateway(TEST_DATA_DIR, scale=TEST_SCALE)
        try:
            return [await run_attempt(gateway.runtime, graph, AttemptJob(seed=0, attempt=k, want=want))
                    for k in range(6)]
        finally:
            await gateway.aclose()

    from edge.synth.item import FinalType

    mixed = asyncio.run(attempts(TaskType.MIXED))
    dropped = [r for r in mixed if r.executed is None]
    # where the rest areas' brands name no one-valued field, the threshold would ask the count either way: dropped first
    one_junction = [r for r in dropped if "a threshold on a one-junction chain" in r.reason]
    assert one_junction and all(r in one_junction or "between the count and the count" in r.reason for r in dropped)
    kept = [r.executed for r in mixed if r.executed is not None]
    assert kept  # the menus priced past a bound fan out to a few rest areas: compared (CMP) or, tied, summed
    assert all(e.final is not FinalType.COND and len(e.junctions) == 1 for e in kept)
