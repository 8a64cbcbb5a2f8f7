"""Which edges walks take: a pass-through edge hands on only what the source's call was given (skipped), and a walk
wanting more edges takes one that goes on."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from edge.synth.walk import LiveGraph, pass_through
from mcp_gateway.catalog import load_catalog

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
