"""What the metadata DB holds for the console: benchmark runs and their episodes, training jobs and their steps.

    records = Records("sqlite:///home/kopa.db")
    records.bench_runs(); records.bench_episodes(run_id); records.episode_line(run, "fin-001", 0, 0)
    records.domain_rows(run)          # pass@1 / pass@k / Action per domain (bench.report over the run dir)
    records.error_groups(run)         # the episodes that ended with an error, by kind (not wrong answers)
    records.compare(run_a, run_b)     # bench.report.compare_runs
    records.train_runs(); records.train_steps(run_id)

Every read opens and disposes its own engine: the console's workers run in threads.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from appliance.bench_records import bench_episode_results, recent_bench_runs, record_bench_run
from appliance.metadb import BenchEpisodeResult, BenchRun, open_metadb
from bench.report import Comparison, ErrorGroup, build_report, compare_runs, load_run, read_run_dir, run_error_groups
from train.records import TrainRun, TrainStep, ensure_tables, recent_runs

RUN_LIMIT = 50


@dataclass(frozen=True)
class DomainRow:
    domain: str
    n_tasks: int
    pass_at_1: float
    pass_at_k: float | None
    action: float | None


class Records:
    def __init__(self, url: str) -> None:
        self.url = url

    @contextmanager
    def engine(self):
        engine: Engine = open_metadb(self.url)
        try:
            ensure_tables(engine)
            yield engine
        finally:
            engine.dispose()

    def bench_runs(self) -> list[BenchRun]:
        with self.engine() as engine:
            return recent_bench_runs(engine, RUN_LIMIT)

    def bench_episodes(self, run_id: int) -> list[BenchEpisodeResult]:
        with self.engine() as engine:
            return bench_episode_results(engine, run_id)

    def record_run(self, run_dir: Path) -> BenchRun:
        with self.engine() as engine:
            return record_bench_run(engine, run_dir)

    def domain_rows(self, run: BenchRun) -> list[DomainRow]:
        """Per-domain figures of the run's directory (none when it is gone or has no episode yet)."""
        try:
            files = read_run_dir(Path(run.run_dir))
        except (ValueError, OSError):
            return []
        if not files.episodes:
            return []
        report = build_report(files)
        k = report.rollouts
        return [DomainRow(d.domain, d.n_tasks, d.pass_at[1], d.pass_at.get(k) if k != 1 else None, d.action)
                for d in report.domains]

    def error_groups(self, run: BenchRun) -> tuple[ErrorGroup, ...]:
        """The run's episode errors by kind, with an example each (none when its directory is gone)."""
        try:
            return run_error_groups(Path(run.run_dir))
        except (ValueError, OSError):
            return ()

    def episode_line(self, run: BenchRun, task_id: str, seed: int, rollout: int) -> dict[str, Any] | None:
        """The episode's line in the run's episodes.jsonl (its transcript), or None."""
        path = Path(run.run_dir) / "episodes.jsonl"
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            return None
        for raw in text.splitlines():
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            if (line.get("task_id"), line.get("seed"), line.get("rollout")) == (task_id, seed, rollout):
                return line
        return None

    def compare(self, a: BenchRun, b: BenchRun) -> Comparison:
        """Run B against run A (``bench.report.compare_runs``).

        Raises:
            ValueError: a run directory is gone or unreadable.
        """
        return compare_runs(load_run(Path(a.run_dir)), load_run(Path(b.run_dir)))

    def train_runs(self) -> list[TrainRun]:
        with self.engine() as engine:
            return recent_runs(engine, RUN_LIMIT)

    def train_steps(self, run_id: int) -> list[TrainStep]:
        with self.engine() as engine, Session(engine) as session:
            return list(session.exec(select(TrainStep).where(TrainStep.run_id == run_id)
                                     .order_by(col(TrainStep.step))))
