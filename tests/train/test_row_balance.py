"""SFT rows taken evenly across domains (``train.row_balance``), keyed by the first API a row calls."""

from __future__ import annotations

from collections import Counter

import pytest

from mcp_gateway.catalog import load_catalog
from train.row_balance import NO_DATA_CALL, balanced_rows, domain_of_row

# run9's mix, in miniature: one domain with most rows, one with few
ROWS = [("district", i) for i in range(40)] + [("law", i) for i in range(3)] + [("finance", i) for i in range(10)]


def _key(row):
    return row[0]


def test_each_domain_gives_as_many_as_the_scarcest_can_and_the_rest_is_shared():
    picked = balanced_rows(ROWS, 15, key=_key, seed=0)
    assert Counter(map(_key, picked)) == {"district": 6, "finance": 6, "law": 3}
    assert len(set(picked)) == len(picked)  # no row twice


def test_an_even_supply_is_split_evenly_and_a_larger_n_takes_every_row():
    assert Counter(map(_key, balanced_rows(ROWS, 9, key=_key, seed=1))) == {"district": 3, "finance": 3, "law": 3}
    every = balanced_rows(ROWS, 500, key=_key, seed=0)
    assert sorted(every) == sorted(ROWS)


def test_the_same_seed_picks_the_same_rows_and_another_seed_others():
    assert balanced_rows(ROWS, 12, key=_key, seed=3) == balanced_rows(ROWS, 12, key=_key, seed=3)
    assert balanced_rows(ROWS, 12, key=_key, seed=3) != balanced_rows(ROWS, 12, key=_key, seed=4)


def test_no_rows_asked_for_is_an_error():
    with pytest.raises(ValueError, match="at least 1"):
        balanced_rows(ROWS, 0, key=_key, seed=0)


def _row(*tools):
    return {"messages": [{"role": "user", "content": "질문"},
                         {"role": "assistant", "tool_calls": [{"function": {"name": t, "arguments": "{}"}}
                                                              for t in tools]}]}


def test_a_row_is_keyed_by_the_first_api_it_calls_not_the_calculator_or_the_workspace():
    key = domain_of_row(load_catalog())
    assert key(_row("evaluate_expression", "get_bill_detail")) == "politics"
    assert key(_row("gg_hydrogen_station")) == "district"
    assert key(_row("evaluate_expression", "write_note")) == NO_DATA_CALL
    assert key(_row("no_such_tool")) == NO_DATA_CALL
    assert key({"messages": []}) == NO_DATA_CALL
