"""What a drift report holds and how it reads: parsed answers, entries, JSON and Markdown."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..cassette.interaction import Interaction
from ..catalog_pin import CatalogPin, diff_catalogs

KINDS = ("endpoint_gone", "status_changed", "field_removed", "field_added", "field_renamed", "field_retyped",
         "cardinality_changed", "record_added", "record_removed", "record_changed")
GONE_STATUSES = (404, 410)
MARKDOWN_ROWS = 50  # detail rows shown per query in markdown; the JSON holds every entry


@dataclass(frozen=True)
class Parsed:
    """One recorded response as a reader understood it."""

    status: int  # HTTP status
    ok: bool
    outcome: str  # "success" or the failure's name
    code: str | None = None  # the platform's own result code
    message: str | None = None
    records: list[dict[str, Any]] = field(default_factory=list)
    total: int | None = None  # records matching the query across all pages (None: not said)
    unavailable: bool = False  # the upstream says the endpoint or service is not there

    @property
    def count(self) -> int:
        return len(self.records) if self.total is None else self.total


Reader = Callable[[Interaction], Parsed]


def status_reader(interaction: Interaction) -> Parsed:
    """Outcome by HTTP status alone (no records): for interactions no platform parser knows."""
    status = interaction.status
    ok = 200 <= status < 300
    return Parsed(status, ok, "success" if ok else f"http_{status}", str(status), None, [], None,
                  status in GONE_STATUSES)




@dataclass(frozen=True)
class DriftEntry:
    kind: str
    platform: str
    tool: str | None
    url: str  # canonical, secrets masked; paging left out for a paged query
    detail: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "platform": self.platform, "tool": self.tool, "url": self.url, **self.detail}

    def sort_key(self) -> tuple[Any, ...]:
        return (self.platform, self.tool or "", self.url, KINDS.index(self.kind), dumps_value(self.detail.get("key")),
                dumps_value(self.detail))


@dataclass
class DriftReport:
    old: str  # what was compared: "name@version", or a description
    new: str
    compared: int  # queries present on both sides
    entries: list[DriftEntry]
    only_old: list[dict[str, Any]]  # queries recorded in OLD only: listed, not drift
    only_new: list[dict[str, Any]]
    notes: list[dict[str, Any]] = field(default_factory=list)  # what could not be compared, and why
    # the tool catalogs pinned on each side: {"old": version | None, "new": ..., "changes": CatalogDiff.as_json() |
    # None (a side pins none)}; None when nothing was compared (not two bundles, or a caller that does not say)
    catalog: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        self.sort()

    def sort(self) -> None:
        """Stable ordering: by platform, tool, URL, kind, then detail."""
        self.entries.sort(key=DriftEntry.sort_key)
        for listing in (self.only_old, self.only_new, self.notes):
            listing.sort(key=lambda d: (d.get("platform", ""), d.get("tool") or "", d.get("url", ""),
                                        dumps_value(d)))

    @property
    def has_drift(self) -> bool:
        return bool(self.entries)

    @property
    def drifted(self) -> list[str]:
        """URLs of the queries with at least one entry."""
        return sorted({e.url for e in self.entries})

    def counts(self) -> dict[str, int]:
        found = Counter(e.kind for e in self.entries)
        return {k: found[k] for k in KINDS if found[k]}

    def to_json(self) -> dict[str, Any]:
        return {
            "old": self.old, "new": self.new,
            "summary": {"compared": self.compared, "drifted": len(self.drifted),
                        "unchanged": self.compared - len(self.drifted), "only_old": len(self.only_old),
                        "only_new": len(self.only_new), "entries": self.counts()},
            "entries": [e.to_json() for e in self.entries],
            "only_old": self.only_old, "only_new": self.only_new, "notes": self.notes, "catalog": self.catalog,
        }

    def to_markdown(self) -> str:
        lines = [f"# Drift report: `{self.old}` → `{self.new}`", "",
                 f"{self.compared} queries recorded on both sides: {len(self.drifted)} drifted, "
                 f"{self.compared - len(self.drifted)} unchanged. {len(self.only_old)} only in OLD, "
                 f"{len(self.only_new)} only in NEW (listed, not drift).", ""]
        if self.entries:
            lines += ["## Summary", "", "| platform | tool | change | count |", "|---|---|---|---|"]
            per_tool = Counter((e.platform, e.tool or "", e.kind) for e in self.entries)
            for (platform, tool, kind), n in sorted(per_tool.items(), key=lambda i: (i[0][:2], KINDS.index(i[0][2]))):
                lines.append(f"| {platform} | {_cell(tool)} | {kind} | {n} |")
            lines += ["", "## Details", ""]
            by_query: dict[tuple[str, str, str], list[DriftEntry]] = defaultdict(list)
            for e in self.entries:
                by_query[(e.platform, e.tool or "", e.url)].append(e)
            for (platform, tool, url), entries in by_query.items():
                lines += [f"### {platform} · {tool or '(no tool)'}", "", f"`{url}`", "",
                          "| change | record / field | old | new |", "|---|---|---|---|"]
                for e in entries[:MARKDOWN_ROWS]:
                    lines.append("| " + " | ".join(_cell(c) for c in _markdown_row(e)) + " |")
                if len(entries) > MARKDOWN_ROWS:
                    lines.append(f"| … | {len(entries) - MARKDOWN_ROWS} more in the JSON report | | |")
                lines.append("")
        else:
            lines += ["No drift.", ""]
        for title, listing in (("Only in OLD", self.only_old), ("Only in NEW", self.only_new)):
            if listing:
                lines += [f"## {title}", "", "| platform | tool | url |", "|---|---|---|"]
                lines += [f"| {d['platform']} | {_cell(d['tool'] or '')} | `{_cell(d['url'])}` |" for d in listing]
                lines.append("")
        lines += self._catalog_markdown()
        if self.notes:
            lines += ["## Notes", ""] + [f"- {d['platform']} {d.get('tool') or ''} `{d['url']}`: {d['note']}"
                                          for d in self.notes] + [""]
        return "\n".join(lines)


    def _catalog_markdown(self) -> list[str]:
        if self.catalog is None:
            return []
        c = self.catalog
        lines = ["## Tool catalog", ""]
        if c.get("changes") is None:
            missing = " and ".join(side.upper() for side in ("old", "new") if not c.get(side))
            return lines + [f"{missing} pin{'s' if ' and ' not in missing else ''} no tool catalog (recorded before "
                            f"catalogs were pinned): catalog changes unknown.", ""]
        changes = c["changes"]
        if c.get("old") == c.get("new"):
            return lines + [f"Same catalog on both sides ({c['old']}).", ""]
        lines += [f"Catalog `{c['old']}` → `{c['new']}`.", ""]
        lines += [f"- added: {', '.join(changes['added'])}"] if changes["added"] else []
        lines += [f"- removed: {', '.join(changes['removed'])}"] if changes["removed"] else []
        lines += [f"- changed: {ch['tool']} ({'; '.join(ch['changes'])})" for ch in changes["changed"]]
        return lines + [""]


def catalog_section(old: CatalogPin | None, new: CatalogPin | None) -> dict[str, Any]:
    """The ``catalog`` of a report comparing two recordings that pin ``old`` and ``new`` (None: pins none)."""
    changes = None if old is None or new is None else diff_catalogs(old, new).as_json()
    return {"old": None if old is None else old.version, "new": None if new is None else new.version,
            "changes": changes}


def _markdown_row(e: DriftEntry) -> tuple[Any, Any, Any, Any]:
    d = e.detail
    if e.kind in ("endpoint_gone", "status_changed"):
        return e.kind, "", _status_text(d["old"]), _status_text(d["new"])
    if e.kind == "field_removed":
        return e.kind, d["field"], d["type"], ""
    if e.kind == "field_added":
        return e.kind, d["field"], "", d["type"]
    if e.kind == "field_renamed":
        return e.kind, "", d["old_field"], d["new_field"]
    if e.kind == "field_retyped":
        return e.kind, d["field"], d["old_type"], d["new_type"]
    if e.kind == "cardinality_changed":
        return e.kind, "total", d["old"], d["new"]
    key = ", ".join(f"{k}={v}" for k, v in d["key"].items())
    if e.kind == "record_changed":
        return e.kind, f"{key}: {d['field']}", _text(d["old"]), _text(d["new"])
    record = json.dumps(d["record"], ensure_ascii=False, default=str)  # in the upstream's field order
    return (e.kind, key, "", record) if e.kind == "record_added" else (e.kind, key, record, "")


def _status_text(s: dict[str, Any]) -> str:
    code = f" {s['code']}" if s.get("code") else ""
    return f"HTTP {s['status']} {s['outcome']}{code}"


def _cell(value: Any) -> str:
    text = _text(value).replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= 80 else text[:79] + "…"


def _text(value: Any) -> str:
    return "null" if value is None else value if isinstance(value, str) else dumps_value(value)


def dumps_value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


