"""Operational metadata DB: what the appliance did and when (SQLModel; SQLite by default).

Recorded data (worlds, cassettes) lives in files; this DB only indexes operations on them so the
console and the CLI can list them. Its location is ``KopaSettings.metadb_url``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.engine import Engine
from sqlmodel import Field, Session, SQLModel, create_engine, select


def _now() -> datetime:
    return datetime.now(UTC)


class WorldBuild(SQLModel, table=True):
    """A sandbox world file the appliance built or opened."""

    id: int | None = Field(default=None, primary_key=True)
    version: str
    seed: int
    scale: float
    content_hash: str = Field(index=True)
    path: str
    seconds: float | None = None
    recorded_at: datetime = Field(default_factory=_now)


class SandboxSession(SQLModel, table=True):
    """One run of `kopa sandbox serve`."""

    id: int | None = Field(default=None, primary_key=True)
    world_version: str
    content_hash: str
    host: str
    port: int
    faults: str
    started_at: datetime = Field(default_factory=_now)
    stopped_at: datetime | None = None


class BenchRun(SQLModel, table=True):
    """One `kopa bench run` directory: its configuration and, once episodes are in, its summary.

    Keyed by the run directory's resolved path: resuming a run updates its row (``appliance.bench_records``).
    """

    id: int | None = Field(default=None, primary_key=True)
    run_dir: str = Field(index=True, unique=True)
    agent: str
    bundle: str
    upstream: str
    tasks_file: str | None = None
    tasks_sha256: str | None = None
    seeds: str  # comma-separated, as --seeds takes them
    rollouts: int
    n_tasks: int
    n_episodes: int = 0  # episodes written so far
    episodes_total: int = 0
    started_at: datetime | None = None
    finished_at: datetime | None = None
    complete: bool = False
    pass_at_1: float | None = None
    k: int | None = None  # the k of pass_at_k (the rollouts), None while some task has fewer episodes
    pass_at_k: float | None = None
    action: float | None = None
    ci_low: float | None = None  # pass@1 over seeds, 95 % Student t; None with one seed
    ci_high: float | None = None
    recorded_at: datetime = Field(default_factory=_now)


class BenchEpisodeResult(SQLModel, table=True):
    """One episode of a ``BenchRun`` (the transcript stays in the run's episodes.jsonl)."""

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="benchrun.id", index=True)
    task_id: str = Field(index=True)
    domain: str
    seed: int
    rollout: int
    passed: bool
    action: float
    error: str | None = None


def open_metadb(url: str) -> Engine:
    """Create the engine (and the file's folder and tables) for ``url``."""
    if url.startswith("sqlite:///"):
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url)
    SQLModel.metadata.create_all(engine)
    return engine


def record(engine: Engine, row: SQLModel) -> SQLModel:
    with Session(engine) as session:
        session.add(row)
        session.commit()
        session.refresh(row)
        return row


def latest_world_builds(engine: Engine, limit: int = 20) -> list[WorldBuild]:
    with Session(engine) as session:
        return list(session.exec(select(WorldBuild).order_by(WorldBuild.id.desc()).limit(limit)))


def close_session(engine: Engine, session_id: int) -> None:
    with Session(engine) as session:
        row = session.get(SandboxSession, session_id)
        if row is not None:
            row.stopped_at = _now()
            session.add(row)
            session.commit()
