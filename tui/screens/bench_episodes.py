"""A run's episodes (task, seed, rollout, pass, Action) and the highlighted episode's transcript; the episodes of a
run that is running are re-read from its directory while it runs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from appliance.metadb import BenchEpisodeResult, BenchRun
from bench.report import episode_result, read_run_dir

from .errors import ShowsWorkerErrors

ARG_CHARS = 60
EPISODES_POLL_S = 1.0  # how often a running run's episodes are re-read
ACTION_NOTE = "Action per episode; a run's Action averages solved tasks only"


def run_dir_problem(run: BenchRun) -> str | None:
    """Why what the console reads from a run's directory (transcripts, per-domain figures, a comparison) is not
    there, in the console's words; None when the directory holds a run."""
    folder = Path(run.run_dir)
    if not folder.is_dir():
        return (f"run {run.id}'s directory {folder} is gone (moved or deleted): the DB keeps its totals, but "
                "transcripts, per-domain figures and comparisons are read from that directory")
    if not (folder / "run.json").is_file():
        return f"run {run.id}'s directory {folder} holds no run.json: it is not a benchmark run any more"
    return None


def episodes_in_dir(run: BenchRun) -> list[BenchEpisodeResult]:
    """The episodes written so far to the run's episodes.jsonl, as the DB's rows (which a running run gets only
    when it stops), in the DB's (task, seed, rollout) order."""
    files = read_run_dir(Path(run.run_dir))
    rows = [BenchEpisodeResult(run_id=run.id or 0, error=line.get("error"), **episode_result(line).model_dump())
            for line in files.episodes]
    return sorted(rows, key=lambda e: (e.task_id, e.seed, e.rollout))


def run_state(run: BenchRun, running: bool = False, ended: str | None = None) -> str:
    """finished, running (a run this console is running), cancelled or failed (one it ran), or incomplete: a run
    that stopped before its last episode, which its record does not say why (cancelled, failed, interrupted, or
    running in another process)."""
    if running:
        return "running"
    if run.complete:
        return "finished"
    return ended or "incomplete"


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

    def __init__(self, run: BenchRun, state: Callable[[], str] | None = None) -> None:
        """``state``: the run's state now (``run_state``, as the bench view knows it); "running" polls its episodes."""
        super().__init__()
        self.run = run
        self.state = state or (lambda: run_state(run))
        self.episodes: list[BenchEpisodeResult] = []
        self.transcript_of: tuple[str, int, int] | None = None
        self.shown_state = ""
        self.polled = False  # read from the directory while running: read the DB's rows once more when it ends

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
        table.border_subtitle = ACTION_NOTE
        self.load(self.state() == "running")
        if getattr(self.app, "poll_s", None):  # as the jobs view polls a running training job
            self.set_interval(EPISODES_POLL_S, self._poll)

    def _poll(self) -> None:
        state = self.state()
        if state == "running":
            self.polled = True
            self.load(True)
        elif self.polled or state != self.shown_state:  # it has stopped: the DB has its rows, the title its state
            self.polled = False
            self.load(False)

    @work(exit_on_error=False, thread=True, exclusive=True)
    def load(self, running: bool) -> None:
        # while it runs the DB has the run's rows of its start only; its directory has every episode so far
        episodes = episodes_in_dir(self.run) if running else self.app.source.records.bench_episodes(self.run.id)
        self.app.call_from_thread(self._show, episodes)

    def _show(self, episodes: list[BenchEpisodeResult]) -> None:
        first = not self.episodes
        self.episodes = episodes
        table = self.query_one("#episodes", DataTable)
        keep = table.cursor_row
        table.clear()
        for e in episodes:
            table.add_row(e.task_id, e.domain, str(e.seed), str(e.rollout),
                          Text("✓", "green") if e.passed else Text("✕", "red"), f"{e.action:.2f}")
        total = self.run.episodes_total
        self.shown_state = self.state()
        table.border_title = (f"run {self.run.id} · {self.run.agent} · {len(episodes)}"
                              f"{f' of {total}' if total else ''} episodes · {self.shown_state}")
        if episodes:
            table.move_cursor(row=min(keep or 0, len(episodes) - 1), animate=False)
            if first:
                self.show_transcript_of(episodes[table.cursor_row])
        elif (problem := run_dir_problem(self.run)) is not None:
            self._show_transcript(Text(problem, style="yellow"))

    @on(DataTable.RowHighlighted, "#episodes")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.episodes):
            self.show_transcript_of(self.episodes[event.cursor_row])

    def show_transcript_of(self, episode: BenchEpisodeResult) -> None:
        key = (episode.task_id, episode.seed, episode.rollout)
        if key != self.transcript_of:  # a poll redraws the table: the transcript on screen stays (and its scroll)
            self.transcript_of = key
            self.load_transcript(episode)

    @work(exit_on_error=False, thread=True, exclusive=True, group="transcript")
    def load_transcript(self, episode: BenchEpisodeResult) -> None:
        line = self.app.source.records.episode_line(self.run, episode.task_id, episode.seed, episode.rollout)
        self.app.call_from_thread(self._show_transcript, transcript_text(line))

    def _show_transcript(self, text: Text) -> None:
        self.query_one("#transcript", Static).update(text)
