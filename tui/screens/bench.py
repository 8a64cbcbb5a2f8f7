"""Bench view: runs from the metadata DB, each with its state (finished, running, cancelled, failed, incomplete),
with pass@1 / pass@k / Action (over solved tasks only) per domain as bars, and the run's episodes
that ended with an error by kind (endpoint timeout, turn limit, …: not wrong answers); a run's episodes
and transcripts; two runs compared; a new run (agent, tasks, seeds) with a progress bar, cancellable."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, ProgressBar, Static
from textual.worker import get_current_worker

from appliance.metadb import BenchRun
from bench.options import BenchRunOptions
from bench.report import ErrorGroup, errors_line, run_error_groups

from ..messages import BenchFinished, BenchProgress
from ..sources import BenchJob, DomainRow, JobCancelled
from ..widgets import BarChart
from ..widgets.bars import pct
from .bench_compare import CompareScreen
from .bench_episodes import EpisodesScreen, run_dir_problem, run_state
from .bench_new_run import NewRunScreen
from .errors import ShowsWorkerErrors

# the paper's ACTION: the mean over the tasks solved at least once (bench.stats.action_score), not over episodes
ACTION_NOTE = "Action: mean over solved tasks only (the paper's ACTION)"


STATE_STYLES = {"finished": "green", "running": "cyan", "cancelled": "yellow", "failed": "red",
                "incomplete": "yellow"}


def run_key(run_dir: str | Path) -> str:
    return str(Path(run_dir).resolve())  # as the DB keys a run


class BenchScreen(ShowsWorkerErrors, Screen):
    CSS_PATH = "bench.tcss"
    BINDINGS = [
        Binding("enter", "episodes", "Episodes", show=False),
        Binding("m", "mark", "Mark"),
        Binding("C", "compare", "Compare"),
        Binding("n", "new_run", "New run"),
        Binding("x", "cancel_run", "Cancel run"),
        Binding("r", "refresh", "Refresh"),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        yield DataTable(id="runs", cursor_type="row", zebra_stripes=True)
        yield BarChart(("pass@1", "pass@k", "Action"), bar_width=12, id="domains")
        yield Static("", id="errors", markup=False)
        with Horizontal(id="job-row"):
            yield Static("", id="job-label")
            yield ProgressBar(id="job-progress", show_eta=False)
        yield Footer()

    def on_mount(self) -> None:
        self.runs: list[BenchRun] = []
        self.marked: BenchRun | None = None
        self.job: BenchJob | None = None
        self.progress: tuple[int, int] | None = None  # the job's episodes done and total, as it reports them
        self.ended: dict[str, str] = {}  # run directory -> cancelled | failed, for runs this console ran
        runs = self.query_one("#runs", DataTable)
        self.columns = dict(zip(("episodes", "state"),
                                runs.add_columns("id", "agent", "started", "episodes", "state", "pass@1", "pass@k",
                                                 "Action")[3:5], strict=True))
        runs.border_subtitle = ACTION_NOTE
        self.query_one("#job-row").display = False
        self.query_one("#errors").display = False
        self.action_refresh()

    def action_refresh(self) -> None:
        self.load()

    @work(exit_on_error=False, thread=True, exclusive=True, group="runs")
    def load(self) -> None:
        runs = self.app.source.records.bench_runs()
        if not get_current_worker().is_cancelled:  # a later read replaced this one: its rows may be older
            self.app.call_from_thread(self._show, runs)

    def state(self, run: BenchRun) -> str:
        job = self.job
        running = job is not None and run_key(job.run_dir) == run.run_dir
        return run_state(run, running, self.ended.get(run.run_dir))

    def latest(self, run: BenchRun) -> BenchRun:
        """The row of ``run`` as last read (a run's row changes when it stops)."""
        return next((r for r in self.runs if r.id == run.id), run)

    def _show(self, runs: list[BenchRun]) -> None:
        self.runs = runs
        table = self.query_one("#runs", DataTable)
        keep = table.cursor_row
        table.clear()
        for run in runs:
            mark = "*" if self.marked is not None and self.marked.id == run.id else ""
            state = self.state(run)
            # the DB has a running run's row of its start; the job's progress says how far it is
            done, total = (self.progress if state == "running" and self.progress
                           else (run.n_episodes, run.episodes_total))
            started = run.started_at.strftime("%m-%d %H:%M") if run.started_at else "–"
            table.add_row(f"{run.id}{mark}", run.agent, started, f"{done}/{total}", Text(state, STATE_STYLES.get(state, "")),
                          pct(run.pass_at_1), f"{pct(run.pass_at_k)} k={run.k}" if run.k else "–", pct(run.action),
                          key=str(run.id))
        table.border_title = f"{len(runs)} benchmark runs"
        if runs:
            table.move_cursor(row=min(keep or 0, len(runs) - 1), animate=False)
            self.load_domains(runs[table.cursor_row])
        else:  # an empty view says what it read and how to fill it
            self.query_one("#domains", BarChart).update(Text(self.app.source.empty_hint("bench"), "yellow"))

    def selected(self) -> BenchRun | None:
        table = self.query_one("#runs", DataTable)
        if not self.runs or table.cursor_row is None or table.cursor_row >= len(self.runs):
            return None
        return self.runs[table.cursor_row]

    @on(DataTable.RowHighlighted, "#runs")
    def _highlighted(self) -> None:
        if (run := self.selected()) is not None:
            self.load_domains(run)

    @on(DataTable.RowSelected, "#runs")
    def _selected(self) -> None:
        self.action_episodes()

    @work(exit_on_error=False, thread=True, exclusive=True, group="domains")
    def load_domains(self, run: BenchRun) -> None:
        rows = self.app.source.records.domain_rows(run)
        errors = self.app.source.records.error_groups(run)
        problem = None if rows else run_dir_problem(run)
        # Threads are not stopped when a newer read replaces them: a read begun before the run's episodes were
        # written could land last and say "no episodes yet" of a finished run. Only the newest read is shown.
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show_domains, run, rows, errors, problem)

    def _show_domains(self, run: BenchRun, rows: list[DomainRow], errors: tuple[ErrorGroup, ...] = (),
                      problem: str | None = None) -> None:
        if (shown := self.selected()) is not None and shown.id != run.id:
            return  # the cursor has moved on; that run's read is on its way
        chart = self.query_one("#domains", BarChart)
        if problem is not None:  # in full: a chart's title wraps to the width of its (empty) table
            chart.update(Text(problem, "yellow"))
        else:
            chart.show([(r.domain, (r.pass_at_1, r.pass_at_k, r.action)) for r in rows],
                       title=f"run {run.id} · {run.agent} · per domain (Action: solved tasks only)" if rows
                       else f"run {run.id}: no episodes yet")
        panel = self.query_one("#errors", Static)
        panel.display = bool(errors)  # shown only for a run with errors: a wrong answer is not one
        panel.update("\n".join([f"run {run.id} {errors_line(errors)}",
                                 *(f"  {g.kind}: e.g. {g.example}" for g in errors)]))

    def action_episodes(self) -> None:
        if (run := self.selected()) is not None:
            self.app.push_screen(EpisodesScreen(run, lambda: self.state(self.latest(run))))

    def action_mark(self) -> None:
        if (run := self.selected()) is not None:
            self.marked = None if self.marked is not None and self.marked.id == run.id else run
            self._show(self.runs)

    def action_compare(self) -> None:
        run = self.selected()
        if run is None or self.marked is None or self.marked.id == run.id:
            self.notify("mark run A (m), then move to run B and press C", severity="warning")
            return
        self.app.push_screen(CompareScreen(self.marked, run))

    # ---- a new run ----
    def action_new_run(self) -> None:
        if self.job is not None:
            self.notify("a run is in progress; cancel it with x", severity="warning")
            return
        self.app.push_screen(NewRunScreen(self.app.source.default_tasks), self._start)

    def _start(self, request: BenchRunOptions | None) -> None:
        if request is None:
            return
        self.query_one("#job-row").display = True
        tasks = request.tasks.name if request.tasks else "the shipped tasks"
        self.query_one("#job-label", Static).update(f"{request.agent} on {tasks}: loading …")
        self.query_one("#job-progress", ProgressBar).update(total=None, progress=0)
        self.run_job(request)

    @work(exit_on_error=False, thread=True, exclusive=True, group="bench-job")
    def run_job(self, request: BenchRunOptions) -> None:
        source = self.app.source
        try:
            job = BenchJob(request, source.settings, source.records, source.catalog)
        except (ValueError, OSError) as exc:
            self.post_message(BenchFinished("", f"not started: {exc}"))
            return
        self.job = job
        try:
            result = job.run(lambda done, total, passed: self.post_message(BenchProgress(done, total, passed)))
            note = (f"done: {result.ran} episodes, pass@1 {pct(result.summary.pass_at[1])}; "
                    f"{errors_line(run_error_groups(job.run_dir))}")
        except JobCancelled as exc:
            note = str(exc)
            self.ended[run_key(job.run_dir)] = "cancelled"  # the run's record does not say why it stopped
        except (ValueError, OSError, LookupError) as exc:
            note = f"failed: {exc}"
            self.ended[run_key(job.run_dir)] = "failed"
        self.post_message(BenchFinished(str(job.run_dir), note))

    def on_bench_progress(self, message: BenchProgress) -> None:
        self.progress = (message.done, message.total)
        self.query_one("#job-progress", ProgressBar).update(total=message.total, progress=message.done)
        self.query_one("#job-label", Static).update(f"{message.done}/{message.total} episodes, {message.passed} passed")
        if message.done == 0 or message.done == message.total:
            self.load()
        elif self.job is not None:  # the running run's row follows the job's count (its DB row is of its start)
            key = run_key(self.job.run_dir)
            table = self.query_one("#runs", DataTable)
            for run in self.runs:
                if run.run_dir == key:
                    table.update_cell(str(run.id), self.columns["episodes"], f"{message.done}/{message.total}")

    def on_bench_finished(self, message: BenchFinished) -> None:
        self.job = None
        self.progress = None
        self.query_one("#job-label", Static).update(message.note)
        self.notify(message.note)
        self.load()

    def action_cancel_run(self) -> None:
        if self.job is None:
            self.notify("no run in progress", severity="warning")
            return
        self.job.cancel()
        self.query_one("#job-label", Static).update("cancelling after the current episode …")
