"""Each wide table's rows pre-rendered as JSON (``_json_<table>``, row i at rowid i), one zstd frame per row.

    write_row_json(con, "gg_dataset_rows")                 # builder: after the table is final
    rows = RowJson(con).read(cursor, "gg_dataset_rows", "BETWEEN ? AND ?", [0, 99], ids=range(100))

Why pre-rendered: DuckDB decodes a whole 2,048-row vector of each column it touches, so a 100-row page of a
30-column table costs ~4 ms read column by column and ~0.4 ms read from one column of whole rows.

Why a frame per row with a trained dictionary: the JSON text is 3/4 of the full world (1.2 of 1.56 GB under
DuckDB's own string compression, FSST). A table's rows share their keys and many values, so zstd with a
dictionary trained on the table's rows (64 KiB, kept in ``_json_dictionaries``) keeps about half of what FSST
keeps, and a row decompresses alone in ~1-2 µs. DuckDB's own zstd column compression keeps less still, but it
decompresses a whole segment to read one row: the sandbox's paged-query benchmark fell from ~350-410 to
~135-140 requests/s with it (2026-12-06), against the ~1 µs a row costs here.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import duckdb
import orjson
import pyarrow as pa
import zstandard

__all__ = ["DICTIONARIES", "ROW_JSON_MIN_COLUMNS", "ROW_JSON_PREFIX", "RowJson", "write_row_json"]

ROW_JSON_PREFIX = "_json_"
DICTIONARIES = "_json_dictionaries"  # (name VARCHAR, dictionary BLOB): one zstd dictionary per table
ROW_JSON_MIN_COLUMNS = 10  # narrower tables read fast enough column by column
DICTIONARY_BYTES = 64 * 1024
SAMPLE_ROWS = 10_000  # rows the dictionary is trained on, spread evenly over the table
LEVEL = 3  # the same ratio as 6 here (5.6x on gg_dataset_rows), at a third of the time
BATCH_ROWS = 100_000


def _q(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def write_row_json(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    """Store every row of ``name`` as compressed JSON in ``_json_<name>`` when the table is wide enough (module
    doc); written from the finished table, so it follows v2 drift. Returns whether it wrote them."""
    columns = con.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? "
                          "ORDER BY ordinal_position", [name]).fetchall()
    rows = con.execute(f"SELECT count(*) FROM {_q(name)}").fetchall()[0][0]
    if len(columns) < ROW_JSON_MIN_COLUMNS or rows == 0:
        return False
    # A JSON column is served as its text, as the table itself returns it.
    fields = ", ".join(f"{_q(c)} := {_q(c)}{'::VARCHAR' if t == 'JSON' else ''}" for c, t in columns)
    as_json = f"to_json(struct_pack({fields}))::VARCHAR"
    stride = max(1, rows // SAMPLE_ROWS)
    sample = [text.encode() for (text,) in con.execute(
        f"SELECT {as_json} FROM {_q(name)} WHERE rowid % {stride} = 0 ORDER BY rowid").fetchall()]
    dictionary = _train(sample)
    compress = zstandard.ZstdCompressor(level=LEVEL, dict_data=dictionary, write_checksum=False).compress

    con.execute(f"CREATE TABLE IF NOT EXISTS {DICTIONARIES} (name VARCHAR PRIMARY KEY, dictionary BLOB)")
    con.execute(f"INSERT INTO {DICTIONARIES} VALUES (?, ?)",
                [name, dictionary.as_bytes() if dictionary is not None else None]).fetchall()
    target = _q(ROW_JSON_PREFIX + name)
    con.execute(f"CREATE TABLE {target} (j BLOB)")
    source = con.cursor()  # read on its own cursor: the inserts below run on ``con`` meanwhile
    for batch in source.sql(f"SELECT {as_json} AS j FROM {_q(name)} ORDER BY rowid").to_arrow_reader(BATCH_ROWS):
        frames = pa.table({"j": pa.array([compress(text.encode()) for text in batch.column(0).to_pylist()],
                                         pa.binary())})
        con.register("_frames", frames)
        con.execute(f"INSERT INTO {target} SELECT j FROM _frames").fetchall()  # in order: row i stays at rowid i
        con.unregister("_frames")
    source.close()
    return True


def _train(sample: list[bytes]) -> zstandard.ZstdCompressionDict | None:
    """A dictionary for these rows, or None where there are too few to train one (a tiny test world)."""
    try:
        return zstandard.train_dictionary(DICTIONARY_BYTES, sample)  # default parameters: deterministic, ~0.3 s
    except zstandard.ZstdError:
        return None


class RowJson:
    """The compressed rows of an opened world: which tables have them, and reading them back."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        has = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?",
                          [DICTIONARIES]).fetchall()[0][0]
        found = con.execute(f"SELECT name, dictionary FROM {DICTIONARIES}").fetchall() if has else []
        self._dictionaries = {name: zstandard.ZstdCompressionDict(raw) if raw is not None else None
                              for name, raw in found}
        self.tables = frozenset(self._dictionaries)
        self._local = threading.local()  # a decompressor is not to be shared between threads

    def _decompressor(self, table: str) -> zstandard.ZstdDecompressor:
        per_thread = self._local.__dict__.setdefault("decompressors", {})
        if table not in per_thread:
            dictionary = self._dictionaries[table]
            per_thread[table] = (zstandard.ZstdDecompressor(dict_data=dictionary) if dictionary is not None
                                 else zstandard.ZstdDecompressor())
        return per_thread[table]

    def read(self, cur: duckdb.DuckDBPyConnection, table: str, match: str, args: Sequence[Any],
             ids: Sequence[int]) -> list[dict[str, Any]]:
        """The rows at ``ids`` (found by ``rowid {match}``), in the order of ``ids``."""
        frames = dict(cur.execute(f"SELECT rowid, j FROM {_q(ROW_JSON_PREFIX + table)} WHERE rowid {match}",
                                  list(args)).fetchall())
        decompress = self._decompressor(table).decompress
        return orjson.loads(b"[" + b",".join(decompress(frames[i]) for i in ids) + b"]")  # one parse for the page
