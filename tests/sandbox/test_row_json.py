"""The pre-rendered row JSON that pages are read from equals the tables themselves, in v1 and v2."""

from __future__ import annotations

import pytest

from sandbox import World, ensure_world

SMALL = 0.02


@pytest.fixture(scope="module", params=["v1", "v2"])
def small_world(request, tmp_path_factory):
    w = World.open(ensure_world(tmp_path_factory.mktemp("worlds"), seed=5, version=request.param, scale=SMALL))
    yield w
    w.close()


def _typed(row: dict) -> list[tuple]:
    return [(k, type(v).__name__, v) for k, v in row.items()]


def test_every_row_reads_back_the_same_from_its_json(small_world):
    for table in sorted(small_world.table_names):
        direct = small_world.rows(f'SELECT * FROM "{table}" ORDER BY rowid')
        via_json = small_world.rows_at(table, range(len(direct)))
        assert [_typed(r) for r in via_json] == [_typed(r) for r in direct], table


def test_rows_at_keeps_the_order_and_the_columns_asked_for(small_world):
    ids = [7, 2, 30, 3]
    rows = small_world.rows_at("krx_price", ids, ["srtnCd", "basDt"])
    direct = {r.pop("i"): r for r in small_world.rows(
        'SELECT rowid AS i, "srtnCd", "basDt" FROM krx_price WHERE rowid = ANY(?)', [ids])}
    assert rows == [direct[i] for i in ids]
    assert list(rows[0]) == ["srtnCd", "basDt"]


def test_a_page_equals_the_sorted_query(small_world):
    where, params = '"AGE" = ?', ["21"]
    order = '"AGE" DESC, "BILL_NO" DESC'
    total, rows = small_world.page("assembly_bill", where, params, order_by=order, offset=5, limit=7)
    expected = small_world.rows(f'SELECT * FROM assembly_bill WHERE {where} ORDER BY {order} LIMIT 7 OFFSET 5', params)
    assert total == small_world.count("assembly_bill", where, params) and rows == expected
    total, rows = small_world.page("law_law", "", (), order_by='"법령명한글" DESC, "법령일련번호"', offset=3, limit=4,
                                   columns=["법령명한글"])
    expected = small_world.rows('SELECT "법령명한글" FROM law_law ORDER BY "법령명한글" DESC, "법령일련번호" LIMIT 4 OFFSET 3')
    assert rows == expected
