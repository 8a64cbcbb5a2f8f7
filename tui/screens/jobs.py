"""Jobs view: EDGE graph builds (counts, rounds, Figure 4 beside the paper), synthesis datasets (the filter
funnel, Table 12 beside the paper), and training jobs with reward, KL and step time as they stream in.
A tab with nothing in it names what it read and the ``kopa`` command that fills it."""

from __future__ import annotations

from rich.table import Table
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Sparkline, Static, TabbedContent, TabPane

from train.records import TrainRun, TrainStep

from ..sources import DatasetRun, GraphRun
from ..widgets import BarChart
from .errors import ShowsWorkerErrors
from .tabs import show_tab

TRAIN_POLL_S = 2.0  # how often a running training job's steps are re-read
TAB_OF = {"graphs": "graph-runs", "datasets": "dataset-runs", "training": "train-runs"}  # tab -> its table


class JobsScreen(ShowsWorkerErrors, Screen):
    CSS_PATH = "jobs.tcss"
    BINDINGS = [
        Binding("e", "tab('graphs')", "Graphs"),
        Binding("s", "tab('datasets')", "Datasets"),
        Binding("t", "tab('training')", "Training"),
        Binding("r", "refresh", "Refresh"),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial="graphs"):
            with TabPane("EDGE graphs", id="graphs"):
                yield DataTable(id="graph-runs", cursor_type="row")
                yield Static("", id="graphs-empty", classes="note empty")
                yield BarChart(("ours", "paper"), bar_width=14, id="figure-4")
                yield Static("", id="graph-rounds")
            with TabPane("Datasets", id="datasets"):
                yield DataTable(id="dataset-runs", cursor_type="row")
                yield Static("", id="datasets-empty", classes="note empty")
                with Horizontal(id="dataset-panes"):
                    yield Static("", id="funnel")
                    yield BarChart(("ours", "paper"), bar_width=8, id="table-12")
            with TabPane("Training", id="training"):
                yield DataTable(id="train-runs", cursor_type="row")
                yield Static("", id="training-empty", classes="note empty")
                with Vertical(id="train-metrics"):
                    for name in ("reward", "kl", "step_time_s"):
                        yield Static("", id=f"label-{name}", classes="metric-label")
                        yield Sparkline([], id=f"spark-{name}", classes="metric-spark")
        yield Footer()

    def on_mount(self) -> None:
        self.graphs: list[GraphRun] = []
        self.datasets: list[DatasetRun] = []
        self.train_runs: list[TrainRun] = []
        self.query_one("#graph-runs", DataTable).add_columns("graph run", "admitted", "live", "pruned", "rounds")
        self.query_one("#dataset-runs", DataTable).add_columns("dataset", "items", "kept")
        self.query_one("#train-runs", DataTable).add_columns("id", "recipe", "kind", "status", "steps", "reward")
        self.action_refresh()
        if getattr(self.app, "poll_s", None):  # a console that polls the gateway streams training steps too
            self.set_interval(TRAIN_POLL_S, self._poll_training)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A tab's key is not offered on that tab: there it would do nothing."""
        if action == "tab":
            tabs = self.query(TabbedContent)
            return not tabs or tabs.first().active != parameters[0]
        return True

    @on(TabbedContent.TabActivated)
    def _tab_changed(self) -> None:
        self.refresh_bindings()

    def action_tab(self, tab: str) -> None:
        show_tab(self.query_one(TabbedContent), tab)

    def _empty(self, tab: str, empty: bool) -> None:
        """An empty tab says what it read and how to fill it, in place of its (hidden) table."""
        self.query_one(f"#{TAB_OF[tab]}", DataTable).display = not empty
        hint = self.query_one(f"#{tab}-empty", Static)
        hint.display = empty
        if empty:
            hint.update(self.app.source.empty_hint(tab))

    def action_refresh(self) -> None:
        self.load_edge()
        self.load_training()

    # ---- EDGE ----
    @work(exit_on_error=False, thread=True, exclusive=True, group="edge")
    def load_edge(self) -> None:
        edge = self.app.source.edge
        graphs, datasets = edge.graphs(), edge.datasets()
        self.app.call_from_thread(self._show_edge, graphs, datasets)

    def _show_edge(self, graphs: list[GraphRun], datasets: list[DatasetRun]) -> None:
        self.graphs, self.datasets = graphs, datasets
        table = self.query_one("#graph-runs", DataTable)
        table.clear()
        for g in graphs:
            table.add_row(g.name, f"{g.admitted:,}", f"{g.live:,}", f"{g.pruned:,}", str(len(g.rounds)))
        if graphs:
            self._show_graph(graphs[0])
        self._empty("graphs", not graphs)
        table = self.query_one("#dataset-runs", DataTable)
        table.clear()
        for d in datasets:
            kept = next(reversed(d.funnel.values()))["out"] if d.funnel else d.items
            table.add_row(d.name, f"{sum(c['in'] for c in list(d.funnel.values())[:1]) or d.items:,}", f"{kept:,}")
        if datasets:
            self._show_dataset(datasets[0])
        self._empty("datasets", not datasets)

    @on(DataTable.RowHighlighted, "#graph-runs")
    def _graph_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.graphs):
            self._show_graph(self.graphs[event.cursor_row])

    def _show_graph(self, g: GraphRun) -> None:
        self.query_one("#figure-4", BarChart).show(
            [(name, (g.figure_4.get(name), g.paper_figure_4.get(name))) for name in ("skeleton", "refined", "pruned")],
            title="Figure 4: edge execution success (in-loop trials)")
        rounds = " ".join(f"r{r}:{s}/{t}" for r, _paths, t, s, _pruned in g.rounds)
        self.query_one("#graph-rounds", Static).update(g.error or f"rounds (successes/trials): {rounds}")

    @on(DataTable.RowHighlighted, "#dataset-runs")
    def _dataset_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.datasets):
            self._show_dataset(self.datasets[event.cursor_row])

    def _show_dataset(self, d: DatasetRun) -> None:
        funnel = Table("stage", "in", "rej.", "out", box=None, title="filter funnel", title_justify="left")
        for stage, c in d.funnel.items():
            funnel.add_row(stage, f"{c['in']:,}", f"{c['rejected']:,}", f"{c['out']:,}")
        self.query_one("#funnel", Static).update(funnel if d.funnel else d.error or "not filtered yet")
        self.query_one("#table-12", BarChart).show(
            [(name, (d.table_12.get(name, 0.0) / 100, paper / 100)) for name, paper in d.paper_table_12.items()],
            title="Table 12: task types")

    # ---- training ----
    def _poll_training(self) -> None:
        if any(r.status == "running" for r in self.train_runs):
            self.load_training()

    def load_training(self) -> None:
        self._load_training(self.query_one("#train-runs", DataTable).cursor_row or 0)

    @work(exit_on_error=False, thread=True, exclusive=True, group="training")
    def _load_training(self, row: int) -> None:
        records = self.app.source.records
        runs = records.train_runs()
        row = row if row < len(runs) else 0
        steps = records.train_steps(runs[row].id) if runs else []
        self.app.call_from_thread(self._show_training, runs, row, steps)

    def _show_training(self, runs: list[TrainRun], row: int, steps: list[TrainStep]) -> None:
        self.train_runs = runs
        table = self.query_one("#train-runs", DataTable)
        table.clear()
        for r in runs:
            table.add_row(str(r.id), r.recipe, r.kind, r.status, str(r.steps),
                          "–" if r.last_reward is None else f"{r.last_reward:.3f}")
        if runs:
            table.move_cursor(row=row, animate=False)
        self._empty("training", not runs)
        self._show_steps(steps)

    @on(DataTable.RowSelected, "#train-runs")
    def _train_selected(self) -> None:
        self.load_training()

    def _show_steps(self, steps: list[TrainStep]) -> None:
        for name, label in (("reward", "reward"), ("kl", "KL"), ("step_time_s", "step time (s)")):
            values = [float(getattr(s, name)) for s in steps if getattr(s, name) is not None]
            last = f"{values[-1]:.4g}" if values else "–"
            self.query_one(f"#label-{name}", Static).update(f"{label}: {last}  ({len(values)} steps)")
            self.query_one(f"#spark-{name}", Sparkline).data = values  # none yet: an empty line, not a flat bar
