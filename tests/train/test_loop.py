"""`kopa train loop --quick` end to end: EDGE data built by the loop, the split audit, the listed-order baseline, the
base model, SFT with its probes, GRPO and both tuned models evaluated on the eval split, and the report; then a
removed stage is run again (and only it, with the same greedy episodes), a corrupt stage is refused and left as it
was, and a run folder is not continued with other settings.

Real parts: `kopa edge graph build | synth | filter | export` against the sandbox world (the test world, linked
into a fresh home), strict replay of the shipped bundles for the split, TRL on a 2-layer SmolLM2 with the real
tokenizer.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from appliance.cli import app
from train.loop import STAGES
from train.loop.stages import DONE_FILE

from ..conftest import TEST_DATA_DIR, TEST_SCALE, ensure_world

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning",
                                        "ignore::UserWarning")

MODELS = ["listed tools in order", "base", "tuned (SFT)", "tuned (SFT + GRPO)"]


def loop(env: dict[str, str], run: Path, *extra: str):
    return CliRunner().invoke(app, ["train", "loop", "--quick", "--run", str(run), *extra], env=env)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    ensure_world(TEST_DATA_DIR, version="v1", scale=TEST_SCALE)
    home = tmp_path_factory.mktemp("loop-home")
    (home / "worlds").symlink_to(TEST_DATA_DIR / "worlds")  # the test world, built once per machine
    env = {"KOPA_HOME": str(home), "KOPA_SANDBOX__SCALE": str(TEST_SCALE), "COLUMNS": "200"}
    run = home / "loop"
    done = loop(env, run)
    assert done.exit_code == 0, (done.output, done.exception)
    return env, run, done.output


def export_folder(run: Path) -> str:
    return json.loads((run / "dataset" / DONE_FILE).read_text())["figures"]["folder"]


def test_every_stage_runs_and_the_report_compares_the_models(quick_run):
    _, run, output = quick_run
    for stage in STAGES[:-1]:
        assert (run / stage / DONE_FILE).is_file(), stage
    report = json.loads((run / "report" / "report.json").read_text())
    assert [m["name"].split(" = ")[0] for m in report["models"]] == MODELS
    by_name = {m["name"]: m for m in report["models"]}
    split_tasks, seeds = report["settings"]["split_tasks"], report["settings"]["seeds"]
    assert all(m["episodes"] == split_tasks * len(seeds) for m in report["models"])
    # the baseline calls tools (golden arguments on golden tools), so its Corr is positive and its calls well-formed
    listed = by_name["listed tools in order"]["figures"]
    assert listed["Corr"]["mean"] > 0 and listed["well-formed"]["mean"] == 1.0
    assert listed["Corr"]["low"] is not None  # two seeds: an interval
    for figures in (m["figures"] for m in report["models"]):
        assert set(figures) == {"pass@1", "Corr", "ACTION", "well-formed", "key", "answered"}
    assert [p["examples_seen"] for p in report["sft_probes"]] == [0, 1]
    assert len(report["sft_steps"]) == 1 and report["sft_steps"][0]["loss"] > 0
    assert report["settings"]["sft_balance"] == "domain"  # sft_steps rows taken across domains, not every row
    assert json.loads((run / "sft" / "run.json").read_text())["rows"] == report["settings"]["sft_steps"]
    assert len(report["grpo_steps"]) == 1
    assert "| listed tools in order |" in output and "| tuned (SFT + GRPO)" in output
    assert "<table>" in (run / "report" / "report.html").read_text()
    audit = json.loads((run / "audit" / DONE_FILE).read_text())["figures"]
    assert audit["clean"] is True and audit["training_items"] >= 1
    # where a tuned model can fail for want of examples: golden actions whose tool no training item calls
    coverage = report["tool_coverage"]
    assert coverage == audit["tool_coverage"]
    assert coverage["golden_actions"] >= report["settings"]["split_tasks"] and coverage["tools"] >= 1  # evaluated only
    assert sum(coverage["missing"].values()) == coverage["golden_actions"] - coverage["golden_actions_covered"]
    assert "golden actions of the eval split call a tool" in output
    # the training rows were exported under the loop's limits (what the evaluated prompts are shaped by)
    export = json.loads((Path(export_folder(run)) / "export.json").read_text())
    assert export["limits"] == report["settings"]["limits"]
    assert export["slips"] == report["settings"]["sft_slips"] == 0.25  # a share of the rows show a slip, untrained
    assert export["slipped"] == sum('"weight":0' in line for line in (Path(export_folder(run)) / "sft.jsonl").open())
    # each episode says what it did (the calls, the answer) and never holds a key token
    listed_rows = [json.loads(line) for line in (run / "eval-listed" / "episodes.jsonl").read_text().splitlines()]
    assert all(row["actions"] and all(isinstance(a["tool"], str) and isinstance(a["args"], dict)
                                      for a in row["actions"]) for row in listed_rows)
    assert sum(len(row["actions"]) for row in listed_rows) == sum(row["calls"] for row in listed_rows)
    for episodes in run.glob("*/episodes.jsonl"):
        assert not re.search(r"kopa-[a-z]+-[0-9a-f]{8}", episodes.read_text()), episodes


def test_an_adapter_grpo_left_unchanged_is_not_evaluated_again_and_a_changed_one_is(quick_run, tmp_path):
    """The tiny model passes no rollout, so every GRPO advantage is 0 and the adapter comes out bit for bit the SFT
    one: eval-grpo takes eval-sft's episodes, and the report says so. Changed by one weight, it is played."""
    from safetensors.torch import load_file, save_file

    from train.loop.run import same_adapter
    from train.loop.stages import Stage

    env, run, _ = quick_run
    assert {line["reward_mean"] for line in map(json.loads, (run / "grpo" / "metrics.jsonl").open())} == {0.0}
    assert same_adapter(run / "sft" / "checkpoint", run / "grpo" / "checkpoint")
    assert json.loads((run / "eval-grpo" / DONE_FILE).read_text())["figures"]["same_weights_as"] == "eval-sft"
    assert (run / "eval-grpo" / "episodes.jsonl").read_bytes() == (run / "eval-sft" / "episodes.jsonl").read_bytes()
    names = [m["name"] for m in json.loads((run / "report" / "report.json").read_text())["models"]]
    assert names[-1] == "tuned (SFT + GRPO) = tuned (SFT): no weight changed"

    changed = tmp_path / "changed"
    shutil.copytree(run, changed, ignore=shutil.ignore_patterns("loop.lock"))
    weights = changed / "grpo" / "checkpoint" / "adapter_model.safetensors"
    tensors = load_file(weights)
    first = sorted(tensors)[0]
    tensors[first] = tensors[first] + 0.5
    save_file(tensors, weights)
    assert not same_adapter(changed / "sft" / "checkpoint", changed / "grpo" / "checkpoint")
    Stage(changed, "grpo").finish(["checkpoint", "metrics.jsonl"], {"steps": 1})  # as if GRPO had written it
    shutil.rmtree(changed / "eval-grpo")
    again = loop(env, changed)
    assert again.exit_code == 0, again.output
    assert "[eval-grpo] running" in again.output and "unchanged" not in again.output
    assert "same_weights_as" not in json.loads((changed / "eval-grpo" / DONE_FILE).read_text())["figures"]
    names = [m["name"] for m in json.loads((changed / "report" / "report.json").read_text())["models"]]
    assert names[-1] == "tuned (SFT + GRPO)"


