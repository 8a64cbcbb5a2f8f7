"""`kopa train` (appliance.train_cli.train_app): check on the CPU, which engines can run here, grpo refusing without
CUDA, an unknown engine refused, status from the DB."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from appliance.train_cli import train_app

from .conftest import CASSETTES

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("KOPA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("KOPA_RECORDER__CASSETTES", str(CASSETTES))
    return tmp_path / "home"


def test_check_reports_problems_and_exits_nonzero(home, tmp_path):
    done = CliRunner().invoke(train_app, ["check", "grpo_1gpu_small", "--dataset", str(tmp_path / "none")])
    assert done.exit_code == 1
    assert "does not exist" in done.output and "is not a folder" in done.output


def test_check_passes_on_the_edge_dataset(home, edge_dataset, tmp_path):
    from train.tiny_model import build_tiny_model

    model = build_tiny_model(tmp_path / "tiny", ["서울역"], weights=False)
    done = CliRunner().invoke(train_app, ["check", "grpo_1gpu_small", "--dataset", str(edge_dataset),
                                          "--model", str(model), "--show"])
    assert done.exit_code == 0, done.output
    assert "grpo_1gpu_small: ok" in done.output and "verl.trainer.main_ppo" in done.output
    assert done.output.startswith("verl: ")  # the engines report comes first


def test_check_says_which_engines_can_run_on_this_machine_and_why_not(home):
    import torch

    done = CliRunner().invoke(train_app, ["check"])
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    assert [line.split(":")[0] for line in lines] == ["verl", "trl", "default engine", "trl precision"]
    assert lines[1] == "trl: can run here"
    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU: the no-GPU reasons are checked on the CPU machines")
    assert lines[0].startswith("verl: not here — no CUDA GPU visible (torch.cuda.is_available() is false)")
    assert lines[2].startswith("default engine: trl — verl needs a CUDA GPU, vllm and ray (")
    from train.engines import cpu_flags

    assert lines[3].startswith("trl precision: bf16 — CPU bf16 autocast" if {"amx_bf16", "avx512_bf16"} & cpu_flags()
                               else "trl precision: fp32 — CPU fp32")


def test_check_names_every_missing_part_of_an_engine(home, monkeypatch):
    import torch

    import train.engines

    monkeypatch.setattr(train.engines, "_installed", lambda module: module in ("torch", "verl"))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    done = CliRunner().invoke(train_app, ["check"])
    assert done.exit_code == 0, done.output
    assert done.output.splitlines()[:3] == [
        "verl: not here — no CUDA GPU visible (torch.cuda.is_available() is false), vllm not installed, "
        "ray not installed",
        "trl: not here — transformers not installed, trl not installed, peft not installed",
        "default engine: trl — verl needs a CUDA GPU, vllm and ray (vllm not installed, ray not installed) "
        "(it cannot run here)"]
    monkeypatch.setattr(train.engines, "_installed", lambda module: True)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert CliRunner().invoke(train_app, ["check"]).output.splitlines() == [
        "verl: can run here", "trl: can run here", "default engine: verl — CUDA, vllm and ray are all present",
        "trl precision: bf16 — CUDA GPU: bf16"]


@pytest.mark.parametrize("command", ["grpo", "sft", "check"])
def test_an_unknown_engine_is_one_line_naming_the_choices(home, command):
    done = CliRunner().invoke(train_app, [command, "--engine", "nope"])
    assert done.exit_code == 2
    assert done.output.strip() == "error: --engine nope: unknown training engine 'nope'; choose one of: verl, trl"
    assert not (home / "train").exists()


def test_grpo_refuses_without_cuda_with_one_clear_message(home, monkeypatch):
    import appliance.train_cli as cli

    monkeypatch.setattr(cli, "_cuda", lambda: False)
    done = CliRunner().invoke(train_app, ["grpo", "--config", "grpo_1gpu_small", "--engine", "verl"])
    assert done.exit_code == 2 and "needs a CUDA GPU and none is visible here" in done.output
    assert not (home / "train").exists()  # nothing started, no run folder


def test_sft_with_verl_refuses_without_cuda_and_writes_nothing(home, monkeypatch, tmp_path):
    import appliance.train_cli as cli

    monkeypatch.setattr(cli, "_cuda", lambda: False)
    done = CliRunner().invoke(train_app, ["sft", "--engine", "verl", "--dataset", str(tmp_path)])
    assert done.exit_code == 2
    assert len(done.output.strip().splitlines()) == 1
    assert done.output.startswith("kopa train sft needs a CUDA GPU and none is visible here")
    assert not (home / "train").exists()


@pytest.mark.parametrize("args, message", [
    (["--dataset", "{tmp}/nowhere"], "error: --dataset {tmp}/nowhere: no such folder"),
    (["--dataset", "{tmp}"], "error: --dataset {tmp}: train.parquet is missing; the folder needs train.parquet and "
                             "items.jsonl (EDGE's export)"),
])
def test_grpo_with_trl_refuses_bad_input_in_one_line_and_writes_nothing(home, tmp_path, args, message):
    done = CliRunner().invoke(train_app, ["grpo", "--engine", "trl", *[a.format(tmp=tmp_path) for a in args]])
    assert done.exit_code == 2, done.output
    assert done.output.strip().splitlines()[-1] == message.format(tmp=tmp_path)
    assert not (home / "train").exists()


def test_grpo_with_trl_refuses_a_model_that_is_not_one(home, tmp_path, edge_dataset):
    done = CliRunner().invoke(train_app, ["grpo", "--engine", "trl", "--dataset", str(edge_dataset),
                                          "--model", str(tmp_path / "no-model")])
    assert done.exit_code == 2 and done.output.strip().splitlines()[-1].startswith("error: --model ")
    assert not (home / "train").exists()


def test_status_lists_recorded_runs(home):
    from appliance.config import KopaSettings
    from appliance.metadb import open_metadb
    from train.records import add_step, ensure_tables, finish_run, start_run

    assert "no training runs recorded" in CliRunner().invoke(train_app, ["status"]).output
    engine = open_metadb(KopaSettings().metadb_url)
    ensure_tables(engine)
    row = start_run(engine, "/runs/x", recipe="grpo_1gpu_small", kind="grpo", model="m", dataset="d")
    add_step(engine, row.id, {"step": 3, "reward": 0.25, "pass_rate": 0.25, "kl": 0.01})
    finish_run(engine, row.id, 0)
    done = CliRunner().invoke(train_app, ["status", "--json"])
    assert done.exit_code == 0 and '"steps": 3' in done.output and '"status": "finished"' in done.output
