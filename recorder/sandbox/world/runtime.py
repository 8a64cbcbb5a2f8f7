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

DEEP_OFFSET = 1000  # from this offset on, pages are fetched in two phases (see World.page)


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
        self._count = lru_cache(maxsize=8192)(self._count_uncached)

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
             offset: int, limit: int, columns: str = "*") -> tuple[int, list[dict[str, Any]]]:
        """Total count and one page of ``table`` filtered by ``where`` (SQL with ? placeholders)."""
        clause = f" WHERE {where}" if where else ""
        physical = self._physical_order.get(table) == _norm_order(order_by)
        if not where and physical:
            # Deep pages of big tables: a rowid range reads one row group instead of skipping rows.
            total = self._rows[table]
            if offset >= total or limit <= 0:
                return total, []
            return total, self.rows(f'SELECT {columns} FROM "{table}" WHERE rowid >= ? AND rowid < ? ORDER BY rowid',
                                    [offset, offset + limit])
        total = self._count(f'SELECT count(*) FROM "{table}"{clause}', tuple(params))
        if total == 0 or offset >= total or limit <= 0:
            return total, []
        # Asked for the physical order: DuckDB keeps insertion order without ORDER BY, so the page
        # streams off the filtered scan instead of sorting every matching row first.
        order = "" if physical else f" ORDER BY {order_by}"
        if offset < DEEP_OFFSET:
            return total, self.rows(f'SELECT {columns} FROM "{table}"{clause}{order} LIMIT ? OFFSET ?',
                                    [*params, limit, offset])
        # Deep page: skip rows reading only the filter and order columns, then fetch the page's
        # full rows by rowid (wide rows make skipping them the expensive part).
        ids = [r[0] for r in self._cur.execute(f'SELECT rowid FROM "{table}"{clause}{order} LIMIT ? OFFSET ?',
                                               [*params, limit, offset]).fetchall()]
        if not ids:
            return total, []
        if physical:  # the page is every matching row between its first and last rowid
            extra = f" AND ({where})" if where else ""
            return total, self.rows(f'SELECT {columns} FROM "{table}" WHERE rowid BETWEEN ? AND ?{extra} '
                                    f'ORDER BY rowid', [ids[0], ids[-1], *params])
        fetched = self.rows(f'SELECT rowid AS "__rowid", {columns} FROM "{table}" WHERE rowid = ANY(?)', [ids])
        by_id = {r.pop("__rowid"): r for r in fetched}
        return total, [by_id[i] for i in ids]

    def count(self, table: str, where: str = "", params: Sequence[Any] = ()) -> int:
        clause = f" WHERE {where}" if where else ""
        return self._count(f'SELECT count(*) FROM "{table}"{clause}', tuple(params))

    def _count_uncached(self, sql: str, params: tuple[Any, ...]) -> int:
        return int(self._cur.execute(sql, list(params)).fetchall()[0][0])

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
