"""The named eval split: a committed file its recipe remakes byte for byte, loaded only while its tasks are the same."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from bench.splits import SPLITS, SPLITS_DIR, SplitChangedError, SplitError, SplitRecipe, load_split, write_split
from bench.task import DOMAINS, load_tasks
from bench.taskset.build import DEFAULT_TASKS

EVAL_V1 = SPLITS_DIR / "eval-v1.json"


def copy_split(tmp_path: Path) -> tuple[Path, Path]:
    """(a copy of eval-v1 in tmp_path/splits, the copy of the task file it now refers to)."""
    (tmp_path / "splits").mkdir()
    split = shutil.copy(EVAL_V1, tmp_path / "splits" / "eval-v1.json")
    return Path(split), Path(shutil.copy(DEFAULT_TASKS, tmp_path / "kopa-bench.jsonl"))


def rewrite_tasks(path: Path, change) -> None:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in (change(row) for row in rows) if r is not None]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def test_the_committed_split_is_exactly_what_its_recipe_makes(tmp_path):
    remade = write_split(SPLITS["eval-v1"], tmp_path)
    assert remade.read_bytes() == EVAL_V1.read_bytes()


def test_eval_v1_covers_every_domain_in_proportion():
    split = load_split("eval-v1")
    everything = load_tasks(DEFAULT_TASKS)
    assert split.name == "eval-v1" and split.task_file == DEFAULT_TASKS.resolve()
    assert len(split.tasks) >= 30 and len(set(split.ids)) == len(split.ids)
    assert [t.id for t in split.tasks] == list(split.ids)
    assert all(t in everything for t in split.tasks)  # the task file's own tasks, unchanged
    share, counts = Counter(t.domain for t in everything), Counter(t.domain for t in split.tasks)
    for domain in DOMAINS:
        proportional = len(split.tasks) * share[domain] / len(everything)
        assert counts[domain] >= 4 and abs(counts[domain] - proportional) < 1, (domain, counts[domain], proportional)
    assert split.domain_counts() == json.loads(EVAL_V1.read_text(encoding="utf-8"))["domains"]


def test_a_split_loads_by_name_or_path():
    assert load_split(EVAL_V1).ids == load_split("eval-v1").ids == load_split(str(EVAL_V1)).ids


def test_an_unknown_split_names_the_known_ones():
    with pytest.raises(SplitError, match=r"unknown split 'eval-v9'; known: .*eval-v1"):
        load_split("eval-v9")
    with pytest.raises(SplitError, match="split file .*nowhere.json not found"):
        load_split("nowhere.json")


def test_a_changed_task_is_named_with_the_fields_that_changed(tmp_path):
    split_file, tasks_file = copy_split(tmp_path)
    target = load_split("eval-v1").ids[3]

    def edit(row):
        return {**row, "query": row["query"] + " 꼭이요.", "max_allowed_calls": row["max_allowed_calls"] + 1} \
            if row["id"] == target else row

    rewrite_tasks(tasks_file, edit)
    with pytest.raises(SplitChangedError) as caught:
        load_split(split_file)
    assert caught.value.changed == {target: ["max_allowed_calls", "query"]} and caught.value.missing == []
    assert f"{target} changed: max_allowed_calls, query" in str(caught.value)
    assert str(tasks_file.resolve()) in str(caught.value)


def test_a_task_gone_from_the_task_file_is_named(tmp_path):
    split_file, tasks_file = copy_split(tmp_path)
    gone = load_split("eval-v1").ids[0]
    rewrite_tasks(tasks_file, lambda row: None if row["id"] == gone else row)
    with pytest.raises(SplitChangedError, match=f"1 task\\(s\\) missing: {gone}") as caught:
        load_split(split_file)
    assert caught.value.missing == [gone] and caught.value.changed == {}


def test_a_task_edited_outside_the_split_does_not_matter(tmp_path):
    split_file, tasks_file = copy_split(tmp_path)
    chosen = set(load_split("eval-v1").ids)
    rewrite_tasks(tasks_file, lambda row: row if row["id"] in chosen else {**row, "notes": "edited"})
    assert load_split(split_file).ids == load_split("eval-v1").ids


def test_a_hand_edited_content_hash_is_refused(tmp_path):
    split_file, _ = copy_split(tmp_path)
    data = json.loads(split_file.read_text(encoding="utf-8"))
    split_file.write_text(json.dumps({**data, "content_sha256": "0" * 64}), encoding="utf-8")
    with pytest.raises(SplitError, match="content_sha256 000000000000… does not match its tasks"):
        load_split(split_file)


def test_a_recipe_that_cannot_give_every_domain_its_minimum_is_refused():
    recipe = SplitRecipe(name="tiny", task_file=DEFAULT_TASKS, size=12, description="", min_per_domain=4)
    with pytest.raises(SplitError, match="4 per domain over 6 domains is more than its size 12"):
        recipe.make()


def test_a_file_that_is_not_a_split_says_what_it_lacks(tmp_path):
    data = json.loads((SPLITS_DIR / "eval-v1.json").read_text(encoding="utf-8"))
    del data["tasks"]
    (tmp_path / "half.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SplitError, match=r"half.json: not a split file; it lacks tasks"):
        load_split(tmp_path / "half.json")
    (tmp_path / "list.json").write_text("[]", encoding="utf-8")
    with pytest.raises(SplitError, match=r"list.json: not a split file \(a JSON object with name, task_file"):
        load_split(tmp_path / "list.json")
