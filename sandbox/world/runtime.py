"""World: read-only access to a built world file, safe to share between request threads.

Platform emulators use ``rows`` for lookups and ``page`` for paged list queries. Both bind
parameters (never format values into SQL) and rely on the tables' sort order and indexes, so
no request scans a whole table.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import duckdb

from .row_json import RowJson


def _norm_order(order_by: str) -> str:
    """Canonical form of an ORDER BY list: no quotes, single spaces, no explicit ASC."""
    terms = []
    for term in order_by.replace('"', "").split(","):
        words = term.split()
        if words and words[-1].upper() == "ASC":
            words = words[:-1]
        elif words and words[-1].upper() == "DESC":
            words[-1] = "DESC"
        terms.append(" ".join(words))
    return ", ".join(terms)


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


class World:
    """An opened world file. One DuckDB connection, one cursor per thread."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        if not self.path.exists():
            raise FileNotFoundError(f"world file {self.path} does not exist; build it with `kopa sandbox info`")
        # One thread per query: requests are small and many; parallel scans only add scheduling.
        self._con = duckdb.connect(str(self.path), read_only=True, config={"threads": 1})
        self._local = threading.local()
        meta = dict(self._con.execute("SELECT key, value FROM _world_meta").fetchall())
        self.seed = int(meta["seed"])
        self.version = meta["version"]
        self.scale = float(meta["scale"])
        self.content_hash = meta["content_hash"]
        self.generator_version = meta["generator_version"]
        tables = self._con.execute("SELECT name, rows, sort_by FROM _world_tables").fetchall()
        self.table_names = frozenset(name for name, _, _ in tables)
        self._rows = {name: rows for name, rows, _ in tables}
        # Tables whose physical order is known: an unfiltered page in that order is a rowid range.
        self._physical_order = {name: _norm_order(", ".join(json.loads(order))) for name, _, order in tables
                                if order and json.loads(order)}
        self._row_json = RowJson(self._con)
        self._span = lru_cache(maxsize=8192)(self._span_uncached)

    @classmethod
    def open(cls, path: Path | str) -> World:
        return cls(path)

    def close(self) -> None:
        self._con.close()

    @property
    def _cur(self) -> duckdb.DuckDBPyConnection:
        cur = getattr(self._local, "cur", None)
        if cur is None:
            cur = self._local.cur = self._con.cursor()
        return cur

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Run a query and return rows as dicts (column name → value)."""
        cur = self._cur.execute(sql, list(params))
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]

    def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        rows = self._cur.execute(sql, list(params)).fetchall()
        return rows[0][0] if rows else None

    def page(self, table: str, where: str = "", params: Sequence[Any] = (), *, order_by: str,
             offset: int, limit: int, columns: Sequence[str] | None = None) -> tuple[int, list[dict[str, Any]]]:
        """Total count and one page of ``table`` filtered by ``where`` (SQL with ? placeholders).

        ``columns`` picks the fields of each row, in that order (default: every column).
        """
        total, first, last = self._span(table, where, tuple(params))
        if total == 0 or offset >= total or limit <= 0:
            return total, []
        end = min(total, offset + limit)
        physical = self._physical_order.get(table) == _norm_order(order_by)
        if physical and last - first + 1 == total:
            # The matches are one run of the physical order (a filter on leading sort columns):
            # the page is a rowid range, found with no scan at all.
            return total, self.rows_at(table, range(first + offset, first + end), columns)
        # Find the page reading only the filter and order columns, then fetch its rows by rowid.
        # Asked for the physical order: DuckDB keeps insertion order without ORDER BY, so the page
        # streams off the filtered scan instead of sorting every matching row first.
        clause = f" WHERE {where}" if where else ""
        order = "" if physical else f" ORDER BY {order_by}"
        ids = [r[0] for r in self._cur.execute(f'SELECT rowid FROM "{table}"{clause}{order} LIMIT ? OFFSET ?',
                                               [*params, limit, offset]).fetchall()]
        return total, self.rows_at(table, ids, columns)

    def rows_at(self, table: str, ids: Sequence[int], columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The rows of ``table`` at these rowids, in the order given."""
        if not ids:
            return []
        low, high = min(ids), max(ids)
        # A compact set is read as the range around it (a range scan beats an IN-list probe).
        match, args = ("BETWEEN ? AND ?", [low, high]) if high - low < 4 * len(ids) else ("= ANY(?)", [list(ids)])
        if table not in self._row_json.tables:
            cols = "*" if columns is None else ", ".join(_quote(c) for c in columns)
            fetched = self.rows(f'SELECT rowid AS "__rowid", {cols} FROM "{table}" WHERE rowid {match}', args)
            by_id = {r.pop("__rowid"): r for r in fetched}
            return [by_id[i] for i in ids]
        records = self._row_json.read(self._cur, table, match, args, ids)
        if columns is None:
            return records
        return [{c: r[c] for c in columns} for r in records]

    def count(self, table: str, where: str = "", params: Sequence[Any] = ()) -> int:
        return self._span(table, where, tuple(params))[0]

    def _span_uncached(self, table: str, where: str, params: tuple[Any, ...]) -> tuple[int, int, int]:
        """(count, first rowid, last rowid) of the rows matching ``where``; the world never changes."""
        if not where and table in self._rows:
            return self._rows[table], 0, self._rows[table] - 1
        clause = f" WHERE {where}" if where else ""
        count, first, last = self._cur.execute(f'SELECT count(*), min(rowid), max(rowid) FROM "{table}"{clause}',
                                               list(params)).fetchall()[0]
        return int(count), first, last

    def columns(self, table: str) -> list[str]:
        return [r[0] for r in self._cur.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
            [table]).fetchall()]

    def has_table(self, table: str) -> bool:
        return table in self.table_names

    def table_sizes(self) -> dict[str, int]:
        return dict(self._cur.execute("SELECT name, rows FROM _world_tables ORDER BY name").fetchall())

    def changelog(self) -> list[dict[str, Any]]:
        return [json.loads(r[0]) for r in self._cur.execute(
            "SELECT item FROM _world_changelog ORDER BY seq").fetchall()]

    def removed_services(self) -> set[tuple[str, str]]:
        """(platform, service) pairs this world version no longer serves."""
        return {(c["platform"], c["service"]) for c in self.changelog() if c["kind"] == "service_removed"}