def test_the_bench_tool_pool_holds_every_tool_the_eval_split_needs_and_the_cli_records_it(tmp_path):
    from bench.splits import load_split
    from train.loop.settings import bench_tools

    tools = bench_tools()
    assert list(tools) == sorted(set(tools)) and 100 < len(tools) < 2416
    split = load_split("eval-v1")
    assert {a.tool for task in split.tasks for a in task.golden_actions} <= set(tools)
    assert {t for task in split.tasks for t in task.available_tools} <= set(tools)
    # --edge-tools goes to loop.json as the names (here the run stops at its dataset, which is not an export)
    (tmp_path / "data").mkdir()
    env = {"KOPA_HOME": str(tmp_path / "home")}
    for option, recorded in (("bench", list(tools)), ("get_bill_detail, search_all_bills",
                                                      ["get_bill_detail", "search_all_bills"])):
        run = tmp_path / f"run-{len(recorded)}"
        done = loop(env, run, "--dataset", str(tmp_path / "data"), "--edge-tools", option)
        assert done.exit_code == 2, done.output
        assert json.loads((run / "loop.json").read_text())["edge_tools"] == recorded


def test_runtime_tokens_are_written_as_key_wherever_they_occur():
    from train.loop.evaluate import _redacted

    secrets = ["kopa-ex-0123456789abcdef", "kopa-ex-01"]  # longest first: no half-replaced token is left
    args = {"KEY": "kopa-ex-0123456789abcdef", "q": ["x kopa-ex-01 y", 3], "n": 1000}
    assert _redacted(args, secrets) == {"KEY": "<key>", "q": ["x <key> y", 3], "n": 1000}


