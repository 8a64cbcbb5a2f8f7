"""Training runs in the metadata DB: one ``TrainRun`` row per run folder, one ``TrainStep`` per logged step.

    engine = appliance.metadb.open_metadb(url); ensure_tables(engine)
    run = start_run(engine, run_dir, recipe="grpo_1gpu_small", kind="grpo", ...)
    add_step(engine, run.id, {"step": 1, "reward": 0.25, ...});  finish_run(engine, run.id, exit_code=0)

The tables live in SQLModel's shared metadata beside the appliance's own (``appliance.metadb``); ``ensure_tables``
creates them in an existing DB. The JSONL log in the run folder (``metrics.jsonl``) holds the same steps.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Field, Session, SQLModel, select

__all__ = ["TrainRun", "TrainStep", "add_step", "ensure_tables", "finish_run", "recent_runs", "start_run"]


def _now() -> datetime:
    return datetime.now(UTC)


class TrainRun(SQLModel, table=True):
    """One `kopa train grpo|sft` run."""

    id: int | None = Field(default=None, primary_key=True)
    run_dir: str = Field(index=True, unique=True)
    recipe: str
    kind: str  # grpo | sft
    model: str
    dataset: str
    ray_address: str | None = None
    status: str = "running"  # running | finished | failed
    exit_code: int | None = None
    steps: int = 0
    last_reward: float | None = None
    last_pass_rate: float | None = None
    started_at: datetime = Field(default_factory=_now)
    finished_at: datetime | None = None


class TrainStep(SQLModel, table=True):
    """The summary of one trainer step (``train.engines.verl.launch.STEP_FIELDS``)."""

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="trainrun.id", index=True)
    step: int
    reward: float | None = None
    pass_rate: float | None = None
    kl: float | None = None
    response_length: float | None = None
    prompt_length: float | None = None
    num_turns: float | None = None
    step_time_s: float | None = None
    recorded_at: datetime = Field(default_factory=_now)


def ensure_tables(engine: Engine) -> None:
    SQLModel.metadata.create_all(engine, tables=[TrainRun.__table__, TrainStep.__table__])  # type: ignore[attr-defined]


def start_run(engine: Engine, run_dir: str, **fields: Any) -> TrainRun:
    with Session(engine) as session:
        row = TrainRun(run_dir=run_dir, **fields)
        session.add(row)
        session.commit()
        session.refresh(row)
        return row


def add_step(engine: Engine, run_id: int, summary: dict[str, Any]) -> None:
    with Session(engine) as session:
        session.add(TrainStep(run_id=run_id, **{k: summary.get(k) for k in (
            "step", "reward", "pass_rate", "kl", "response_length", "prompt_length", "num_turns", "step_time_s")}))
        run = session.get(TrainRun, run_id)
        if run is not None:
            run.steps, run.last_reward, run.last_pass_rate = summary["step"], summary.get("reward"), summary.get("pass_rate")
            session.add(run)
        session.commit()


def finish_run(engine: Engine, run_id: int, exit_code: int) -> None:
    with Session(engine) as session:
        run = session.get(TrainRun, run_id)
        if run is not None:
            run.exit_code, run.finished_at = exit_code, _now()
            run.status = "finished" if exit_code == 0 else "failed"
            session.add(run)
            session.commit()


def recent_runs(engine: Engine, limit: int = 20) -> list[TrainRun]:
    with Session(engine) as session:
        return list(session.exec(select(TrainRun).order_by(TrainRun.id.desc()).limit(limit)))  # type: ignore[union-attr]
