"""Benchmark runs in the metadata DB: one ``BenchRun`` row per run directory, one ``BenchEpisodeResult`` per episode.

    engine = open_metadb(settings.metadb_url)
    row = record_bench_run(engine, Path("runs/x"))    # insert, or update the row of that directory
    recent_bench_runs(engine, limit=20), bench_episode_results(engine, row.id)

The row is rebuilt from the run directory's files every time (``bench.report`` reads them), so recording at
the start of a run, at its end, or after a resume all leave the row matching what the directory holds; the
episode rows of the run are replaced, never added to.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, delete, select

from bench.report import build_report, read_run_dir
from bench.runner import episode_result

from .metadb import BenchEpisodeResult, BenchRun

__all__ = ["bench_episode_results", "recent_bench_runs", "record_bench_run"]


def record_bench_run(engine: Engine, run_dir: Path) -> BenchRun:
    """Insert or update the row of ``run_dir`` (by its resolved path) and replace its episode rows.

    Raises:
        ValueError: ``run_dir`` is not a run directory (``bench.report.read_run_dir``).
        sqlalchemy.exc.SQLAlchemyError: the DB cannot be written.
    """
    files = read_run_dir(run_dir)
    config, meta = files.config, files.meta
    report = build_report(files) if files.episodes else None
    fields = {
        "agent": str(config.get("agent", "?")), "bundle": str(config.get("bundle", "?")),
        "upstream": str(config.get("upstream", "?")), "tasks_file": config.get("tasks_file"),
        "tasks_sha256": config.get("tasks_sha256"), "seeds": ",".join(str(s) for s in config.get("seeds", [])),
        "rollouts": int(config.get("rollouts", 0)), "n_tasks": int(config.get("n_tasks", 0)),
        "n_episodes": len(files.episodes), "episodes_total": int(meta.get("episodes_total") or 0),
        "started_at": _time(meta.get("started_at")), "finished_at": _time(meta.get("finished_at")),
        "complete": bool(meta.get("complete")), "pass_at_1": None, "k": None, "pass_at_k": None, "action": None,
        "ci_low": None, "ci_high": None, "recorded_at": datetime.now(UTC),
    }
    if report is not None:
        summary, k = report.summary, report.rollouts
        ci = summary.seed_ci
        fields.update(pass_at_1=summary.pass_at[1], action=summary.action,
                      k=k if k in summary.pass_at else None, pass_at_k=summary.pass_at.get(k),
                      ci_low=ci.low if ci else None, ci_high=ci.high if ci else None)
    key = str(Path(run_dir).resolve())
    with Session(engine) as session:
        row = session.exec(select(BenchRun).where(BenchRun.run_dir == key)).first()
        if row is None:
            row = BenchRun(run_dir=key, **fields)
        else:
            for name, value in fields.items():
                setattr(row, name, value)
        session.add(row)
        session.flush()  # gives a new row its id
        session.exec(delete(BenchEpisodeResult).where(col(BenchEpisodeResult.run_id) == row.id))
        session.add_all(BenchEpisodeResult(run_id=row.id, error=line.get("error"), **episode_result(line).model_dump())
                        for line in files.episodes)
        session.commit()
        session.refresh(row)
        return row


def recent_bench_runs(engine: Engine, limit: int = 20) -> list[BenchRun]:
    """The most recently started runs first (runs not yet started last)."""
    with Session(engine) as session:
        return list(session.exec(select(BenchRun).order_by(col(BenchRun.started_at).desc().nulls_last(),
                                                           col(BenchRun.id).desc()).limit(limit)))


def bench_episode_results(engine: Engine, run_id: int) -> list[BenchEpisodeResult]:
    """A run's episode rows in (task, seed, rollout) order."""
    with Session(engine) as session:
        return list(session.exec(select(BenchEpisodeResult).where(BenchEpisodeResult.run_id == run_id)
                                 .order_by(col(BenchEpisodeResult.task_id), col(BenchEpisodeResult.seed),
                                           col(BenchEpisodeResult.rollout))))


def _time(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None
