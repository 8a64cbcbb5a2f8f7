"""SQL over cassette bundles (DuckDB), and what a bundle or a replay run covers.

    columns, rows = query([store.open("kopa")], "SELECT tool, count(*) FROM interactions GROUP BY tool")

Views:

* ``interactions``: every bundle's ``interactions.parquet`` read in place, one row per
  interaction, with ``bundle`` (the given name, or the bundle's own) and ``version`` first;
* ``responses``: the same plus ``body``, the response body as text (decoded only for the rows
  a query reads: the body column is computed by the ``body(bundle, version, seq)`` function,
  which is callable directly too).

Bodies stay in ``bodies.bin`` (or its compressed form); nothing is loaded before a query asks for it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, unquote

import duckdb
from duckdb.sqltypes import BIGINT, VARCHAR

from .cassette.bundle import INDEX, Bundle
from .drift import Reader, queries, query_url
from .fingerprint import QUERY_PAGING, SEOUL, is_secret_param
from .transport import ReplayStats

Named = Bundle | tuple[str, Bundle]


class QueryError(ValueError):
    """The SQL could not run; the message is DuckDB's."""


def connect(bundles: Sequence[Named]) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the ``interactions`` and ``responses`` views over ``bundles``."""
    if not bundles:
        raise ValueError("no bundles to query: give at least one")
    named: dict[tuple[str, str], Bundle] = {}
    for item in bundles:
        name, bundle = item if isinstance(item, tuple) else (item.manifest.name, item)
        if (name, bundle.version) in named:
            raise ValueError(f"bundle {name}@{bundle.version} given twice; name each one differently")
        named[(name, bundle.version)] = bundle
    con = duckdb.connect(":memory:")

    def body(bundle: str, version: str, seq: int) -> str | None:
        found = named.get((bundle, version))
        if found is None or not 0 <= seq < len(found):
            return None
        return found.response(seq).body.decode("utf-8", errors="replace")

    con.create_function("body", body, [VARCHAR, VARCHAR, BIGINT], VARCHAR)
    selects = [f"SELECT {_literal(name)} AS bundle, {_literal(version)} AS version, * "
               f"FROM read_parquet({_literal(str(bundle.folder / INDEX))})"
               for (name, version), bundle in named.items()]
    con.execute("CREATE VIEW interactions AS " + " UNION ALL BY NAME ".join(selects))
    con.execute("CREATE VIEW responses AS SELECT *, body(bundle, version, seq) AS body FROM interactions")
    return con


def query(bundles: Sequence[Named], sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run ``sql`` over ``bundles``: (column names, rows). Bad SQL raises ``QueryError`` with DuckDB's message."""
    try:
        con = connect(bundles)
    except duckdb.Error as exc:  # an index file unreadable
        raise QueryError(f"cannot read the bundles' index files: {exc}") from None
    try:
        cursor = con.execute(sql)
        if cursor.description is None:  # a statement without a result (CREATE, SET …)
            return [], []
        return [d[0] for d in cursor.description], cursor.fetchall()
    except duckdb.Error as exc:
        raise QueryError(f"query failed: {exc}") from None
    finally:
        con.close()


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# ---- coverage --------------------------------------------------------------------------------------


