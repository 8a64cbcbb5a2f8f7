"""Gateway view: calls/s, latency percentiles and error classes from /metrics, active sessions and a filtered
audit tail; tool search in Korean over the catalog, a tool's schema, and "try it" through the gateway."""

from __future__ import annotations

import json
import time

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Sparkline, Static, TabbedContent, TabPane

from ..sources import AuditFilter, AuditLine, ToolHit
from .errors import ShowsWorkerErrors
from .tabs import show_tab
from .try_tool import TryToolScreen

AUDIT_ROWS = 200
SESSION_WINDOW = 200  # audit lines over which distinct sessions count as active


def _ms(seconds: float | None) -> str:
    return "–" if seconds is None else f"{seconds * 1000:.0f}ms"


class GatewayScreen(ShowsWorkerErrors, Screen):
    CSS_PATH = "gateway.tcss"
    BINDINGS = [
        Binding("slash", "search", "Search tools"),
        Binding("l", "live", "Live"),
        Binding("t", "try_tool", "Try it"),
        Binding("r", "refresh", "Refresh"),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial="live"):
            with TabPane("Live", id="live"):
                yield Static("", id="gw-stats", classes="status-line")
                yield Static("", id="gw-note", classes="note")  # why this gateway; the start-up steps
                yield Sparkline([], id="gw-rate")
                with Horizontal(id="gw-filters"):
                    yield Input(placeholder="platform", id="f-platform")
                    yield Input(placeholder="tool", id="f-tool")
                    yield Input(placeholder="outcome | error", id="f-outcome")
                with Horizontal(id="gw-tables"):
                    yield DataTable(id="gw-errors", cursor_type="row", zebra_stripes=True)
                    yield DataTable(id="gw-audit", cursor_type="row", zebra_stripes=True)
            with TabPane("Tools", id="tools"):
                yield Input(placeholder="도구 검색: 한국어 또는 영어 (Enter)", id="tool-query")
                with Horizontal(id="tool-panes"):
                    yield DataTable(id="tool-hits", cursor_type="row")
                    with VerticalScroll(id="tool-schema-box"):
                        yield Static("", id="tool-schema")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#gw-errors", DataTable).add_columns("error class", "calls")
        self.query_one("#gw-audit", DataTable).add_columns("outcome", "ms", "platform", "tool", "session")
        self.query_one("#tool-hits", DataTable).add_columns("tool", "platform", "score")
        self.hits: list[ToolHit] = []
        self._lines: list[AuditLine] = []
        self._sessions = 0  # distinct sessions in the newest audit lines
        self.watch(self.app, "gateway_tick", self._on_tick, init=False)
        self.watch(self.app, "gateway_note", self._show_note)
        self._show_stats()
        self.load_audit()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Keys that would do nothing here are not offered (nor shown in the footer)."""
        tabs = self.query(TabbedContent)
        tab = tabs.first().active if tabs else "live"  # asked before compose too
        if action == "live":
            return tab != "live"
        if action == "try_tool":
            return tab == "tools" and bool(getattr(self, "hits", None))
        return True

    @on(TabbedContent.TabActivated)
    def _tab_changed(self) -> None:
        self.refresh_bindings()

    # ---- live ----
    def _show_note(self, note: str) -> None:
        widget = self.query_one("#gw-note", Static)
        widget.update(note)
        widget.display = bool(note)  # nothing to say: no empty line

    def _on_tick(self, _tick: int) -> None:
        self._show_stats()
        self.load_audit()

    def _show_stats(self) -> None:
        app = self.app
        metrics = getattr(app, "metrics", None)
        state = getattr(app, "gateway_state", "none")
        if state != "connected" or metrics is None:
            error = getattr(app, "last_error", None)
            text = {"none": error or "no gateway attached (kopa tui --url URL, or start one)",
                    "starting": "starting the in-process gateway over the sandbox (steps below)…"}.get(
                state, f"gateway not answering{': ' + error if error else ''}")
            self.query_one("#gw-stats", Static).update(text)
        else:
            rates = list(app.rates)
            self.query_one("#gw-stats", Static).update(
                f"{rates[-1] if rates else 0:.1f} calls/s  p50 {_ms(metrics.percentile(0.5))} "
                f"p95 {_ms(metrics.percentile(0.95))} p99 {_ms(metrics.percentile(0.99))}  "
                f"calls {metrics.calls_total:,.0f}  sessions {self._sessions}")
            self.query_one("#gw-rate", Sparkline).data = rates or [0.0]
            errors = self.query_one("#gw-errors", DataTable)
            errors.clear()
            for name, n in sorted(metrics.errors_by_class.items()):
                errors.add_row(name, f"{n:,.0f}")

    @work(exit_on_error=False, thread=True, exclusive=True, group="audit")
    def load_audit(self) -> None:
        lines = self.app.source.audit_tail(AUDIT_ROWS)
        self.app.call_from_thread(self._show_audit, lines)

    def _filter(self) -> AuditFilter:
        return AuditFilter(self.query_one("#f-platform", Input).value.strip(),
                           self.query_one("#f-tool", Input).value.strip(),
                           self.query_one("#f-outcome", Input).value.strip())

    def _show_audit(self, lines: list[AuditLine]) -> None:
        self._lines = lines
        self._sessions = len({line.session_id for line in lines[-SESSION_WINDOW:]})
        chosen = [line for line in lines if self._filter().matches(line)]
        table = self.query_one("#gw-audit", DataTable)
        table.clear()
        for line in reversed(chosen):  # newest first
            table.add_row(Text(line.outcome, "green" if line.ok else "red"), f"{line.latency_ms:.0f}", line.platform, line.tool,
                          line.session_id[:8])
        table.border_subtitle = f"{len(chosen)} of {len(lines)} lines"

    @on(Input.Changed, "#gw-filters Input")
    def _refilter(self) -> None:
        self._show_audit(self._lines)

    # ---- tools ----
    def action_search(self) -> None:
        self.query_one(TabbedContent).active = "tools"
        self.query_one("#tool-query", Input).focus()

    def action_live(self) -> None:
        show_tab(self.query_one(TabbedContent), "live")

    def action_refresh(self) -> None:
        self.app.poll_gateway()
        self.load_audit()

    @on(Input.Submitted, "#tool-query")
    def _search(self, event: Input.Submitted) -> None:
        self.find_tools(event.value)

    @work(exit_on_error=False, thread=True, exclusive=True, group="search")
    def find_tools(self, query: str) -> None:
        started = time.perf_counter()
        hits = self.app.source.search.find(query)
        self.app.call_from_thread(self._show_hits, hits, time.perf_counter() - started)

    def _show_hits(self, hits: list[ToolHit], seconds: float) -> None:
        self.hits = hits
        self.refresh_bindings()  # "try it" acts only with a tool to try
        table = self.query_one("#tool-hits", DataTable)
        table.clear()
        for hit in hits:
            table.add_row(hit.name, hit.platform, f"{hit.score:.2f}", key=hit.name)
        table.border_subtitle = f"{len(hits)} tools"
        if hits:
            table.focus()
            self._show_schema(hits[0].name)
        else:
            self.query_one("#tool-schema", Static).update(
                f"no tool matches {self.query_one('#tool-query', Input).value.strip()!r}: try other words, "
                "in Korean or English (a tool's name or what it does)")

    @on(DataTable.RowHighlighted, "#tool-hits")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value:
            self._show_schema(event.row_key.value)

    @on(DataTable.RowSelected, "#tool-hits")
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.action_try_tool()

    def _show_schema(self, tool: str) -> None:
        hit = next((h for h in self.hits if h.name == tool), None)
        schema = self.app.source.search.schema(tool)
        self.query_one("#tool-schema", Static).update(Text.assemble(
            (tool, "bold"), f"  {hit.platform if hit else ''}\n{hit.description if hit else ''}\n\n",
            json.dumps(schema, ensure_ascii=False, indent=1)))

    def action_try_tool(self) -> None:
        table = self.query_one("#tool-hits", DataTable)
        if not self.hits or table.cursor_row is None:
            self.notify("search a tool first (/)", severity="warning")
            return
        tool = self.hits[table.cursor_row].name
        self.app.push_screen(TryToolScreen(tool, self.app.source.search.schema(tool)))
