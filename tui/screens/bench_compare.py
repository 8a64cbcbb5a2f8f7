"""Run B against run A: what makes them hard to compare (warnings, each in full), overall and per-domain pass@k and
Action with deltas, and the tasks that flipped."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from appliance.metadb import BenchRun
from bench.report import Comparison

from ..widgets.bars import pct
from .bench_episodes import run_dir_problem
from .errors import ShowsWorkerErrors


def _delta(value: float | None) -> Text:
    if value is None:
        return Text("–", "dim")
    return Text(f"{100 * value:+.1f}", "green" if value > 0 else "red" if value < 0 else "dim")


class CompareScreen(ShowsWorkerErrors, Screen):
    CSS_PATH = "bench_compare.tcss"
    BINDINGS = [Binding("escape,q", "app.pop_screen", "Back")]

    def __init__(self, a: BenchRun, b: BenchRun) -> None:
        super().__init__()
        self.a, self.b = a, b

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(f"run {self.b.id} ({self.b.agent}) against run {self.a.id} ({self.a.agent}) …", id="cmp-title",
                     classes="status-line")
        with VerticalScroll(id="cmp-warnings-box"):  # each warning in full; a long list scrolls
            yield Static("", id="cmp-warnings")
        yield DataTable(id="cmp-metrics", cursor_type="row", zebra_stripes=True)
        yield DataTable(id="cmp-flipped", cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#cmp-warnings-box").display = False
        metrics = self.query_one("#cmp-metrics", DataTable)
        metrics.add_columns("scope", "metric", "A", "B", "B − A")
        metrics.border_subtitle = "Action: mean over solved tasks only"
        self.query_one("#cmp-flipped", DataTable).add_columns("flipped task", "domain", "A", "B", "better")
        self.compute()

    @work(exit_on_error=False, thread=True, exclusive=True)
    def compute(self) -> None:
        # a run whose directory is gone is said in the console's words (the report's own error names a CLI flag)
        for side, run in (("A", self.a), ("B", self.b)):
            if (problem := run_dir_problem(run)) is not None:
                self.app.call_from_thread(self._fail, f"cannot compare: {side} = {problem}. Mark (m) and compare (C) "
                                                      "runs whose directories are there.")
                return
        try:
            comparison = self.app.source.records.compare(self.a, self.b)
        except (ValueError, OSError) as exc:
            self.app.call_from_thread(self._fail, str(exc))
            return
        self.app.call_from_thread(self._show, comparison)

    def _fail(self, text: str) -> None:
        self.query_one("#cmp-title", Static).update(Text(text, "red"))

    def _show(self, c: Comparison) -> None:
        self.query_one("#cmp-title", Static).update(
            f"B = run {self.b.id} ({self.b.agent}) against A = run {self.a.id} ({self.a.agent}): "
            f"{len(c.common_tasks)} common tasks" + (f"; {len(c.warnings)} warning(s):" if c.warnings else ""))
        warnings = self.query_one("#cmp-warnings", Static)
        warnings.update(Text("\n".join(f"• {w}" for w in c.warnings), "yellow"))
        self.query_one("#cmp-warnings-box").display = bool(c.warnings)
        metrics = self.query_one("#cmp-metrics", DataTable)
        for scope, rows in (("all", c.overall), *((d.domain, d.rows) for d in c.domains)):
            for row in rows:
                metrics.add_row(scope, row.metric, pct(row.a), pct(row.b), _delta(row.delta))
        flipped = self.query_one("#cmp-flipped", DataTable)
        for t in c.flipped:
            flipped.add_row(t.task_id, t.domain, pct(t.a), pct(t.b), t.better)
        flipped.border_title = f"{len(c.flipped)} tasks flipped"
