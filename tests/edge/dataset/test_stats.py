"""Tables 10-12 on a hand-made set, against figures computed by hand."""

from __future__ import annotations

import re

import pytest

from edge.dataset.stats import PAPER_TABLE_10, PAPER_TABLE_12, dataset_stats, nearest_rank
from edge.synth.item import TaskType
from tests.edge.filter.items import bench, junction, wrap


def test_hand_computed_figures():
    b = bench()
    # trf-001: 4 calls, 4 steps, all alone.       fin-001: 4 calls, 3 steps (step 1 has two).
    # dst-001: 8 calls, 3 steps (4 + 2 + 2, all parallel).
    items = [
        wrap(b["trf-001"], task_type=TaskType.DRV, call_records=(12, 1, 8, 1),
             junctions=(junction("get_rest_area_fuel_prices", "list_rest_area_locations", "serviceAreaCode",
                                 "serviceAreaCode", 40),
                        junction("list_rest_area_locations", "get_rest_area_best_foods", "stdRestCd", "stdRestCd", 1))),
        wrap(b["fin-001"], task_type=TaskType.SEQ, call_records=(1, 1, 3, 1),
             junctions=(junction("find_dart_corp_code", "get_dart_convertible_bond_issuance_decision", "corp_code",
                                 "corp_code", 1),)),
        wrap(b["dst-001"], task_type=TaskType.MIXED, call_records=(30, 25, 2, 2, 1, 1, 1, 1),
             junctions=(junction("gg_population_stat_2025", "evaluate_expression", "tot", "expression", 3),)),
    ]
    s = dataset_stats(items)
    assert (s.calls_mean, s.calls_median, s.calls_min, s.calls_max) == (pytest.approx(16 / 3), 4, 4, 8)
    assert (s.steps_le3, s.steps_4_5, s.steps_ge6) == (pytest.approx(200 / 3), pytest.approx(100 / 3), 0)
    # the same buckets over calls (4, 4, 8): none at <= 3, two at 4-5, one at >= 6
    assert (s.calls_le3, s.calls_4_5, s.calls_ge6) == (0, pytest.approx(200 / 3), pytest.approx(100 / 3))
    # sequential: trf-001's 4 + fin-001's steps 0 and 2 = 6 of 16 calls
    assert (s.sequential, s.parallel) == (pytest.approx(600 / 16), pytest.approx(1000 / 16))
    # all three are multi-step. Records consumed (Table 11's caption): trf-001's fuel prices → locations junction
    # reads the 12 records of its step-0 call, its locations → best foods one the 1 record of step 1; fin-001's corp
    # code lookup answered 1 record; dst-001's population → expression junction reads the 2 records of step 0
    assert s.multi_step_tasks == 3 and s.one_to_many == pytest.approx(200 / 3)
    assert (s.cardinality_median, s.cardinality_p90, s.cardinality_max) == (7, 12, 12)
    # by distinct values of the bound field: trf-001 (n=40) and dst-001 (n=3)
    assert s.one_to_many_values == pytest.approx(200 / 3)
    assert (s.value_cardinality_median, s.value_cardinality_p90, s.value_cardinality_max) == (21.5, 40, 40)
    # a SEQ junction (one distinct corp code) that reads a 5-record answer is one-to-many by records, not by values
    seq = wrap(b["fin-001"], task_type=TaskType.SEQ, call_records=(5, 1, 3, 1),
               junctions=(junction("find_dart_corp_code", "get_dart_convertible_bond_issuance_decision", "corp_code",
                                   "corp_code", 1),))
    both = dataset_stats([seq])
    assert (both.one_to_many, both.cardinality_max, both.one_to_many_values, both.value_cardinality_max) == (
        100, 5, 0, None)
    # of chained tasks: the three have junctions, so the share is the multi-step one. A multi-step task that chains
    # nothing (parallel calls closed by the calculator) counts in the caption's set only
    assert (s.chained_tasks, s.one_to_many_chained) == (3, pytest.approx(200 / 3))
    closed = wrap(b["dst-001"].model_copy(update={"id": "dst-sem"}), task_type=TaskType.SEM,
                  call_records=(30, 25, 2, 2, 1, 1, 1, 1))
    more = dataset_stats([*items, closed])
    assert (more.multi_step_tasks, more.one_to_many) == (4, 50)
    assert (more.chained_tasks, more.one_to_many_chained) == (3, pytest.approx(200 / 3))
    assert re.search(r"of chained tasks \(%\) +66\.7 \(3 tasks\) +81\.2", more.table())
    # calls with >= 2 records: 12, 8 | 3 | 30, 25, 2, 2 = 7 of 16
    assert s.multi_record_calls == pytest.approx(700 / 16)
    assert s.type_counts == {"MIXED": 1, "DRV": 1, "SEM": 0, "SEQ": 1, "CMP": 0, "COND": 0, "FAN": 0}
    assert s.type_shares["DRV"] == pytest.approx(100 / 3)
    # calls per class: DRV 4, SEQ 4, MIXED 8; classes without a task are absent
    assert s.calls_by_type == {"DRV": {"mean": 4, "median": 4, "ge4": 100},
                               "MIXED": {"mean": 8, "median": 8, "ge4": 100},
                               "SEQ": {"mean": 4, "median": 4, "ge4": 100}}
    mixed = dataset_stats([items[2], wrap(b["trf-001"], task_type=TaskType.MIXED, call_records=(12, 1, 8, 1)),
                           wrap(b["fin-001"], task_type=TaskType.MIXED, call_records=(1, 1, 3, 1))])
    assert mixed.calls_by_type["MIXED"] == {"mean": pytest.approx(16 / 3), "median": 4, "ge4": 100}
    table = s.table()
    assert "4.13 / 4 / 2 / 36" in table and "36.7" in table and "81.2" in table
    assert re.search(r"calls per MIXED task: mean / med\. / >=4 \(%\) +8\.00 / 8 / 100\.0", table)
    assert re.search(r"Table 10 read as calls: <=3 / 4-5 / >=6 \(%\) +0\.0 / 66\.7 / 33\.3 +42\.3 / 50\.9 / 6\.7", table)
    assert s.as_json()["paper"]["table_10"] == PAPER_TABLE_10 and list(PAPER_TABLE_12) == [t.value for t in TaskType]


def test_nearest_rank_and_refusals():
    assert nearest_rank([5, 1, 3, 2, 4], 0.9) == 5 and nearest_rank([5, 1, 3, 2, 4], 0.5) == 3
    with pytest.raises(ValueError, match="no items"):
        dataset_stats([])
    with pytest.raises(ValueError, match="trf-001: call_records has 1 entries for 4 golden calls"):
        dataset_stats([wrap(bench()["trf-001"], call_records=(3,))])
