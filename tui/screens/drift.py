"""Drift between two bundle versions: per platform the status, schema, cardinality and value changes,
then per tool and kind; computed in a worker (a big bundle takes a while)."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from ..sources import DRIFT_GROUPS, DriftView
from .errors import ShowsWorkerErrors


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
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#drift-platforms", DataTable).add_columns("platform", *DRIFT_GROUPS)
        self.query_one("#drift-tools", DataTable).add_columns("platform", "tool", "change", "entries")
        self.compute()

    @work(exit_on_error=False, thread=True, exclusive=True)
    def compute(self) -> None:
        try:
            view = self.app.source.cassettes.drift(self.old, self.new)
        except (LookupError, ValueError, OSError) as exc:
            self.app.call_from_thread(self._fail, str(exc))
            return
        self.app.call_from_thread(self._show, view)

    def _fail(self, text: str) -> None:
        self.query_one("#drift-summary", Static).update(Text(text, style="red"))

    def _show(self, view: DriftView) -> None:
        s = view.summary
        self.query_one("#drift-summary", Static).update(
            f"{view.old[:13]} → {view.new[:13]}: {s['compared']} queries, {s['drifted']} drifted; "
            f"only old {s['only_old']}, only new {s['only_new']}")
        platforms = self.query_one("#drift-platforms", DataTable)
        for platform, groups in view.per_platform.items():
            platforms.add_row(platform, *(Text(f"{n:,}", style="yellow" if n else "dim") for n in groups.values()))
        tools = self.query_one("#drift-tools", DataTable)
        for platform, tool, kind, n in view.tools:
            tools.add_row(platform, tool, kind, f"{n:,}")
