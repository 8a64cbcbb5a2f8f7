"""Queries in a recording: pages grouped by their paging-free fingerprint, read as one whole result."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import unquote

from ..cassette.bundle import Bundle
from ..cassette.interaction import Interaction
from ..fingerprint import QUERY_PAGING, SEOUL
from .report import Parsed, Reader


@dataclass(frozen=True)
class Row:
    """One recorded request, its body loaded only when its query is compared."""

    fingerprint: str
    query_fingerprint: str | None
    page: int | None
    size: int | None
    url: str
    platform: str
    tool: str | None
    load: Callable[[], Interaction]


@dataclass(frozen=True)
class Query:
    id: str  # query fingerprint (paged) or fingerprint
    rows: tuple[Row, ...]  # the pages in order (one row when not paged)

    @property
    def first(self) -> Row:
        return self.rows[0]

    @property
    def url(self) -> str:
        row = self.first
        return query_url(row.url, row.platform) if row.page is not None else row.url

    def describe(self) -> dict[str, Any]:
        return {"platform": self.first.platform, "tool": self.first.tool, "url": self.url, "fingerprint": self.id}


Source = Bundle | Iterable[Interaction]


def _rows(source: Source) -> list[Row]:
    if isinstance(source, Bundle):
        cols = {n: source.column(n) for n in ("fingerprint", "query_fingerprint", "page", "size", "url", "platform",
                                              "tool", "method", "recorded_at", "source")}
        return [Row(fp, cols["query_fingerprint"][i], cols["page"][i], cols["size"][i], cols["url"][i],
                     cols["platform"][i], cols["tool"][i], lambda i=i: _load(source, cols, i))
                for i, fp in enumerate(cols["fingerprint"])]
    return [Row(i.fingerprint, i.query_fingerprint, i.page, i.size, i.url, i.platform, i.tool, lambda i=i: i)
            for i in source]


def _load(bundle: Bundle, cols: dict[str, list[Any]], row: int) -> Interaction:
    recorded = bundle.response(row)
    return Interaction(fingerprint=cols["fingerprint"][row], method=cols["method"][row], url=cols["url"][row],
                       platform=cols["platform"][row], status=recorded.status, body=recorded.body,
                       headers=tuple(tuple(h) for h in recorded.headers), query_fingerprint=cols["query_fingerprint"][row],
                       page=cols["page"][row], size=cols["size"][row], tool=cols["tool"][row],
                       recorded_at=cols["recorded_at"][row], source=cols["source"][row])


def queries(source: Source) -> dict[str, Query]:
    """The source's queries by id. A request recorded more than once counts as its last answer."""
    last: dict[str, Row] = {}
    for row in _rows(source):
        last.pop(row.fingerprint, None)
        last[row.fingerprint] = row
    pages: dict[str, dict[int, dict[int, Row]]] = defaultdict(lambda: defaultdict(dict))
    out: dict[str, Query] = {}
    for row in last.values():
        if row.query_fingerprint and row.page is not None and row.size is not None:
            pages[row.query_fingerprint][row.size][row.page] = row
        else:
            out[row.fingerprint] = Query(row.fingerprint, (row,))
    for qfp, sizes in pages.items():
        largest = sizes[max(sizes)]
        out[qfp] = Query(qfp, tuple(largest[p] for p in sorted(largest)))
    return out


def read_query(query: Query, reader: Reader) -> Parsed:
    """The query's whole result: its pages read and concatenated, its total and outcome the first page's.

    A later page that failed adds nothing: past the end that is the platform's way to say so,
    and short of it the result comes out incomplete (fewer records than its total)."""
    first = reader(query.rows[0].load())
    if not first.ok:
        return first
    records = list(first.records)
    for row in query.rows[1:]:
        page = reader(row.load())
        if page.ok:
            records += page.records
    return replace(first, records=records)


def query_url(url: str, platform: str) -> str:
    """A canonical URL without its paging (``pIndex``/``pSize``…, or Seoul's START/END)."""
    label, _, rest = url.partition(":")
    path, _, query = rest.partition("?")
    if platform == SEOUL:
        parts = path.split("/")
        if len(parts) >= 6:
            parts[4:6] = ["{START}", "{END}"]
        path = "/".join(parts)
    paging = QUERY_PAGING.get(platform, ())
    kept = [p for p in query.split("&") if p and unquote(p.partition("=")[0]) not in paging]
    return f"{label}:{path}" + (f"?{'&'.join(kept)}" if kept else "")


def page_url(url: str, platform: str, page: int, size: int) -> str:
    """The canonical URL of another page of the same query."""
    label, _, rest = url.partition(":")
    path, _, query = rest.partition("?")
    if platform == SEOUL:
        parts = path.split("/")
        parts[4:6] = [str((page - 1) * size + 1), str(page * size)]
        return f"{label}:{'/'.join(parts)}" + (f"?{query}" if query else "")
    number, size_name = QUERY_PAGING[platform]
    values = {number: str(page), size_name: str(size)}
    items = []
    for item in query.split("&") if query else ():
        name = item.partition("=")[0]
        items.append(f"{name}={values[unquote(name)]}" if unquote(name) in values else item)
    return f"{label}:{path}?{'&'.join(items)}"
