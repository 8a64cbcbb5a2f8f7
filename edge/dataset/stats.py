"""Dataset statistics beside the paper's: call structure (Table 10), one-to-many chaining (Table 11), type mix (Table 12).

    stats = dataset_stats(items)
    print(stats.table())          # ours beside the paper's, one line per figure
    stats.as_json()

Definitions (paper Appendix G):

* **calls per task** — golden calls, parallel ones each counted; mean / median / min / max.
* **steps** — sequential steps (parallel calls share one): the share of tasks with ≤3, 4–5 and ≥6.
* **calls ≤3 / 4–5 / ≥6** — the same buckets over calls per task. Table 10 labels its buckets "steps", but they
  read as calls: its median of 4 calls puts more than half the tasks at ≥4 calls (57.6 %, 42.3 % at ≤3), while
  Table 12's mix caps ≥4 *sequential* steps at 36.7 % (SEM, CMP and COND are non-sequential, SEQ, FAN and DRV
  single-junction: two sequential calls, a FAN's or DRV's several parallel; only MIXED chains reach four). Both
  readings are reported beside the paper's one column.
* **sequential / parallel calls** — a call alone in its step is sequential, one sharing its step with others parallel.
* **one-to-many chaining** — as Table 11's caption defines it: of the multi-step trajectories, the share with at
  least one junction consuming a multi-record tool output (its source call, the latest call of the source tool
  before the target's, returned ≥ 2 records in ``call_records``).
* **… of chained tasks** — the same share over the tasks with at least one junction (the text beside Table 11 says
  "81.2 % of chained calls are one-to-many"). The two differ by the multi-step tasks that chain nothing: a SEM or
  CMP task whose parallel calls the calculator or a workspace call closes at a second step, a COND task whose check
  decides the next call. The paper's non-sequential templates (SEM, CMP) are parallel calls, so its caption's
  multi-step set holds few of them; ours hold every one, and each lowers the caption's share.
* **chained cardinality** — the records consumed at those junctions (the caption's "records consumed"): median, p90
  (nearest rank), max. Records of the recorded page: the paper's maximum of 224,958 reads as a table's total, which a
  page of at most 1,000 records cannot reach.
* **… by distinct values** — the same two figures over junctions whose bound field held n ≥ 2 distinct values (§3.3's
  cardinality, what types a junction). A SEQ junction (n = 1) can consume a many-record output, so this share is the
  smaller one.
* **multi-record calls** — the share of calls whose recorded result (``call_records``) held ≥ 2 records.
* **type mix** — Table 12's classes, as a share of the tasks.
* **calls by class** — per Table 12 class, calls per task (mean, median) and the share with ≥ 4 calls: where the
  depth of Table 10 comes from (the paper gives no such split).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from edge.synth.item import SynthItem, TaskType

__all__ = ["PAPER_TABLE_10", "PAPER_TABLE_11", "PAPER_TABLE_12", "DatasetStats", "dataset_stats", "nearest_rank"]

# Table 10 (Appendix G): over the 1,781 synthesized tasks.
PAPER_TABLE_10 = {"calls_mean": 4.13, "calls_median": 4, "calls_min": 2, "calls_max": 36,
                  "steps_le3": 42.3, "steps_4_5": 50.9, "steps_ge6": 6.7, "sequential": 63.8, "parallel": 36.2}
# Table 11 ("Ours" row) and the text beside it: 74.1% of calls return at least two records.
PAPER_TABLE_11 = {"one_to_many": 81.2, "cardinality_median": 27, "cardinality_p90": 157, "cardinality_max": 224958,
                  "multi_record_calls": 74.1}
# Table 12: share of each task type, %.
PAPER_TABLE_12 = {"MIXED": 36.7, "DRV": 19.7, "SEM": 17.0, "SEQ": 12.1, "CMP": 9.0, "COND": 2.8, "FAN": 2.7}


def nearest_rank(values: Sequence[float], q: float) -> float:
    """The q-quantile by nearest rank: the ceil(q·n)-th smallest value (an observed value, no interpolation)."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    return ordered[max(math.ceil(q * len(ordered)), 1) - 1]


def _pct(part: int, whole: int) -> float:
    return 100.0 * part / whole if whole else 0.0


