"""Records across two recordings: identity keys, matching, schemas and renames."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from .report import dumps_value


def infer_key(old: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]]) -> tuple[str, ...]:
    """The shortest leading run of fields (in record order) present in every record, unique on both sides.

    No run is unique when records repeat: then every shared field is the key, and repeats pair
    up in order."""
    sample = old[0] if old else new[0] if new else {}
    present = [f for f in sample if all(f in r for r in old) and all(f in r for r in new)]
    for n in range(1, len(present) + 1):
        fields = present[:n]
        if _unique(old, fields) and _unique(new, fields):
            return tuple(fields)
    return tuple(present)


def _unique(records: Sequence[dict[str, Any]], fields: Sequence[str]) -> bool:
    seen: set[tuple[Any, ...]] = set()
    for r in records:
        value = tuple(_hashable(r[f]) for f in fields)
        if value in seen:
            return False
        seen.add(value)
    return True


def _hashable(value: Any) -> Any:
    return dumps_value(value) if isinstance(value, dict | list) else value


def key_of(record: dict[str, Any], key: Sequence[str]) -> dict[str, Any]:
    return {f: record.get(f) for f in key}


def match_records(old: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]], key: Sequence[str]
                  ) -> tuple[list[tuple[dict[str, Any], dict[str, Any]]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(matched pairs, records only in OLD, records only in NEW) by ``key``; repeats pair up in order."""
    def index(records: Sequence[dict[str, Any]]) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
        out: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
        for r in records:
            out[tuple(_hashable(r.get(f)) for f in key)].append(r)
        return out

    old_index, new_index = index(old), index(new)
    pairs, removed, added = [], [], []
    for k, before in old_index.items():
        after = new_index.get(k, [])
        pairs += list(zip(before, after))
        removed += before[len(after):]
    for k, after in new_index.items():
        added += after[len(old_index.get(k, [])):]
    return pairs, removed, added


def schema(records: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Field → JSON type(s) seen ("string", "integer|string"; "null" when only nulls), in first-seen order."""
    types: dict[str, set[str]] = {}
    for r in records:
        for name, value in r.items():
            types.setdefault(name, set()).add(_json_type(value))
    return {name: "|".join(sorted(t - {"null"})) or "null" for name, t in types.items()}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def renames(old_schema: dict[str, str], new_schema: dict[str, str],
             pairs: Sequence[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, str]:
    """Removed field → added field whose values equal it record by record (over matched records)."""
    removed = [f for f in old_schema if f not in new_schema]
    added = [f for f in new_schema if f not in old_schema]
    renamed: dict[str, str] = {}
    if not pairs:
        return renamed
    for before in removed:
        if all(o.get(before) in (None, "") for o, _ in pairs):
            continue  # nothing to recognise it by
        for after in added:
            if after not in renamed.values() and all(o.get(before) == n.get(after) for o, n in pairs):
                renamed[before] = after
                break
    return renamed