def coverage(bundle: Bundle, reader: Reader | None = None) -> dict[str, Any]:
    """What ``bundle`` holds: per tool its requests, queries, parameter values and (with ``reader``) outcomes."""
    cols = {n: bundle.column(n) for n in ("fingerprint", "url", "platform", "tool", "size")}
    tools: dict[str, dict[str, Any]] = {}
    params: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    sizes: dict[str, set[int]] = defaultdict(set)
    for fp, url, platform, tool, size in zip(cols["fingerprint"], cols["url"], cols["platform"], cols["tool"],
                                              cols["size"]):
        name = tool or "(none)"
        entry = tools.setdefault(name, {"platform": platform, "interactions": 0, "fingerprints": set()})
        entry["interactions"] += 1
        entry["fingerprints"].add(fp)
        for param, value in url_params(url, platform):
            params[name][param].add(value)
        if size is not None:
            sizes[name].add(size)
    per_query = Counter((q.first.tool or "(none)") for q in queries(bundle).values())
    outcomes: dict[str, Counter[str]] = defaultdict(Counter)
    if reader is not None:
        for item in bundle.interactions():
            outcomes[item.tool or "(none)"][reader(item).outcome] += 1
    for name, entry in tools.items():
        entry["fingerprints"] = len(entry["fingerprints"])
        entry["queries"] = per_query[name]
        entry["params"] = {p: sorted(v) for p, v in sorted(params[name].items())}
        entry["page_sizes"] = sorted(sizes[name])
        if reader is not None:
            entry["outcomes"] = dict(sorted(outcomes[name].items()))
    return {
        "bundle": f"{bundle.manifest.name}@{bundle.version}",
        "interactions": len(bundle), "fingerprints": bundle.fingerprints,
        "platforms": dict(sorted(Counter(cols["platform"]).items())),
        "tools": dict(sorted(tools.items())),
    }


def url_params(url: str, platform: str) -> list[tuple[str, str]]:
    """A canonical URL's parameters, less keys and paging; Seoul's optional path segments as ``path1``… by position."""
    path, _, text = url.partition(":")[2].partition("?")
    paging = QUERY_PAGING.get(platform, ())
    out = [(k, v) for k, v in parse_qsl(text, keep_blank_values=True) if not is_secret_param(k) and k not in paging]
    if platform == SEOUL:  # /KEY/type/SERVICE/START/END/optional… (positional; a skipped one is sent as " ")
        segments = [unquote(v) for v in path.split("/")[6:]]
        out += [(f"path{i}", v) for i, v in enumerate(segments, start=1) if v.strip()]
    return out


def replay_run_coverage(bundle: Bundle, stats: ReplayStats | Mapping[str, Any]) -> dict[str, Any]:
    """What a replay run (its transport's ``ReplayStats``, or their ``as_json()``) used of ``bundle``, and missed.

    A miss whose query has recorded pages (``query_recorded``) was likely served from them by
    paging-free replay; the others failed the call."""
    if not isinstance(stats, ReplayStats):
        stats = ReplayStats(Counter(stats.get("hits", {})), dict(stats.get("misses", {})), stats.get("recorded", 0))
    cols = {n: bundle.column(n) for n in ("fingerprint", "url", "platform", "tool")}
    meta = {fp: (url, platform, tool or "(none)") for fp, url, platform, tool in
            zip(cols["fingerprint"], cols["url"], cols["platform"], cols["tool"])}
    recorded_queries = {query_url(url, platform) for url, platform, _ in meta.values()}
    per_tool: dict[str, dict[str, int]] = defaultdict(lambda: {"recorded": 0, "hit": 0})
    for fp, (_, _, tool) in meta.items():
        per_tool[tool]["recorded"] += 1
        per_tool[tool]["hit"] += int(stats.hits.get(fp, 0) > 0)
    hit = [fp for fp in meta if stats.hits.get(fp, 0) > 0]
    misses = [{"fingerprint": fp, "url": url,
               "query_recorded": query_url(url, url.split(":", 1)[0].split(".")[0]) in recorded_queries}
              for fp, url in sorted(stats.misses.items(), key=lambda i: i[1])]
    return {
        "bundle": f"{bundle.manifest.name}@{bundle.version}",
        "recorded_fingerprints": len(meta), "hit_fingerprints": len(hit),
        "coverage": round(len(hit) / len(meta), 4) if meta else 0.0,
        "hits": sum(stats.hits.values()), "hits_by_fingerprint": dict(sorted(stats.hits.items())),
        "misses": misses, "recorded_in_run": stats.recorded,
        "unused": sorted(meta[fp][0] for fp in meta if stats.hits.get(fp, 0) == 0),
        "tools": {t: dict(v) for t, v in sorted(per_tool.items())},
    }


__all__ = ["QueryError", "connect", "coverage", "query", "replay_run_coverage", "url_params"]