@dataclass(frozen=True)
class DatasetStats:
    n_tasks: int
    calls_mean: float
    calls_median: float
    calls_min: int
    calls_max: int
    steps_le3: float
    steps_4_5: float
    steps_ge6: float
    calls_le3: float
    calls_4_5: float
    calls_ge6: float
    sequential: float
    parallel: float
    one_to_many: float
    multi_step_tasks: int
    one_to_many_chained: float
    chained_tasks: int
    cardinality_median: float | None
    cardinality_p90: float | None
    cardinality_max: int | None
    one_to_many_values: float
    value_cardinality_median: float | None
    value_cardinality_p90: float | None
    value_cardinality_max: int | None
    multi_record_calls: float
    type_counts: dict[str, int]
    type_shares: dict[str, float]
    calls_by_type: dict[str, dict[str, float]]  # class → {"mean", "median", "ge4"} (ge4: % of its tasks)

    def rows(self) -> list[tuple[str, str, str]]:
        """(figure, ours, paper)."""
        t10, t11 = PAPER_TABLE_10, PAPER_TABLE_11

        def card(v: float | None) -> str:
            return "n/a" if v is None else f"{v:g}"

        rows = [
            ("Table 10: calls per task (mean / med. / min / max)",
             f"{self.calls_mean:.2f} / {self.calls_median:g} / {self.calls_min} / {self.calls_max}",
             f"{t10['calls_mean']} / {t10['calls_median']} / {t10['calls_min']} / {t10['calls_max']}"),
            ("Table 10: steps <=3 / 4-5 / >=6 (%)",
             f"{self.steps_le3:.1f} / {self.steps_4_5:.1f} / {self.steps_ge6:.1f}",
             f"{t10['steps_le3']} / {t10['steps_4_5']} / {t10['steps_ge6']}"),
            ("Table 10 read as calls: <=3 / 4-5 / >=6 (%)",
             f"{self.calls_le3:.1f} / {self.calls_4_5:.1f} / {self.calls_ge6:.1f}",
             f"{t10['steps_le3']} / {t10['steps_4_5']} / {t10['steps_ge6']}"),
            ("Table 10: calls sequential / parallel (%)", f"{self.sequential:.1f} / {self.parallel:.1f}",
             f"{t10['sequential']} / {t10['parallel']}"),
            ("Table 11: one-to-many chaining, of multi-step tasks (%)", f"{self.one_to_many:.1f}",
             f"{t11['one_to_many']}"),
            ("Table 11: one-to-many chaining, of chained tasks (%)",
             f"{self.one_to_many_chained:.1f} ({self.chained_tasks} tasks)", f"{t11['one_to_many']}"),
            ("Table 11: chained cardinality median / p90 / max",
             f"{card(self.cardinality_median)} / {card(self.cardinality_p90)} / {card(self.cardinality_max)}",
             f"{t11['cardinality_median']} / {t11['cardinality_p90']} / {t11['cardinality_max']:,}"),
            ("Table 11 by distinct values: one-to-many (%); median / p90 / max",
             f"{self.one_to_many_values:.1f}; {card(self.value_cardinality_median)} / "
             f"{card(self.value_cardinality_p90)} / {card(self.value_cardinality_max)}", "–"),
            ("Appendix G: calls returning >=2 records (%)", f"{self.multi_record_calls:.1f}",
             f"{t11['multi_record_calls']}"),
        ]
        rows += [(f"Table 12: {name} (%)", f"{self.type_shares[name]:.1f} ({self.type_counts[name]})", f"{paper}")
                 for name, paper in PAPER_TABLE_12.items()]
        rows += [(f"calls per {name} task: mean / med. / >=4 (%)",
                  f"{c['mean']:.2f} / {c['median']:g} / {c['ge4']:.1f}", "–")
                 for name in PAPER_TABLE_12 if (c := self.calls_by_type.get(name))]
        return rows

    def table(self) -> str:
        width = max(len(r[0]) for r in self.rows())
        lines = [f"{'figure':<{width}}  {'ours':<28} paper", *(
            f"{name:<{width}}  {ours:<28} {paper}" for name, ours, paper in self.rows())]
        return "\n".join(lines + [f"({self.n_tasks} tasks)"])

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "paper": {"table_10": PAPER_TABLE_10, "table_11": PAPER_TABLE_11,
                                          "table_12": PAPER_TABLE_12}}


def _buckets(counts: Sequence[int], whole: int) -> tuple[float, float, float]:
    """The shares (%) of ``counts`` at ≤3, 4–5 and ≥6 (Table 10's buckets)."""
    return (_pct(sum(1 for c in counts if c <= 3), whole), _pct(sum(1 for c in counts if 4 <= c <= 5), whole),
            _pct(sum(1 for c in counts if c >= 6), whole))


