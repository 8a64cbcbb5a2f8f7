"""A run's episodes (task, seed, rollout, pass, Action) and the highlighted episode's transcript."""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from appliance.metadb import BenchEpisodeResult, BenchRun

from .errors import ShowsWorkerErrors

ARG_CHARS = 60


def transcript_text(line: dict[str, Any] | None) -> Text:
    """One row per step: who called which tool with what, and the outcome; then the answer or the error."""
    if line is None:
        return Text("no transcript (the run directory or its episodes.jsonl is gone)", style="dim")
    text = Text()
    for step in line.get("transcript", []):
        args = json.dumps(step.get("args", {}), ensure_ascii=False)
        style = "green" if str(step.get("outcome", "")).endswith("success") else "yellow"
        text.append(f"{step.get('index', '?'):>2} {step.get('by', '?'):<7} ", "dim")
        text.append(f"{step.get('tool', '?')} ", "bold")
        text.append(f"{args[:ARG_CHARS]}{'…' if len(args) > ARG_CHARS else ''} ")
        text.append(f"→ {step.get('outcome', '?')} ({step.get('n_records', 0)} rec)\n", style)
    if line.get("error"):
        text.append(f"error: {line['error']}\n", "red")
    text.append(f"answer: {line.get('answer')}", "bold")
    return text


class EpisodesScreen(ShowsWorkerErrors, Screen):
    CSS_PATH = "bench_episodes.tcss"
    BINDINGS = [Binding("escape,q", "app.pop_screen", "Back")]

    def __init__(self, run: BenchRun) -> None:
        super().__init__()
        self.run = run
        self.episodes: list[BenchEpisodeResult] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield DataTable(id="episodes", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="transcript-box"):
            yield Static("", id="transcript")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#episodes", DataTable)
        table.add_columns("task", "domain", "seed", "rollout", "passed", "Action")
        table.border_title = f"run {self.run.id} · {self.run.agent} · episodes"
        self.load()

    @work(exit_on_error=False, thread=True, exclusive=True)
    def load(self) -> None:
        episodes = self.app.source.records.bench_episodes(self.run.id)
        self.app.call_from_thread(self._show, episodes)

    def _show(self, episodes: list[BenchEpisodeResult]) -> None:
        self.episodes = episodes
        table = self.query_one("#episodes", DataTable)
        for e in episodes:
            table.add_row(e.task_id, e.domain, str(e.seed), str(e.rollout),
                          Text("✓", "green") if e.passed else Text("✕", "red"), f"{e.action:.2f}")
        if episodes:
            self.load_transcript(episodes[0])

    @on(DataTable.RowHighlighted, "#episodes")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.episodes):
            self.load_transcript(self.episodes[event.cursor_row])

    @work(exit_on_error=False, thread=True, exclusive=True, group="transcript")
    def load_transcript(self, episode: BenchEpisodeResult) -> None:
        line = self.app.source.records.episode_line(self.run, episode.task_id, episode.seed, episode.rollout)
        self.app.call_from_thread(self._show_transcript, transcript_text(line))

    def _show_transcript(self, text: Text) -> None:
        self.query_one("#transcript", Static).update(text)
