"""Build the sandbox world into one DuckDB file, cached by (seed, version, scale).

Usage::

    path = ensure_world(data_dir, seed=20260901, version="v1")   # builds once, then reuses
    world = World.open(path)

The build runs every domain generator in a fixed order against one ``BuildContext``; world v2
then applies the drift in ``drift.py``. The file is written under a temporary name and renamed
into place, behind a file lock, so a crashed or concurrent build never leaves a half world.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import duckdb

from ..versions import DEFAULT_SEED, WORLD_VERSIONS
from . import district, drift, education, finance, law, politics, traffic
from .context import BuildContext
from .row_json import write_row_json


def _generator_fingerprint() -> str:
    """Hash of the generator sources: a changed generator never reuses a stale cached world."""
    digest = hashlib.sha256()
    for source in sorted(Path(__file__).parent.rglob("*.py")):
        digest.update(str(source.relative_to(Path(__file__).parent)).encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()[:12]


GENERATOR_VERSION = _generator_fingerprint()

# Order matters only for cross-domain reads (ctx.table): each domain may read earlier ones.
DOMAIN_BUILDERS: tuple[tuple[str, Callable[[BuildContext], None]], ...] = (
    ("finance", finance.build),
    ("traffic", traffic.build),
    ("education", education.build),
    ("law", law.build),
    ("politics", politics.build),
    ("district", district.build),
)


class WorldBuildError(RuntimeError):
    """The world could not be built (bad version, generator fault, disk problem)."""


def world_filename(seed: int, version: str, scale: float) -> str:
    scale_tag = "full" if scale == 1.0 else f"x{scale:g}"
    return f"world-{version}-s{seed}-{scale_tag}-g{GENERATOR_VERSION}.duckdb"


def generate(seed: int, version: str, scale: float = 1.0) -> tuple[BuildContext, list[dict]]:
    """Run the generators in memory; returns the context and the drift changelog (v2 only)."""
    if version not in WORLD_VERSIONS:
        raise WorldBuildError(f"unknown world version {version!r}; choose one of {', '.join(WORLD_VERSIONS)}")
    ctx = BuildContext(seed=seed, version=version, scale=scale)
    for _name, build in DOMAIN_BUILDERS:
        build(ctx)
    changelog = drift.apply_v2(ctx) if version == "v2" else []
    return ctx, changelog


def write_duckdb(ctx: BuildContext, changelog: list[dict], path: Path) -> str:
    """Write the tables to ``path`` and return the world's content hash."""
    con = duckdb.connect(str(path))
    try:
        table_hashes = []
        for name in sorted(ctx.tables):
            tdef = ctx.tables[name]
            con.register("_src", tdef.data)
            order = f" ORDER BY {', '.join(_order_term(c) for c in tdef.sort_by)}" if tdef.sort_by else ""
            con.execute(f"CREATE TABLE {_q(name)} AS SELECT * FROM _src{order}")
            con.unregister("_src")
            for cols in tdef.indexes:
                idx = f"idx_{name}_{'_'.join(cols)}"
                con.execute(f"CREATE INDEX {_q(idx)} ON {_q(name)} ({', '.join(_q(c) for c in cols)})")
            table_hashes.append((name, _table_digest(con, name)))
            write_row_json(con, name)
        content_hash = hashlib.sha256(json.dumps(table_hashes).encode()).hexdigest()
        con.execute("CREATE TABLE _world_tables (name VARCHAR, rows BIGINT, description VARCHAR, digest VARCHAR, "
                    "key JSON, sort_by JSON)")
        _insert(con, "_world_tables", [(n, ctx.tables[n].data.num_rows, ctx.tables[n].description, d,
                                        json.dumps(list(ctx.tables[n].key)), json.dumps(list(ctx.tables[n].sort_by)))
                                       for n, d in table_hashes])
        con.execute("CREATE TABLE _world_changelog (seq INTEGER, item JSON)")
        _insert(con, "_world_changelog", [(i, json.dumps(item, ensure_ascii=False)) for i, item in enumerate(changelog)])
        meta = {"seed": str(ctx.seed), "version": ctx.version, "scale": f"{ctx.scale:g}",
                "generator_version": GENERATOR_VERSION, "content_hash": content_hash,
                "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        con.execute("CREATE TABLE _world_meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
        con.executemany("INSERT INTO _world_meta VALUES (?, ?)", list(meta.items()))
        con.execute("CHECKPOINT")
        return content_hash
    finally:
        con.close()


def ensure_world(data_dir: Path | str, seed: int = DEFAULT_SEED, version: str = "v1",
                 scale: float = 1.0, log: Callable[[str], None] | None = None) -> Path:
    """Return the path of the cached world file, building it first if it does not exist."""
    if version not in WORLD_VERSIONS:
        raise WorldBuildError(f"unknown world version {version!r}; choose one of {', '.join(WORLD_VERSIONS)}")
    if not 0 < scale <= 1:
        raise WorldBuildError(f"world scale must be in (0, 1], got {scale}")
    worlds = Path(data_dir) / "worlds"
    worlds.mkdir(parents=True, exist_ok=True)
    target = worlds / world_filename(seed, version, scale)
    if target.exists():
        return target
    with open(worlds / (target.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second builder waits, then finds the file
        if target.exists():
            return target
        started = time.perf_counter()
        if log:
            log(f"building sandbox world {version} (seed {seed}, scale {scale:g}) into {target}")
        ctx, changelog = generate(seed, version, scale)
        tmp = target.with_name(target.name + f".tmp-{os.getpid()}")
        tmp.unlink(missing_ok=True)
        try:
            write_duckdb(ctx, changelog, tmp)
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        if log:
            log(f"world built in {time.perf_counter() - started:.1f} s")
        _drop_stale(target)
    return target


def _drop_stale(current: Path) -> None:
    """Delete the same world built by earlier generator versions: nothing opens them again, and
    each is up to ~1.5 GiB. (A process still reading one keeps its open file until it closes it.)"""
    stem = current.name.rsplit("-g", 1)[0]  # world-v1-s20260901-full
    for old in current.parent.glob(f"{stem}-g*.duckdb"):
        if old != current and not old.name.endswith(".lock"):
            old.unlink(missing_ok=True)
            old.with_name(old.name + ".lock").unlink(missing_ok=True)


def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple]) -> None:
    if rows:
        marks = ", ".join("?" * len(rows[0]))
        con.executemany(f"INSERT INTO {_q(table)} VALUES ({marks})", rows)


def _table_digest(con: duckdb.DuckDBPyConnection, name: str) -> str:
    # Order-independent digest of the content: row count, xor and sum of row hashes, schema.
    count, xor, total = con.execute(
        f"SELECT count(*), bit_xor(hash(t)), sum(hash(t) % 1000000007) FROM {_q(name)} t").fetchall()[0]
    schema = con.execute("SELECT string_agg(column_name || ':' || data_type, ',' ORDER BY ordinal_position) "
                         "FROM information_schema.columns WHERE table_name = ?", [name]).fetchall()[0][0]
    return f"{count}:{xor}:{total}:{hashlib.sha256(schema.encode()).hexdigest()[:16]}"


def _order_term(term: str) -> str:
    """A sort_by entry is a column name, optionally followed by DESC."""
    column, _, direction = term.partition(" ")
    return _q(column) + (" DESC" if direction.strip().upper() == "DESC" else "")


def _q(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'