def test_a_removed_stage_runs_again_alone_and_a_corrupt_one_is_refused(quick_run):
    env, run, _ = quick_run
    episodes = (run / "eval-sft" / "episodes.jsonl").read_text()
    for path in sorted((run / "eval-sft").iterdir()):
        path.unlink()
    (run / "eval-sft").rmdir()
    again = loop(env, run)
    assert again.exit_code == 0, again.output
    assert "[eval-sft] running" in again.output
    assert all(f"[{s}] done before, reused" in again.output for s in STAGES[:-1] if s != "eval-sft")
    assert (run / "eval-sft" / "episodes.jsonl").read_text() == episodes  # greedy: the same episodes

    adapter = run / "sft" / "checkpoint" / "adapter_model.safetensors"
    adapter.write_bytes(adapter.read_bytes() + b"\0")
    corrupt = adapter.read_bytes()
    refused = loop(env, run)
    assert refused.exit_code == 2
    assert "stage sft: its output checkpoint/adapter_model.safetensors changed" in refused.output
    assert adapter.read_bytes() == corrupt  # not redone, not overwritten

    other = loop(env, run, "--seeds", "0")
    assert other.exit_code == 2 and "was started with other settings (seeds:" in other.output


def test_a_dataset_that_is_not_an_export_is_refused(tmp_path):
    (tmp_path / "data").mkdir()
    done = loop({"KOPA_HOME": str(tmp_path / "home")}, tmp_path / "run", "--dataset", str(tmp_path / "data"))
    assert done.exit_code == 2
    assert "sft.jsonl, train.parquet, export.json" in done.output and "missing" in done.output
    assert not (tmp_path / "run" / "dataset" / DONE_FILE).exists()


def test_a_setting_added_later_counts_as_what_runs_did_before_it_existed(tmp_path):
    from train.loop.run import _check_settings
    from train.loop.settings import LoopSettings
    from train.loop.stages import LoopError

    run = tmp_path / "run"
    _check_settings(run, LoopSettings.quick())
    recorded = json.loads((run / "loop.json").read_text())
    del recorded["grpo_learning_rate"], recorded["probe_every"]  # as if written before these settings existed
    (run / "loop.json").write_text(json.dumps(recorded))
    with pytest.raises(LoopError, match=r"probe_every: not recorded then \(10 before it existed\), 1 now"):  # quick's 1 is not the default
        _check_settings(run, LoopSettings.quick())
    _check_settings(run, LoopSettings.quick(probe_every=LoopSettings().probe_every))  # the default: continues

    # guided tool calls changed what an evaluation does: a run from before the setting existed played unguided
    del recorded["guide_tool_calls"]
    recorded["probe_every"] = LoopSettings().probe_every
    (run / "loop.json").write_text(json.dumps(recorded))
    with pytest.raises(LoopError, match=r"guide_tool_calls: not recorded then \(False before it existed\), True now"):
        _check_settings(run, LoopSettings.quick(probe_every=LoopSettings().probe_every))
    _check_settings(run, LoopSettings.quick(probe_every=LoopSettings().probe_every, guide_tool_calls=False))

    # a run of the retired name-only guide is not continued under the call grammar, nor unguided
    recorded["guide_tool_names"] = True
    (run / "loop.json").write_text(json.dumps(recorded))
    for guided in (True, False):
        with pytest.raises(LoopError, match=r"guide_tool_names: True then, retired since"):
            _check_settings(run, LoopSettings.quick(probe_every=LoopSettings().probe_every, guide_tool_calls=guided))


