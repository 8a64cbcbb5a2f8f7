"""Drift between two bundle versions: the full version ids, per platform the status, schema, cardinality and value
changes, then per tool and kind with what changed (which field was renamed into which), and the queries recorded
on one side only; computed in a worker (a big bundle takes a while)."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from mcp_gateway.cassette_reader import cassette_reader
from recorder.drift import DriftEntry, DriftReport, compare

from ..sources import DRIFT_GROUPS
from .errors import ShowsWorkerErrors

DETAIL_CHARS = 80  # a tool's detail cell: the first changes, then how many more
SUMMARY_RENAMES = 3  # renamed fields named in the summary; the tools table names them all


@dataclass(frozen=True)
class DriftDetails:
    """What the screen shows of a drift report: ``tui.sources.DriftView``'s figures plus the one-side query lists
    and the field names (``DriftView`` keeps counts only; this keeps one comparison, which takes seconds)."""

    report: DriftReport
    per_platform: dict[str, dict[str, int]]  # platform -> group -> entries
    tools: list[tuple[str, str, str, int, str]]  # (platform, tool, kind, entries, what changed)
    renamed: list[tuple[str, str, str, str]]  # (platform, tool, old field, new field), each pair once


def change_text(entry: DriftEntry) -> str:
    """One entry's change in a few words: the field names of a schema change, the old and new value otherwise."""
    d = entry.detail
    if entry.kind == "field_renamed":
        return f"{d['old_field']} → {d['new_field']}"
    if entry.kind in ("field_added", "field_removed"):
        return str(d["field"])
    if entry.kind == "field_retyped":
        return f"{d['field']}: {d['old_type']} → {d['new_type']}"
    if entry.kind == "cardinality_changed":
        return f"total {d['old']} → {d['new']}"
    if entry.kind in ("endpoint_gone", "status_changed"):
        return f"HTTP {d['old'].get('status')} → {d['new'].get('status')}"
    if entry.kind == "record_changed":
        return str(d["field"])
    return ""  # a record added or removed: the count says it


def details_of(report: DriftReport, platforms: set[str]) -> DriftDetails:
    group_of = {kind: group for group, kinds in DRIFT_GROUPS.items() for kind in kinds}
    per_platform: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(DRIFT_GROUPS, 0))
    for platform in platforms:
        per_platform[platform]  # a platform recorded on either side shows, with or without drift
    changes: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    for entry in report.entries:
        per_platform[entry.platform][group_of[entry.kind]] += 1
        changes[(entry.platform, entry.tool or "", entry.kind)][change_text(entry)] += 1
    tools = []
    for (platform, tool, kind), seen in sorted(changes.items()):
        words = ", ".join(w for w in seen if w)
        tools.append((platform, tool, kind, sum(seen.values()),
                      words if len(words) <= DETAIL_CHARS else words[:DETAIL_CHARS - 1] + "…"))
    renamed = sorted({(e.platform, e.tool or "", e.detail["old_field"], e.detail["new_field"])
                      for e in report.entries if e.kind == "field_renamed"})
    return DriftDetails(report, dict(sorted(per_platform.items())), tools, renamed)


def query_row(side: str, query: dict[str, Any]) -> tuple[str, str, str, str]:
    # the URL decoded: its Korean arguments read as text, not %EB%AF%BC…
    return side, str(query.get("platform", "")), str(query.get("tool") or ""), unquote(str(query.get("url", "")))


class DriftScreen(ShowsWorkerErrors, Screen):
    CSS_PATH = "drift.tcss"
    BINDINGS = [Binding("escape,q", "app.pop_screen", "Back")]

    def __init__(self, old: str, new: str) -> None:
        super().__init__()
        self.old, self.new = old, new

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(f"drift {self.old} → {self.new} …", id="drift-summary", classes="status-line")
        yield DataTable(id="drift-platforms", cursor_type="row")
        yield DataTable(id="drift-tools", cursor_type="row", zebra_stripes=True)
        yield DataTable(id="drift-one-side", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#drift-platforms", DataTable).add_columns("platform", *DRIFT_GROUPS)
        self.query_one("#drift-tools", DataTable).add_columns("platform", "tool", "change", "entries",
                                                              "what changed")
        self.query_one("#drift-one-side", DataTable).add_columns("only in", "platform", "tool", "query")
        self.query_one("#drift-one-side").display = False
        self.compute()

    @work(exit_on_error=False, thread=True, exclusive=True)
    def compute(self) -> None:
        # The comparison runs here rather than through ``Cassettes.drift``: its DriftView keeps counts, and the
        # query lists and field names need the report itself (comparing twice would double a wait of seconds).
        store = self.app.source.cassettes.store
        try:
            a, b = store.open(self.old), store.open(self.new)
            report = compare(a, b, cassette_reader())
        except (LookupError, ValueError, OSError) as exc:
            self.app.call_from_thread(self._fail, str(exc))
            return
        platforms = {*a.manifest.counts.get("platforms", {}), *b.manifest.counts.get("platforms", {})}
        self.app.call_from_thread(self._show, details_of(report, platforms))

    def _fail(self, text: str) -> None:
        self.query_one("#drift-summary", Static).update(Text(text, style="red"))

    def _show(self, d: DriftDetails) -> None:
        r = d.report
        summary = Text.assemble((r.old, "bold"), " → ", (r.new, "bold"), "\n",
                                f"{r.compared:,} queries on both sides, {len(r.drifted):,} drifted; "
                                f"{len(r.only_old):,} only in old, {len(r.only_new):,} only in new"
                                + (" (listed below, not drift)" if r.only_old or r.only_new else ""))
        for platform, tool, before, after in d.renamed[:SUMMARY_RENAMES]:
            summary.append(f"\nrenamed in {platform} {tool}: ")
            summary.append(before, "yellow")
            summary.append(" → ")
            summary.append(after, "yellow")
        if len(d.renamed) > SUMMARY_RENAMES:
            summary.append(f"\n… and {len(d.renamed) - SUMMARY_RENAMES} more renamed fields (field_renamed below)")
        if r.notes:
            summary.append(f"\n{len(r.notes)} queries could not be compared (e.g. {r.notes[0].get('note')})", "dim")
        self.query_one("#drift-summary", Static).update(summary)
        platforms = self.query_one("#drift-platforms", DataTable)
        for platform, groups in d.per_platform.items():
            platforms.add_row(platform, *(Text(f"{n:,}", style="yellow" if n else "dim") for n in groups.values()))
        tools = self.query_one("#drift-tools", DataTable)
        for platform, tool, kind, n, words in d.tools:
            tools.add_row(platform, tool, kind, f"{n:,}", words)
        tools.border_title = f"{len(d.tools)} changes by tool"
        one_side = self.query_one("#drift-one-side", DataTable)
        for row in [query_row("old", q) for q in r.only_old] + [query_row("new", q) for q in r.only_new]:
            one_side.add_row(*row)
        one_side.border_title = (f"queries recorded on one side only: {len(r.only_old)} only in old, "
                                 f"{len(r.only_new)} only in new")
        one_side.display = bool(r.only_old or r.only_new)
        tools.display = bool(d.tools) or not one_side.display  # an empty table gives its lines to the lists
