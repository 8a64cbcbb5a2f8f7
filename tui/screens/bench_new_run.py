"""The new-run dialog: agent, task file, seeds, rollouts, each labelled; returns the run's ``BenchRunOptions`` (or
None on Esc), checked as ``kopa bench run`` checks them, and a field that is wrong is named and said in words."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.validation import Integer, ValidationResult, Validator
from textual.widgets import Button, Input, Label, Select

from appliance.bench_cli import parse_seeds
from bench.options import BenchRunOptions

from ..sources import AGENTS


def task_file(text: str) -> Path:
    path = Path(text.strip()).expanduser()
    if not text.strip():
        raise ValueError("task file: give the path of a task file (JSONL)")
    if not path.is_file():
        raise ValueError(f"task file {path}: no such file")
    return path


def seeds(text: str) -> tuple[int, ...]:
    try:
        return tuple(parse_seeds(text))
    except ValueError as exc:  # its words name the CLI's --seeds; here the field is "seeds"
        raise ValueError(str(exc).replace("--seeds", "seeds", 1)) from None


class Reads(Validator):
    """Valid when ``read`` takes the text; its ValueError is the failure, in its words."""

    def __init__(self, read: Callable[[str], Any]) -> None:
        super().__init__()
        self.read = read

    def validate(self, value: str) -> ValidationResult:
        try:
            self.read(value)
        except ValueError as exc:
            return self.failure(str(exc), value)
        return self.success()


# (label, field id, validator): the words a failure shows name the field
FIELDS = {
    "run-tasks": ("task file", Reads(task_file)),
    "run-seeds": ("seeds", Reads(seeds)),
    "run-rollouts": ("rollouts", Integer(minimum=1, failure_description="rollouts must be a whole number ≥ 1")),
}


class NewRunScreen(ModalScreen[BenchRunOptions | None]):
    CSS_PATH = "bench_new_run.tcss"
    AUTO_FOCUS = "#run-tasks"  # Enter right away starts the offered run
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, default_tasks: Path) -> None:
        super().__init__()
        self.default_tasks = default_tasks

    def compose(self) -> ComposeResult:
        values = {"run-tasks": str(self.default_tasks), "run-seeds": "1", "run-rollouts": "1"}
        hints = {"run-tasks": "a task file (JSONL)", "run-seeds": "a count (8 = seeds 0-7) or a list (0,3,5)",
                 "run-rollouts": "per task and seed (pass@k: k = rollouts)"}
        with Vertical(id="new-run-box"):
            yield Label("new benchmark run (replayed; Enter in a field starts it)")
            with Horizontal(classes="run-row"):  # a label beside each field: a filled field still says what it is
                yield Label("agent", classes="run-label")
                yield Select([(a, a) for a in AGENTS], value=AGENTS[0], allow_blank=False, id="run-agent")
            for field_id, (label, validator) in FIELDS.items():
                with Horizontal(classes="run-row"):
                    yield Label(label, classes="run-label")
                    yield Input(values[field_id], placeholder=hints[field_id], id=field_id, classes="run-field",
                                validators=[validator], validate_on=["changed", "submitted"])
            yield Label("", id="run-error", classes="error")
            yield Button("Start", id="run-start", variant="primary")

    @on(Input.Changed, ".run-field")
    def _changed(self, event: Input.Changed) -> None:
        if event.validation_result is not None and event.validation_result.is_valid:
            self.query_one("#run-error", Label).update("")  # a mended field takes its error away

    def problems(self) -> list[str]:
        """Each wrong field's failure in words, in the dialog's order."""
        out = []
        for field_id in FIELDS:
            result = self.query_one(f"#{field_id}", Input).validate(self.query_one(f"#{field_id}", Input).value)
            if result is not None and not result.is_valid:
                out.append(result.failure_descriptions[0])
        return out

    @on(Button.Pressed, "#run-start")
    @on(Input.Submitted, ".run-field")
    def start(self) -> None:
        error = self.query_one("#run-error", Label)
        if problems := self.problems():
            error.update("\n".join(problems))
            return
        try:
            options = BenchRunOptions(agent=str(self.query_one("#run-agent", Select).value),
                                      tasks=task_file(self.query_one("#run-tasks", Input).value),
                                      seeds=seeds(self.query_one("#run-seeds", Input).value),
                                      rollouts=int(self.query_one("#run-rollouts", Input).value.strip()))
        except ValueError as exc:  # what the options check beyond the fields (pydantic's ValidationError is one)
            error.update(str(exc))
            return
        self.dismiss(options)

    def action_cancel(self) -> None:
        self.dismiss(None)
