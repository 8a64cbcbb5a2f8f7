"""The new-run dialog: agent, task file, seeds, rollouts; returns the run's ``BenchRunOptions`` (or None on Esc),
checked as ``kopa bench run`` checks them."""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select

from appliance.bench_cli import parse_seeds
from bench.options import BenchRunOptions

from ..sources import AGENTS


class NewRunScreen(ModalScreen[BenchRunOptions | None]):
    CSS_PATH = "bench_new_run.tcss"
    AUTO_FOCUS = "#run-tasks"  # Enter right away starts the offered run
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, default_tasks: Path) -> None:
        super().__init__()
        self.default_tasks = default_tasks

    def compose(self) -> ComposeResult:
        with Vertical(id="new-run-box"):
            yield Label("new benchmark run (replayed; Enter in a field starts it)")
            yield Select([(a, a) for a in AGENTS], value=AGENTS[0], allow_blank=False, id="run-agent")
            yield Input(str(self.default_tasks), placeholder="task file (JSONL)", id="run-tasks", classes="run-field")
            yield Input("1", placeholder="seeds: a count (8 = seeds 0-7) or a list (0,3,5)", id="run-seeds", classes="run-field")
            yield Input("1", placeholder="rollouts per task and seed", id="run-rollouts", classes="run-field")
            yield Label("", id="run-error", classes="error")
            yield Button("Start", id="run-start", variant="primary")

    @on(Button.Pressed, "#run-start")
    @on(Input.Submitted, ".run-field")
    def start(self) -> None:
        try:
            tasks = Path(self.query_one("#run-tasks", Input).value.strip()).expanduser()
            if not tasks.is_file():
                raise ValueError(f"task file {tasks}: no such file")
            options = BenchRunOptions(agent=str(self.query_one("#run-agent", Select).value), tasks=tasks,
                                      seeds=tuple(parse_seeds(self.query_one("#run-seeds", Input).value)),
                                      rollouts=int(self.query_one("#run-rollouts", Input).value.strip() or "1"))
        except ValueError as exc:
            self.query_one("#run-error", Label).update(str(exc))
            return
        self.dismiss(options)

    def action_cancel(self) -> None:
        self.dismiss(None)