def test_a_run_goes_on_with_its_recorded_settings_whatever_the_defaults_are_now(tmp_path):
    from train.loop.settings import LOOP_LIMITS, LoopSettings, continued_settings
    from train.loop.stages import LoopError

    # run9's record: written before eval_precision and the bare generic parameters existed
    recorded = LoopSettings(seeds=(0, 1, 2), sft_steps=60).model_dump(mode="json")
    del recorded["eval_precision"], recorded["limits"]["bare_generic_params"], recorded["sft_balance"]
    del recorded["limits"]["max_repeated_turns"], recorded["sft_slips"]
    assert LoopSettings().eval_precision == "bf16" and LOOP_LIMITS.bare_generic_params  # the defaults now
    assert LoopSettings().sft_balance == "domain" and LOOP_LIMITS.max_repeated_turns == 3
    went_on = continued_settings(recorded, {})
    assert went_on.eval_precision == "fp32" and not went_on.limits.bare_generic_params  # what the run did then
    assert went_on.sft_balance == "none" and went_on.limits.max_repeated_turns is None and went_on.sft_slips == 0.0
    assert went_on.sft_steps == 60 and went_on.limits.max_description_chars == LOOP_LIMITS.max_description_chars
    assert continued_settings(recorded, {"sft_steps": 60, "seeds": (0, 1, 2)}) == went_on  # said again: the same
    with pytest.raises(LoopError, match=r"other settings \(sft_steps: 60 then, 90 now\)"):
        continued_settings(recorded, {"sft_steps": 90})

    # the CLI: a run folder with a record is continued with it, and an option that contradicts it is refused
    run = tmp_path / "run"
    run.mkdir()
    (run / "loop.json").write_text(json.dumps(recorded))
    refused = CliRunner().invoke(app, ["train", "loop", "--run", str(run), "--sft-steps", "90"],
                                 env={"KOPA_HOME": str(tmp_path / "home")})
    assert refused.exit_code == 2 and "sft_steps: 60 then, 90 now" in refused.output, refused.output
    assert sorted(p.name for p in run.iterdir()) == ["loop.json"]  # nothing started


def test_status_shows_the_stages_and_figures_and_runs_nothing(quick_run, tmp_path):
    env, run, _ = quick_run
    before = sorted(p.name for p in run.iterdir())
    shown = CliRunner().invoke(app, ["train", "loop", "--status", "--run", str(run)], env=env)
    assert shown.exit_code == 0, shown.output
    assert all(f"{stage}: done" in shown.output for stage in STAGES[:-1] if stage != "sft")
    assert "sft: done" in shown.output or "sft: refused: stage sft: its output" in shown.output  # the test above
    assert "| tuned (SFT) |" in shown.output
    assert sorted(p.name for p in run.iterdir()) == before
    missing = CliRunner().invoke(app, ["train", "loop", "--status", "--run", str(tmp_path)], env=env)
    assert missing.exit_code == 2 and "is not a loop run folder (no loop.json)" in missing.output


def test_a_second_loop_on_a_folder_in_use_is_refused_before_any_stage(tmp_path):
    from train.loop.run import _only_loop_on

    run = tmp_path / "run"
    run.mkdir()
    with _only_loop_on(run):  # as a running loop holds it
        refused = loop({"KOPA_HOME": str(tmp_path / "home")}, run)
    assert refused.exit_code == 2, refused.output
    assert f"is in use by another kopa train loop (pid {os.getpid()})" in " ".join(refused.output.split())
    assert sorted(p.name for p in run.iterdir()) == ["loop.json", "loop.lock"]  # no stage began
    with _only_loop_on(run):  # released when the holder ends: the next loop takes it
        pass


