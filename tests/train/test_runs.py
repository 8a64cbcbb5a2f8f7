"""``train.runs``: training run folders named ``<recipe>-<UTC stamp>`` under ``<home>/train/runs``, made on the spot,
``-2`` when taken."""

from __future__ import annotations

from datetime import UTC, datetime

from train.runs import new_run_dir, run_dir_name

AT = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)


def test_a_run_folder_is_named_by_recipe_and_utc_stamp_and_made_at_once(tmp_path):
    assert run_dir_name("grpo_1gpu_small", AT) == "grpo_1gpu_small-20250601T120000Z"
    made = new_run_dir(tmp_path / "home", "grpo_1gpu_small", AT)
    assert made == tmp_path / "home" / "train" / "runs" / "grpo_1gpu_small-20250601T120000Z"
    assert made.is_dir() and not any(made.iterdir())


def test_a_taken_name_gets_a_number_and_no_run_shares_a_folder(tmp_path):
    folders = [new_run_dir(tmp_path, "sft", AT) for _ in range(3)]
    assert [f.name for f in folders] == ["sft-20250601T120000Z", "sft-20250601T120000Z-2", "sft-20250601T120000Z-3"]
    assert new_run_dir(tmp_path, "grpo_9b_paper", AT).name == "grpo_9b_paper-20250601T120000Z"
