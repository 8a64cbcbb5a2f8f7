"""The tool catalog a bundle was recorded with, pinned in the bundle, and what changed since.

    pin = CatalogPin.build({"find_dart_corp_code": {"description": "...", "input_schema": {...},
                                                    "output_schema": {...}}, ...})
    recording = store.recording("kopa-bench", catalog=pin)      # sealed as the part catalog.json.zst
    diff = diff_catalogs(bundle.catalog_pin(), running_pin)       # None: the bundle pins no catalog
    if diff: print(diff.message("kopa-default@3301bc57"))

A model sees a tool's name, description and schemas; a tool renamed, a parameter added or a description
changed changes what it does and what it scores, so "bundle + seed" reproduces a figure only with the
catalog pinned too. The pin is plain data (the recorder knows nothing of the gateway's catalog):
per tool its description, input schema and output schema, and ``version``, the SHA-256 of all of it.
It is a part of the version folder, so its hash is in the manifest, the version id covers it and a
signature over the manifest covers it; the manifest also names the pinned catalog version.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pyarrow as pa

PIN_FORMAT = "kopa-catalog/1"
CATALOG_PART = "catalog.json.zst"
_LENGTH = struct.Struct(">Q")
_ZSTD_LEVEL = 3  # the pin is written at every commit: the fast end of zstd (~80 KB for 2,400 tools)


class CatalogMismatchError(RuntimeError):
    """Replay against a catalog other than the bundle's, where a strict catalog was asked for."""


def _canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


@dataclass(frozen=True)
class CatalogPin:
    """A catalog as a model sees it: tool name → description, input schema, output schema; and its version."""

    version: str
    tools: Mapping[str, Mapping[str, Any]] = field(repr=False)

    @classmethod
    def build(cls, tools: Mapping[str, Mapping[str, Any]]) -> CatalogPin:
        """The pin of ``tools`` (each: ``description``, ``input_schema``, ``output_schema``); its version computed."""
        tools = {name: {"description": t.get("description"), "input_schema": t.get("input_schema"),
                        "output_schema": t.get("output_schema")} for name, t in tools.items()}
        version = hashlib.sha256(_canonical({"format": PIN_FORMAT, "tools": tools})).hexdigest()[:20]
        return cls(version, tools)

    def summary(self) -> dict[str, Any]:
        """What the manifest says of the pin."""
        return {"format": PIN_FORMAT, "version": self.version, "tools": len(self.tools)}

    def to_bytes(self) -> bytes:
        """The part's bytes: the canonical JSON's length (8 bytes, big-endian), then the JSON zstd-compressed."""
        return self._bytes

    @cached_property
    def _bytes(self) -> bytes:  # written at every commit of a long-running recorder: made once
        raw = _canonical({"format": PIN_FORMAT, "version": self.version, "tools": self.tools})
        return _LENGTH.pack(len(raw)) + pa.Codec("zstd", compression_level=_ZSTD_LEVEL).compress(raw, asbytes=True)

    @classmethod
    def from_bytes(cls, data: bytes, *, where: str = "catalog pin") -> CatalogPin:
        """Raises ValueError naming ``where`` when the bytes are not a pin (or its version does not match it)."""
        try:
            (size,) = _LENGTH.unpack_from(data)
            raw = pa.Codec("zstd").decompress(data[_LENGTH.size:], decompressed_size=size, asbytes=True)
            doc = json.loads(raw)
            if doc.get("format") != PIN_FORMAT:
                raise ValueError(f"format {doc.get('format')!r}, this recorder reads {PIN_FORMAT!r}")
            pin = cls.build(doc["tools"])
        except (ValueError, KeyError, TypeError, AttributeError, struct.error, pa.ArrowException) as exc:
            raise ValueError(f"{where}: not a catalog pin ({exc})") from None
        if pin.version != doc.get("version"):
            raise ValueError(f"{where}: says catalog version {doc.get('version')}, its tools hash to {pin.version}")
        return pin


@dataclass(frozen=True)
class ToolChange:
    tool: str
    changes: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.tool} ({'; '.join(self.changes)})"


@dataclass(frozen=True)
class CatalogDiff:
    """Tools added, removed and changed from the recorded catalog to the running one (empty: the same)."""

    recorded: str
    running: str
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[ToolChange, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed) or self.recorded != self.running

    def as_json(self) -> dict[str, Any]:
        return {"recorded": self.recorded, "running": self.running, "added": list(self.added),
                "removed": list(self.removed),
                "changed": [{"tool": c.tool, "changes": list(c.changes)} for c in self.changed]}

    def lines(self, limit: int = 20) -> list[str]:
        out = []
        for label, items in (("added", self.added), ("removed", self.removed), ("changed", self.changed)):
            if items:
                shown = ", ".join(str(i) for i in items[:limit])
                more = f", and {len(items) - limit:,} more" if len(items) > limit else ""
                out.append(f"{len(items):,} tool(s) {label}: {shown}{more}")
        return out

    def message(self, bundle: str) -> str:
        """One warning: which bundle, which catalogs, and every change (the first 20 of each kind)."""
        detail = "; ".join(self.lines()) or "the same tools, hashed differently"
        return (f"bundle {bundle} was recorded with tool catalog {self.recorded}, this gateway serves catalog "
                f"{self.running}: {detail}. Replayed responses still match their requests, but the model sees "
                f"other tools than at recording; re-record the bundle, or run the catalog it pins "
                f"(--strict-catalog refuses to start on a difference)")


