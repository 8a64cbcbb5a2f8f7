"""EDGE runs in the appliance home for the console: Phase A graph builds and Phase B dataset folders.

    jobs = EdgeJobs(home, catalog)
    jobs.graphs()      # <home>/edge/graphs/*.duckdb: counts, rounds, in-loop success per edge set (Figure 4)
    jobs.datasets()    # <home>/edge/datasets/*/: the filter funnel and Table 12's type mix beside the paper

Figure 4 here is the success of the run's own edge executions per set; the held-out measurement
(``kopa edge graph stats RUN``) runs new trials and is not started from the console.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from edge.dataset.items_io import DatasetFileError, read_items
from edge.dataset.stats import PAPER_TABLE_12, dataset_stats
from edge.graph.stats import PAPER_FIGURE_4, SUCCESS, graph_counts
from edge.graph.store import GraphStore, GraphStoreError
from mcp_gateway.catalog import Catalog


@dataclass(frozen=True)
class GraphRun:
    name: str
    admitted: int
    live: int
    pruned: int
    rounds: list[tuple[int, int, int, int, int]]  # (round, paths, trials, successes, pruned)
    figure_4: dict[str, float | None]  # skeleton / refined / pruned: in-loop edge execution success
    paper_figure_4: dict[str, float] = field(default_factory=lambda: dict(PAPER_FIGURE_4))
    error: str | None = None


@dataclass(frozen=True)
class DatasetRun:
    name: str
    items: int
    funnel: dict[str, dict[str, int]]  # stage -> in / rejected / out
    table_12: dict[str, float]  # type -> share of the (kept) items, %
    paper_table_12: dict[str, float] = field(default_factory=lambda: dict(PAPER_TABLE_12))
    error: str | None = None


class EdgeJobs:
    def __init__(self, home: Path, catalog: Catalog) -> None:
        self.graphs_dir, self.datasets_dir, self.catalog = home / "edge" / "graphs", home / "edge" / "datasets", catalog

    def graphs(self) -> list[GraphRun]:
        return [self._graph(p) for p in sorted(self.graphs_dir.glob("*.duckdb"))]

    def _graph(self, path: Path) -> GraphRun:
        try:
            store = GraphStore.open(path)
        except (GraphStoreError, OSError) as exc:
            return GraphRun(path.stem, 0, 0, 0, [], {}, error=str(exc))
        try:
            counts = graph_counts(store, self.catalog)
            edges = store.edges()
            live = {e.key for e in edges if e.pruned_round is None}
            executed: dict[str, list[bool]] = {"skeleton": [], "refined": [], "pruned": []}
            for trial in store.trials():
                if trial.hop == 0:
                    continue  # the source call: not an edge execution
                ok = trial.outcome in SUCCESS
                executed["skeleton"].append(ok)
                executed["refined" if (trial.source, trial.target) in live else "pruned"].append(ok)
            rates = {name: (sum(v) / len(v) if v else None) for name, v in executed.items()}
            return GraphRun(path.stem, counts.admitted, counts.live, counts.pruned, store.rounds(), rates)
        finally:
            store.close()

    def datasets(self) -> list[DatasetRun]:
        if not self.datasets_dir.is_dir():
            return []
        return [self._dataset(p) for p in sorted(self.datasets_dir.iterdir()) if (p / "items.jsonl").is_file()]

    def _dataset(self, folder: Path) -> DatasetRun:
        try:
            kept = folder / "kept.jsonl"
            items = read_items(kept if kept.exists() else folder / "items.jsonl")
            funnel_file = folder / "funnel.json"
            funnel = json.loads(funnel_file.read_text(encoding="utf-8")).get("counts", {}) if funnel_file.exists() else {}
            stats = dataset_stats(items)
        except (DatasetFileError, ValueError, OSError) as exc:
            return DatasetRun(folder.name, 0, {}, {}, error=str(exc))
        return DatasetRun(folder.name, stats.n_tasks, funnel, dict(stats.type_shares))
