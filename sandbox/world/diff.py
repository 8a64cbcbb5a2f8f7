"""Compute what differs between two built world files, in the changelog's vocabulary.

Used to prove that world v2 differs from v1 exactly as its changelog says (and nothing else),
and by operators to inspect a world upgrade. Records are matched on each table's key
(``TableDef.key``, stored in ``_world_tables``); a column that disappears while another with
identical values appears is reported as a rename, not as a removal plus an addition.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _columns(con: duckdb.DuckDBPyConnection, db: str, table: str) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_catalog = ? AND table_name = ? "
        "ORDER BY ordinal_position", [db, table]).fetchall()]


def diff_worlds(old_path: Path | str, new_path: Path | str, *, max_items: int = 100_000) -> list[dict[str, Any]]:
    """Every table-level and record-level difference from ``old_path`` to ``new_path``."""
    con = duckdb.connect()
    con.execute(f"ATTACH '{old_path}' AS a (READ_ONLY)")
    con.execute(f"ATTACH '{new_path}' AS b (READ_ONLY)")
    try:
        keys = {name: json.loads(key) for name, key in con.execute("SELECT name, key FROM a._world_tables").fetchall()}
        old_tables = set(keys)
        new_tables = {r[0] for r in con.execute("SELECT name FROM b._world_tables").fetchall()}
        items: list[dict[str, Any]] = []
        items += [{"kind": "table_removed", "table": t} for t in sorted(old_tables - new_tables)]
        items += [{"kind": "table_added", "table": t} for t in sorted(new_tables - old_tables)]
        for table in sorted(old_tables & new_tables):
            items += _diff_table(con, table, keys[table], max_items)
        return items
    finally:
        con.close()


def _diff_table(con: duckdb.DuckDBPyConnection, table: str, key: list[str], max_items: int) -> list[dict[str, Any]]:
    old_cols, new_cols = _columns(con, "a", table), _columns(con, "b", table)
    removed = [c for c in old_cols if c not in new_cols]
    added = [c for c in new_cols if c not in old_cols]
    ta, tb = f"a.{_q(table)}", f"b.{_q(table)}"
    items: list[dict[str, Any]] = []
    if not key:  # no record identity: compare as multisets
        common = [c for c in old_cols if c in new_cols]
        cols = ", ".join(_q(c) for c in common)
        gone = con.execute(f"SELECT count(*) FROM (SELECT {cols} FROM {ta} EXCEPT ALL SELECT {cols} FROM {tb})").fetchone()[0]
        new = con.execute(f"SELECT count(*) FROM (SELECT {cols} FROM {tb} EXCEPT ALL SELECT {cols} FROM {ta})").fetchone()[0]
        if gone or new:
            items.append({"kind": "rows_differ", "table": table, "removed": gone, "added": new})
        return items
    on = " AND ".join(f"x.{_q(k)} = y.{_q(k)}" for k in key)
    renames: dict[str, str] = {}
    for old in removed:
        for new in added:
            if new in renames.values():
                continue
            differing = con.execute(f"SELECT count(*) FROM {ta} x JOIN {tb} y ON {on} "
                                    f"WHERE x.{_q(old)} IS DISTINCT FROM y.{_q(new)}").fetchone()[0]
            if differing == 0:
                renames[old] = new
                break
    for old, new in renames.items():
        items.append({"kind": "field_renamed", "table": table, "old": old, "new": new})
    items += [{"kind": "field_removed", "table": table, "field": c} for c in removed if c not in renames]
    items += [{"kind": "field_added", "table": table, "field": c} for c in added if c not in renames.values()]
    key_cols = ", ".join(_q(k) for k in key)
    for kind, left, right in (("record_added", tb, ta), ("record_removed", ta, tb)):
        rows = con.execute(f"SELECT {key_cols} FROM {left} EXCEPT SELECT {key_cols} FROM {right} "
                           f"ORDER BY ALL LIMIT {max_items}").fetchall()
        items += [{"kind": kind, "table": table, "key": dict(zip(key, map(_plain, r)))} for r in rows]
    for col in old_cols:
        if col in key or col in removed:
            continue
        new_col = col
        rows = con.execute(f"SELECT {', '.join('x.' + _q(k) for k in key)}, x.{_q(col)}, y.{_q(new_col)} "
                           f"FROM {ta} x JOIN {tb} y ON {on} WHERE x.{_q(col)} IS DISTINCT FROM y.{_q(new_col)} "
                           f"ORDER BY ALL LIMIT {max_items}").fetchall()
        for r in rows:
            items.append({"kind": "record_changed", "table": table, "key": dict(zip(key, map(_plain, r[:-2]))),
                          "field": col, "old": _plain(r[-2]), "new": _plain(r[-1])})
    return items


def _plain(value: Any) -> Any:
    """JSON-comparable form of a DuckDB value (numbers stay numbers)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