def diff_catalogs(recorded: CatalogPin, running: CatalogPin) -> CatalogDiff:
    """What changed from ``recorded`` to ``running``, tool by tool."""
    if recorded.version == running.version:
        return CatalogDiff(recorded.version, running.version)
    old, new = recorded.tools, running.tools
    changed = []
    for name in sorted(old.keys() & new.keys()):
        if old[name] != new[name]:
            changed.append(ToolChange(name, tuple(tool_changes(old[name], new[name])) or ("changed",)))
    return CatalogDiff(recorded.version, running.version, tuple(sorted(new.keys() - old.keys())),
                       tuple(sorted(old.keys() - new.keys())), tuple(changed))


def tool_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """How one tool changed: parameters added, removed, renamed, retyped; output fields; description."""
    out: list[str] = []
    if old.get("description") != new.get("description"):
        out.append("description changed")
    out += _properties_changes("parameter", old.get("input_schema"), new.get("input_schema"))
    old_in, new_in = old.get("input_schema") or {}, new.get("input_schema") or {}
    # a renamed parameter's requiredness moves with it: only a change beyond the renames is reported
    renames = dict(r for r in _renames(_props(old_in), _props(new_in)))
    was = sorted(renames.get(n, n) for n in old_in.get("required", []))
    now = sorted(new_in.get("required", []))
    if was != now:
        out.append(f"required parameters {', '.join(was) or 'none'} → {', '.join(now) or 'none'}")
    old_rec, new_rec = _records(old.get("output_schema")), _records(new.get("output_schema"))
    if old_rec is not None and new_rec is not None:
        out += _properties_changes("output field", old_rec, new_rec)
        if _strip(old.get("output_schema")) != _strip(new.get("output_schema")):
            out.append("output envelope changed")
    elif old.get("output_schema") != new.get("output_schema"):
        out.append("output schema changed")
    return out


def _props(schema: Any) -> dict[str, Any]:
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    return dict(props) if isinstance(props, Mapping) else {}


def _records(output: Any) -> dict[str, Any] | None:
    """The record schema inside a page envelope (``properties.records.items``), if the output has one."""
    items = _props(output).get("records", {})
    items = items.get("items") if isinstance(items, Mapping) else None
    return dict(items) if isinstance(items, Mapping) else None


def _strip(output: Any) -> Any:
    """The output schema less its record schema (the envelope)."""
    if not isinstance(output, Mapping):
        return output
    props = {k: v for k, v in _props(output).items() if k != "records"}
    return {**output, "properties": props}


def _type(prop: Any) -> Any:
    return prop.get("type") if isinstance(prop, Mapping) else None


def _renames(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, str]]:
    """(old name, new name) pairs: a property gone and one new with the same schema (else, one of each, the same
    type)."""
    removed = [n for n in old if n not in new]
    added = [n for n in new if n not in old]
    pairs = []
    for gone in list(removed):
        twin = next((n for n in added if new[n] == old[gone]), None)
        if twin is None and len(removed) == 1 and len(added) == 1 and _type(new[added[0]]) == _type(old[gone]):
            twin = added[0]
        if twin is not None:
            pairs.append((gone, twin))
            removed.remove(gone)
            added.remove(twin)
    return pairs


def _properties_changes(what: str, old_schema: Any, new_schema: Any) -> list[str]:
    old, new = _props(old_schema), _props(new_schema)
    removed = [n for n in old if n not in new]
    added = [n for n in new if n not in old]
    out: list[str] = []
    for gone, twin in _renames(old, new):
        out.append(f"{what} {gone!r} renamed to {twin!r}")
        removed.remove(gone)
        added.remove(twin)
    out += [f"{what} {n!r} added" for n in added] + [f"{what} {n!r} removed" for n in removed]
    for name in (n for n in old if n in new and old[n] != new[n]):
        a, b = old[name], new[name]
        if _type(a) != _type(b):
            out.append(f"{what} {name!r} type {_type(a)} → {_type(b)}")
        keys = sorted(k for k in set(a) | set(b) if k != "type" and a.get(k) != b.get(k)) \
            if isinstance(a, Mapping) and isinstance(b, Mapping) else []
        if keys:
            out.append(f"{what} {name!r} {', '.join(keys)} changed")
    return out