def _spread(values: Sequence[int]) -> tuple[float | None, float | None, int | None]:
    """Median, p90 (nearest rank) and max of ``values``; None each when there are none."""
    if not values:
        return None, None, None
    return statistics.median(values), nearest_rank(values, 0.9), max(values)


def _records_consumed(item: SynthItem, junction: Any) -> int:
    """The records of the junction's source call: the latest call of its source tool before the target's last call
    (0 when the trajectory has no such call)."""
    actions = item.task.golden_actions
    target_steps = [a.step for a in actions if a.tool == junction.target]
    before = max(target_steps) if target_steps else math.inf
    sources = [(a.step, n) for a, n in zip(actions, item.call_records, strict=True)
               if a.tool == junction.source and a.step < before]
    if not sources:
        return 0
    last = max(step for step, _ in sources)
    return max(n for step, n in sources if step == last)


def dataset_stats(items: Sequence[SynthItem]) -> DatasetStats:
    """Tables 10-12 for ``items``.

    Raises:
        ValueError: no items, or an item whose ``call_records`` does not have one entry per golden call.
    """
    if not items:
        raise ValueError("no items: statistics need at least one task")
    calls = [len(i.task.golden_actions) for i in items]
    steps = [i.task.n_steps for i in items]
    per_step = Counter((i.task.id, a.step) for i in items for a in i.task.golden_actions)
    sequential = sum(1 for n in per_step.values() if n == 1)
    all_calls = sum(calls)
    multi_step = [i for i in items if i.task.n_steps >= 2]
    for i in items:
        if len(i.call_records) != len(i.task.golden_actions):
            raise ValueError(f"item {i.task.id}: call_records has {len(i.call_records)} entries for "
                             f"{len(i.task.golden_actions)} golden calls")
    consumed = {i.task.id: [_records_consumed(i, j) for j in i.junctions] for i in items}
    one_to_many = sum(1 for i in multi_step if any(n >= 2 for n in consumed[i.task.id]))
    chained = [i for i in items if i.junctions]
    one_to_many_chained = sum(1 for i in chained if any(n >= 2 for n in consumed[i.task.id]))
    cardinalities = [n for i in items for n in consumed[i.task.id] if n >= 2]
    one_to_many_values = sum(1 for i in multi_step if any(j.cardinality >= 2 for j in i.junctions))
    values = [j.cardinality for i in items for j in i.junctions if j.cardinality >= 2]
    multi_record = sum(1 for i in items for n in i.call_records if n >= 2)
    types = Counter(i.task_type.value for i in items)
    steps_le3, steps_4_5, steps_ge6 = _buckets(steps, len(items))
    calls_le3, calls_4_5, calls_ge6 = _buckets(calls, len(items))
    cardinality_median, cardinality_p90, cardinality_max = _spread(cardinalities)
    value_median, value_p90, value_max = _spread(values)
    return DatasetStats(
        n_tasks=len(items), calls_mean=statistics.fmean(calls), calls_median=statistics.median(calls),
        calls_min=min(calls), calls_max=max(calls),
        steps_le3=steps_le3, steps_4_5=steps_4_5, steps_ge6=steps_ge6,
        calls_le3=calls_le3, calls_4_5=calls_4_5, calls_ge6=calls_ge6,
        sequential=_pct(sequential, all_calls), parallel=_pct(all_calls - sequential, all_calls),
        one_to_many=_pct(one_to_many, len(multi_step)), multi_step_tasks=len(multi_step),
        one_to_many_chained=_pct(one_to_many_chained, len(chained)), chained_tasks=len(chained),
        cardinality_median=cardinality_median, cardinality_p90=cardinality_p90, cardinality_max=cardinality_max,
        one_to_many_values=_pct(one_to_many_values, len(multi_step)),
        value_cardinality_median=value_median, value_cardinality_p90=value_p90, value_cardinality_max=value_max,
        multi_record_calls=_pct(multi_record, all_calls),
        type_counts={t.value: types.get(t.value, 0) for t in TaskType},
        type_shares={t.value: _pct(types.get(t.value, 0), len(items)) for t in TaskType},
        calls_by_type=_calls_by_type(items))


def _calls_by_type(items: Sequence[SynthItem]) -> dict[str, dict[str, float]]:
    by_type: dict[str, list[int]] = {}
    for i in items:
        by_type.setdefault(i.task_type.value, []).append(len(i.task.golden_actions))
    return {t: {"mean": statistics.fmean(c), "median": statistics.median(c),
                "ge4": _pct(sum(1 for n in c if n >= 4), len(c))} for t, c in sorted(by_type.items())}
