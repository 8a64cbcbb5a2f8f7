"""The pre-rendered row JSON that pages are read from equals the tables themselves, in v1 and v2."""

from __future__ import annotations

import json

import pytest

from sandbox import World


@pytest.fixture(scope="module", params=["v1", "v2"])
def small_world(request, small_world_files):
    w = World.open(small_world_files[request.param])
    yield w
    w.close()


def _first_difference(got: list[dict], want: list[dict]) -> int | None:
    """Index of the first row whose columns (in order), values or value types differ; None when all agree."""
    if len(got) != len(want):
        return min(len(got), len(want))
    for i, (a, b) in enumerate(zip(got, want)):
        if a != b or list(a) != list(b) or list(map(type, a.values())) != list(map(type, b.values())):
            return i
    return None


def test_the_row_comparison_sees_order_type_and_value():
    row = {"a": 1, "b": "x"}
    assert _first_difference([row], [dict(row)]) is None
    assert _first_difference([row], [{"b": "x", "a": 1}]) == 0  # column order
    assert _first_difference([row], [{"a": 1.0, "b": "x"}]) == 0  # 1 == 1.0, but not the same type
    assert _first_difference([row], [{"a": 2, "b": "x"}]) == 0
    assert _first_difference([row], [row, row]) == 1


def test_every_row_reads_back_the_same_from_its_json(small_world):
    for table in sorted(small_world.table_names):
        direct = small_world.rows(f'SELECT * FROM "{table}" ORDER BY rowid')
        via_json = small_world.rows_at(table, range(len(direct)))
        i = _first_difference(via_json, direct)
        assert i is None, (table, i, via_json[i:i + 1], direct[i:i + 1])


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


def test_the_row_json_is_stored_as_one_zstd_frame_per_row_with_the_tables_dictionary(small_world):
    """What keeps the full world (and the image) small, while a row still reads alone."""
    import zstandard

    from sandbox.world.row_json import DICTIONARIES, ROW_JSON_PREFIX

    cur = small_world._cur
    dictionaries = dict(cur.execute(f"SELECT name, dictionary FROM {DICTIONARIES}").fetchall())
    assert len(dictionaries) >= 10 and set(dictionaries) == small_world._row_json.tables
    trained = [name for name, raw in dictionaries.items() if raw is not None]
    assert trained  # the larger tables of even the small world have enough rows to train one
    for table in trained:
        frame = cur.execute(f'SELECT j FROM "{ROW_JSON_PREFIX}{table}" WHERE rowid = 0').fetchone()[0]
        alone = zstandard.ZstdDecompressor().decompress  # without the table's dictionary a frame does not read
        with pytest.raises(zstandard.ZstdError):
            alone(frame)
        text = zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(dictionaries[table])).decompress(frame)
        assert len(frame) < len(text) and json.loads(text) == small_world.rows_at(table, [0])[0]
