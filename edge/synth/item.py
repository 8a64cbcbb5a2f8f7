"""A synthesized training item: a KOPA-Bench task plus what Phase B knows about how it was made.

    item = SynthItem(task=task, task_type=TaskType.DRV, junctions=(...), final=None, recipe={...}, ...)
    item.task            # a bench.task.Task: query, golden_actions (parallel calls share a step), answer spec
    item.task_type       # Table 12's class
    item.junctions       # every junction crossed, with its cardinality n and type (φ = 5)

The task is the bench's own model, so the bench scorers score an item unchanged and ``validate_against_catalog``
checks it at export. Everything else is what the filters, the statistics (Tables 10-12) and the export read.
This module is the contract between ``edge.synth`` (which makes items), ``edge.filter`` and ``edge.dataset``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from bench.task import Task

__all__ = ["FAN_BUDGET", "FinalType", "Junction", "JunctionType", "Rejection", "SynthItem", "TaskType"]

FAN_BUDGET = 5  # φ (Table 9): n = 1 SEQ, 2..φ FAN, n > φ DRV


class JunctionType(StrEnum):
    SEQ = "SEQ"  # n = 1: the single value passes on
    FAN = "FAN"  # 2 <= n <= φ: one downstream call per value, in parallel (one step)
    DRV = "DRV"  # n > φ: a derivation (max, min, >=, <=, equality, date-after, most-frequent) selects first


class FinalType(StrEnum):
    SEM = "SEM"  # semantic lookup: a field of the record the chain arrived at
    CMP = "CMP"  # comparison across parallel branches
    COND = "COND"  # conditional: a check decides what is answered (or done)


class TaskType(StrEnum):
    """Table 12's classes: a trajectory with one pattern takes its name, one combining several is MIXED."""

    MIXED = "MIXED"
    DRV = "DRV"
    SEM = "SEM"
    SEQ = "SEQ"
    CMP = "CMP"
    COND = "COND"
    FAN = "FAN"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Junction(_Model):
    source: str = Field(description="tool whose output crosses the junction")
    target: str = Field(description="tool whose parameter it fills")
    field: str = Field(description="output field of source")
    param: str = Field(description="parameter of target")
    cardinality: int = Field(ge=1, description="n: distinct values of field in source's records")
    type: JunctionType
    operator: str | None = Field(None, description="DRV only: max, min, ge, le, eq, date_after, latest, earliest, "
                                                   "most_frequent")
    pivot: Any = Field(None, description="DRV threshold/equality/date pivot, chosen from observed values")


class SynthItem(_Model):
    task: Task
    task_type: TaskType
    junctions: tuple[Junction, ...] = ()
    final: FinalType | None = None
    recipe: dict[str, Any] = Field(description="how the answer is computed from the golden calls' records "
                                               "(edge.synth.answer recomputes it from replayed records)")
    call_records: tuple[int, ...] = Field(description="records each golden call returned, in golden order")
    seed: int
    graph_run: str = Field(description="the Phase A run the walk was drawn from (file name)")
    writer: str = Field(description="who wrote the query: 'rule:<phrasing id>' or 'llm:<model>'")


class Rejection(_Model):
    item_id: str
    stage: Literal["validity", "answerability", "quality", "contamination"]
    reason: str = Field(description="what was wrong, naming the value or the item it duplicates")
