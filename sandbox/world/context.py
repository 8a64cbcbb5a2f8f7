"""BuildContext: what a domain generator gets to build its part of the world.

A domain module exposes ``build(ctx: BuildContext) -> None``. It draws randomness only from
``ctx.rng(name)``, sizes its tables with ``ctx.n(full_size)`` and hands finished tables to
``ctx.add_table``. Tables of earlier domains can be read back with ``ctx.table`` so that
entities stay consistent across platforms.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa


@dataclass
class TableDef:
    """A finished table plus how it should be stored for fast, scan-free lookups."""

    name: str
    data: pa.Table
    sort_by: tuple[str, ...] = ()  # physical order ("col" or "col DESC"); zone maps prune on these
    indexes: tuple[tuple[str, ...], ...] = ()  # ART indexes for point lookups
    description: str = ""
    key: tuple[str, ...] = ()  # columns identifying a record (drift reports diff on them)


@dataclass
class BuildContext:
    """Seeded state shared by the domain generators of one world build."""

    seed: int
    version: str
    scale: float = 1.0
    tables: dict[str, TableDef] = field(default_factory=dict)

    def rng(self, name: str) -> np.random.Generator:
        """A generator seeded from (seed, name): independent of build order and of other domains."""
        digest = hashlib.sha256(f"{self.seed}:{name}".encode()).digest()
        return np.random.default_rng(int.from_bytes(digest[:8], "little"))

    def n(self, full: int, minimum: int = 1) -> int:
        """Scale a full-world row count (tests build small worlds with scale < 1)."""
        return max(minimum, int(round(full * self.scale)))

    def add_table(self, name: str, data: pa.Table | Mapping[str, Any], *,
                  sort_by: Sequence[str] = (), indexes: Sequence[Sequence[str]] = (),
                  description: str = "", key: Sequence[str] = ()) -> None:
        """Register a finished table. Names must be unique across the whole world.

        ``key`` names the columns that identify a record; world drift is diffed on it.
        """
        if name in self.tables:
            raise ValueError(f"world table {name!r} is defined twice")
        table = data if isinstance(data, pa.Table) else pa.table(dict(data))
        sort_columns = [term.split(" ")[0] for term in sort_by]  # a term may end in " DESC"
        for col in sort_columns + list(key) + [c for idx in indexes for c in idx]:
            if col not in table.column_names:
                raise ValueError(f"world table {name!r}: sort/index column {col!r} does not exist")
        self.tables[name] = TableDef(name, table, tuple(sort_by),
                                     tuple(tuple(i) for i in indexes), description, tuple(key))

    def table(self, name: str) -> pa.Table:
        """Read back a table an earlier domain added."""
        try:
            return self.tables[name].data
        except KeyError:
            raise KeyError(f"world table {name!r} has not been built yet; "
                           f"built so far: {sorted(self.tables)}") from None

    def replace_table(self, name: str, data: pa.Table) -> None:
        """Swap a table's content, keeping its storage hints (used by world-version drift)."""
        old = self.tables[name]
        self.tables[name] = TableDef(name, data, tuple(c for c in old.sort_by if c.split(" ")[0] in data.column_names),
                                     tuple(i for i in old.indexes if all(c in data.column_names for c in i)),
                                     old.description, old.key)
