"""Which edges walks skip: a pass-through edge hands on only what the source's call was given."""

from __future__ import annotations

from types import SimpleNamespace

from edge.synth.walk import pass_through
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
