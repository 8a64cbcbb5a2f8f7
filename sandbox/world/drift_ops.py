"""Drift operations: change a built world the way live services drift, logging each change.

Every operation edits ``ctx`` tables in place (vectorised with pyarrow) and appends changelog
items in the vocabulary of ``diff.diff_worlds`` plus the platform and service a client sees:

    record_added    {table, key}                      a new record
    record_changed  {table, key, field, old, new}     one field of one record
    field_renamed   {table, old, new}                 a response field under a new name
    field_added     {table, field}                    a new response field
    service_removed {service}                         the endpoint answers "no such service"
    code_changed    {table, field, old, new, records} a code table change: records carrying
                                                      ``old`` now carry one of ``new``
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .context import BuildContext


class Drift:
    """Collects the changes of one world upgrade."""

    def __init__(self, ctx: BuildContext):
        self.ctx = ctx
        self.items: list[dict[str, Any]] = []

    def _log(self, kind: str, platform: str, service: str, **fields: Any) -> None:
        self.items.append({"kind": kind, "platform": platform, "service": service, **fields})

    def _key(self, table: str) -> tuple[str, ...]:
        key = self.ctx.tables[table].key
        if not key:
            raise ValueError(f"world table {table!r} has no key; drift needs one to name records")
        return key

    def add_records(self, table: str, rows: pa.Table, *, platform: str, service: str) -> None:
        """Append ``rows`` (same columns as the table) as new records."""
        current = self.ctx.table(table)
        rows = rows.select(current.column_names).cast(current.schema)
        self.ctx.replace_table(table, pa.concat_tables([current, rows]))
        key = self._key(table)
        for rec in rows.select(list(key)).to_pylist():
            self._log("record_added", platform, service, table=table, key=rec)

    def change_records(self, table: str, changes: Sequence[tuple[dict[str, Any], str, Any]], *,
                       platform: str, service: str) -> None:
        """Set ``field`` to a new value on the records named by each ``key`` dict."""
        data = self.ctx.table(table)
        key = self._key(table)
        for rec_key, field, new in changes:
            if set(rec_key) != set(key):
                raise ValueError(f"{table}: key {rec_key} does not name the key columns {key}")
            mask = None
            for col, value in rec_key.items():
                eq = pc.equal(data[col], pa.scalar(value, data.schema.field(col).type))
                mask = eq if mask is None else pc.and_(mask, eq)
            hits = np.flatnonzero(mask.to_numpy(zero_copy_only=False))
            if len(hits) != 1:
                raise ValueError(f"{table}: key {rec_key} matches {len(hits)} records, expected 1")
            old = data[field][int(hits[0])].as_py()
            col_type = data.schema.field(field).type
            column = pc.replace_with_mask(data[field].combine_chunks(), mask.combine_chunks()
                                          if isinstance(mask, pa.ChunkedArray) else mask,
                                          pa.array([new], col_type))
            data = data.set_column(data.schema.get_field_index(field), field, column)
            self._log("record_changed", platform, service, table=table, key=rec_key, field=field, old=old, new=new)
        self.ctx.replace_table(table, data)

    def rename_field(self, table: str, old: str, new: str, *, platform: str, service: str) -> None:
        data = self.ctx.table(table)
        names = [new if c == old else c for c in data.column_names]
        if old not in data.column_names:
            raise ValueError(f"{table} has no field {old!r}")
        self.ctx.replace_table(table, data.rename_columns(names))
        self._log("field_renamed", platform, service, table=table, old=old, new=new)

    def add_field(self, table: str, field: str, values: pa.Array, *, platform: str, service: str) -> None:
        data = self.ctx.table(table)
        self.ctx.replace_table(table, data.append_column(field, values))
        self._log("field_added", platform, service, table=table, field=field)

    def remove_service(self, *, platform: str, service: str) -> None:
        self._log("service_removed", platform, service)

    def change_code(self, table: str, field: str, old: str, new: Sequence[str], rng: np.random.Generator, *,
                    platform: str, service: str) -> None:
        """Records with ``field == old`` get one of ``new`` (a code split, e.g. a city into districts)."""
        data = self.ctx.table(table)
        column = data[field].combine_chunks()
        mask = pc.equal(column, pa.scalar(old, column.type)).to_numpy(zero_copy_only=False)
        count = int(mask.sum())
        replacement = pa.array(np.asarray(new, dtype=object)[rng.integers(0, len(new), count)].tolist(), column.type)
        updated = pc.replace_with_mask(column, pa.array(mask), replacement)
        self.ctx.replace_table(table, data.set_column(data.schema.get_field_index(field), field, updated))
        self._log("code_changed", platform, service, table=table, field=field, old=old, new=list(new), records=count)