def test_episodes_played_twice_are_refused_not_counted_twice(tmp_path):
    from train.loop.evaluate import read_episodes
    from train.loop.stages import LoopError

    row = {"task_id": "fin-001", "domain": "finance", "seed": 0, "passed": False, "corr": 0.5, "action": 0.0,
           "calls": 1, "well_formed": 1, "key_ok": None, "answered": True, "turns": 2}
    other = {**row, "seed": 1}
    path = tmp_path / "episodes.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (row, other)))
    assert [r.seed for r in read_episodes(path)] == [0, 1]
    path.write_text("".join(json.dumps(r) + "\n" for r in (row, other, row)))
    with pytest.raises(LoopError, match=r"episodes.jsonl:3: fin-001 seed 0 was already played on line 1"):
        read_episodes(path)


@pytest.mark.parametrize(("option", "value", "says"), [("--sft-learning-rate", "0", "greater than 0"),
                                                       ("--sft-learning-rate", "nan", "greater than 0")])
def test_a_bad_training_setting_is_named_and_nothing_is_written(tmp_path, option, value, says):
    done = loop({"KOPA_HOME": str(tmp_path / "home"), "COLUMNS": "200"}, tmp_path / "run", option, value)
    assert done.exit_code == 2
    assert option in done.output and says in done.output, done.output
    assert not (tmp_path / "run").exists()


def test_a_run_with_more_training_reuses_the_earlier_runs_data_and_base_evaluations(quick_run, tmp_path):
    env, run, _ = quick_run
    before = {s: (run / s / DONE_FILE).read_bytes() for s in STAGES[:4]}
    new = tmp_path / "more-sft"
    done = loop(env, new, "--reuse", str(run), "--sft-steps", "2")
    assert done.exit_code == 0, (done.output, done.exception)
    for stage in STAGES[:4]:  # dataset, audit, eval-listed, eval-base
        assert f"[{stage}] reused from {run}" in done.output
        assert json.loads((new / stage / DONE_FILE).read_text())["reused_from"] == str(run / stage)
        assert (run / stage / DONE_FILE).read_bytes() == before[stage]  # the earlier run is not written to
    for stage in ("eval-listed", "eval-base"):
        assert (new / stage / "episodes.jsonl").read_bytes() == (run / stage / "episodes.jsonl").read_bytes()
    dataset = Path(json.loads((new / "dataset" / DONE_FILE).read_text())["figures"]["folder"])
    assert dataset.is_relative_to(new) and (dataset / "sft.jsonl").is_file()  # its own copy, not the earlier run's
    assert json.loads((new / "dataset" / "dataset.json").read_text())["folder"] == str(dataset)
    assert "[sft] running" in done.output and "[eval-sft] running" in done.output
    assert [json.loads(line)["step"] for line in (new / "sft" / "metrics.jsonl").open()] == [1, 2]


def test_an_evaluation_in_which_no_call_was_written_is_reused_under_another_guide_and_one_with_calls_is_not(
        quick_run, tmp_path):
    from recorder.cassette.bundle import file_sha256
    from train.loop.reuse import reuse_stages
    from train.loop.settings import LoopSettings

    _, run, _ = quick_run
    unguided = LoopSettings.quick(guide_tool_calls=False)
    for calls in (0, 1):
        old = tmp_path / f"old-with-{calls}-calls"
        shutil.copytree(run, old, ignore=shutil.ignore_patterns("loop.lock"))
        episodes = old / "eval-base" / "episodes.jsonl"
        rows = [json.loads(line) for line in episodes.read_text().splitlines()]
        rows = [{**row, "calls": 0} for row in rows]
        rows[-1]["calls"] = calls
        episodes.write_text("".join(json.dumps(row) + "\n" for row in rows))
        done = json.loads((old / "eval-base" / DONE_FILE).read_text())
        done["files"]["episodes.jsonl"] = {"bytes": episodes.stat().st_size, "sha256": file_sha256(episodes)}
        (old / "eval-base" / DONE_FILE).write_text(json.dumps(done))

        said: list[str] = []
        taken = reuse_stages(old, tmp_path / f"new-{calls}", unguided, log=said.append)
        if calls == 0:  # the guide acts only inside a call: with none written it never acted
            assert taken == ["dataset", "audit", "eval-listed", "eval-base"], said
            assert any("[eval-base] guide_tool_calls differ" in line and "no guide acted" in line for line in said)
        else:
            assert taken == ["dataset", "audit", "eval-listed"], said
            assert any("[eval-base] not reused: guide_tool_calls differ" in line for line in said), said


