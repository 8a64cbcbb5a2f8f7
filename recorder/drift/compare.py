"""Comparing two recordings query by query: statuses, schemas, cardinalities and records."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..cassette.bundle import Bundle
from .queries import Query, Source, queries, read_query
from .records import infer_key, key_of, match_records, renames, schema
from .report import GONE_STATUSES, DriftEntry, DriftReport, Parsed, Reader, catalog_section, status_reader


def compare(old: Source, new: Source, reader: Reader = status_reader, *, old_label: str | None = None,
            new_label: str | None = None) -> DriftReport:
    """Drift from ``old`` to ``new``: two bundles, or a bundle and interactions (a live sample).

    Two bundles: the tool catalogs they pin are compared too (the report's ``catalog``), beside the data."""
    old_q, new_q = queries(old), queries(new)
    entries: list[DriftEntry] = []
    notes: list[dict[str, Any]] = []
    shared = sorted(old_q.keys() & new_q.keys(), key=lambda q: old_q[q].url)
    for qid in shared:
        found, note = compare_query(old_q[qid], new_q[qid], reader)
        entries += found
        if note:
            notes.append({**new_q[qid].describe(), "note": note})
    return DriftReport(
        old_label or _label(old), new_label or _label(new), len(shared), entries,
        [old_q[q].describe() for q in old_q.keys() - new_q.keys()],
        [new_q[q].describe() for q in new_q.keys() - old_q.keys()], notes,
        catalog_section(old.catalog_pin(), new.catalog_pin())
        if isinstance(old, Bundle) and isinstance(new, Bundle) else None)


def _label(source: Source) -> str:
    if isinstance(source, Bundle):
        return f"{source.manifest.name}@{source.version}"
    return "interactions"


def compare_query(old_query: Query, new_query: Query, reader: Reader) -> tuple[list[DriftEntry], str | None]:
    """The entries for one query recorded on both sides, and a note when records could not be compared."""
    old, new = read_query(old_query, reader), read_query(new_query, reader)
    row = new_query.first
    entry = _entry_factory(row.platform, row.tool or old_query.first.tool, new_query.url)
    status = _status_entry(old, new, entry)
    if status is not None or not (old.ok and new.ok):
        return [status] if status is not None else [], None
    out: list[DriftEntry] = []
    if old.count != new.count:
        out.append(entry("cardinality_changed", old=old.count, new=new.count))
    complete = all(p.total is None or len(p.records) >= p.total for p in (old, new))
    key = infer_key(old.records, new.records)
    pairs, removed, added = match_records(old.records, new.records, key) if complete else ([], [], [])
    old_schema, new_schema = schema(old.records), schema(new.records)
    renamed = renames(old_schema, new_schema, pairs) if old.records and new.records else {}
    if old.records and new.records:
        for name, kind in old_schema.items():
            if name not in new_schema and name not in renamed:
                out.append(entry("field_removed", field=name, type=kind))
        for name, kind in new_schema.items():
            if name not in old_schema and name not in renamed.values():
                out.append(entry("field_added", field=name, type=kind))
        for before, after in renamed.items():
            out.append(entry("field_renamed", old_field=before, new_field=after))
        for name, kind in old_schema.items():
            other = new_schema.get(name)
            if other is not None and kind != other and "null" not in (kind, other):
                out.append(entry("field_retyped", field=name, old_type=kind, new_type=other))
    if not complete:
        return out, (f"records not compared: a side holds fewer records than its total "
                     f"(OLD {len(old.records)} of {old.count}, NEW {len(new.records)} of {new.count})")
    out += [entry("record_removed", key=key_of(r, key), record=r) for r in removed]
    out += [entry("record_added", key=key_of(r, key), record=r) for r in added]
    common = [f for f in old_schema if f in new_schema]
    for before, after in pairs:
        for name in common:
            if before.get(name) != after.get(name):
                out.append(entry("record_changed", key=key_of(before, key), field=name,
                                 old=before.get(name), new=after.get(name)))
    return out, None


def _entry_factory(platform: str, tool: str | None, url: str) -> Callable[..., DriftEntry]:
    def make(kind: str, **detail: Any) -> DriftEntry:
        return DriftEntry(kind, platform, tool, url, detail)
    return make


def _status_entry(old: Parsed, new: Parsed, entry: Callable[..., DriftEntry]) -> DriftEntry | None:
    def brief(p: Parsed) -> dict[str, Any]:
        return {"status": p.status, "outcome": p.outcome, "code": p.code, "message": p.message}

    if old.ok and not new.ok:
        kind = "endpoint_gone" if new.unavailable or new.status in GONE_STATUSES else "status_changed"
        return entry(kind, old=brief(old), new=brief(new))
    if old.ok != new.ok or old.status != new.status or old.outcome != new.outcome:
        return entry("status_changed", old=brief(old), new=brief(new))
    # Both answered alike. A changed result code counts unless one side is empty: platforms
    # answer "no data" with a code of its own (INFO-200, 013, 03), which the total already shows.
    if old.code != new.code and (new.ok is False or (old.count and new.count)):
        return entry("status_changed", old=brief(old), new=brief(new))
    return None