def test_reuse_takes_each_stage_whose_settings_and_inputs_agree_and_refuses_a_corrupt_one(quick_run, tmp_path):
    from train.loop.reuse import edge_code, reuse_stages
    from train.loop.settings import LoopSettings
    from train.loop.stages import LoopError

    _, run, _ = quick_run
    said: list[str] = []
    taken = reuse_stages(run, tmp_path / "other-seeds", LoopSettings.quick(seeds=(0,)), log=said.append)
    assert taken == ["dataset", "audit"]
    assert any("[eval-listed] not reused: seeds differ" in line for line in said), said
    assert not (tmp_path / "other-seeds" / "eval-listed").exists()

    # the base model read in another precision: its evaluation runs again, the baseline (no model) is taken
    said = []
    taken = reuse_stages(run, tmp_path / "other-precision", LoopSettings.quick(eval_precision="fp32"), log=said.append)
    assert taken == ["dataset", "audit", "eval-listed"], said
    assert any("[eval-base] not reused: eval_precision" in line for line in said), said

    # other data: the audit reads it and runs again; the evaluations read none and are taken
    said = []
    taken = reuse_stages(run, tmp_path / "other-data", LoopSettings.quick(edge_items=5), log=said.append)
    assert taken == ["eval-listed", "eval-base"], said
    assert any("[audit] not reused: it reads dataset" in line for line in said), said
    assert not (tmp_path / "other-data" / "audit").exists()

    # the same settings on other EDGE code: the dataset (and the audit that reads it) is made again
    changed = tmp_path / "changed-code"
    shutil.copytree(run, changed, ignore=shutil.ignore_patterns("loop.lock"))
    done = json.loads((changed / "dataset" / DONE_FILE).read_text())
    assert done["figures"]["edge_code"] == edge_code()  # recorded by the stage that synthesized it
    done["figures"]["edge_code"] = "0" * 64
    (changed / "dataset" / DONE_FILE).write_text(json.dumps(done))
    said = []
    taken = reuse_stages(changed, tmp_path / "after-a-code-change", LoopSettings.quick(), log=said.append)
    assert taken == ["eval-listed", "eval-base"], said
    assert any("[dataset] not reused: the EDGE code" in line for line in said), said

    broken = tmp_path / "broken"
    broken.mkdir()
    shutil.copy(run / "loop.json", broken / "loop.json")
    shutil.copytree(run / "dataset", broken / "dataset")
    (broken / "dataset" / "dataset.json").write_text("{}")
    with pytest.raises(LoopError, match="stage dataset: its output dataset.json changed"):
        reuse_stages(broken, tmp_path / "from-broken", LoopSettings.quick())
    assert not (tmp_path / "from-broken" / "dataset").exists()
    with pytest.raises(LoopError, match="not a loop run"):
        reuse_stages(tmp_path / "nothing", tmp_path / "x", LoopSettings.quick())


def test_same_adapter_needs_equal_configs_and_tensors(tmp_path):
    import torch
    from safetensors.torch import save_file

    from train.loop.run import same_adapter

    def adapter(name: str, value: float, r: int = 8) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        save_file({"w": torch.full((2, 2), value)}, folder / "adapter_model.safetensors")
        modules = ["q_proj", "v_proj"] if name != "b" else ["v_proj", "q_proj"]  # peft writes a set: any order
        (folder / "adapter_config.json").write_text(json.dumps({"r": r, "target_modules": modules}))
        return folder

    a, b = adapter("a", 1.0), adapter("b", 1.0)
    assert same_adapter(a, b)
    assert not same_adapter(a, adapter("c", 1.0 + 1e-6))
    assert not same_adapter(a, adapter("d", 1.0, r=16))
    (b / "adapter_model.safetensors").unlink()
    assert not same_adapter(a, b)
