"""The trl engine (``train.engines.trl``): one SFT step on the CPU through `kopa train sft --engine trl`, the
checkpoint contract serving reads, the loss on assistant tokens only, and bad input refused before anything is
written.

The model is SmolLM2-135M's shape cut to 2 layers, random weights, with the real tokenizer and chat template
(``models.checkpoints.tiny_checkpoint``): the packaged 30-layer model trains ~90 tokens/s here, and a row's tool
schemas alone are thousands of tokens. The rows are EDGE's own ``sft.jsonl`` (``export_sft`` over shipped bench
tasks replayed from cassettes/), with each row's tools narrowed to the ones its calls use so a step is ~3k tokens.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from appliance.train_cli import train_app

from ..conftest import shared_tiny_smollm2
from .conftest import CASSETTES, as_item, bench_tasks, replayed

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning",
                                        "ignore::UserWarning")

SFT_IDS = ("edu-029", "fin-019")
MAX_LENGTH = 3072  # each row cut after its first assistant turn


def write_sft_dataset(folder: Path) -> Path:
    """EDGE's sft.jsonl for SFT_IDS, each row's tools narrowed to the ones it calls."""
    from edge.dataset.export import export_sft

    folder.mkdir(parents=True, exist_ok=True)
    tasks = bench_tasks()
    rows = []
    for task_id in SFT_IDS:
        items = [as_item(tasks[task_id])]
        export_sft(items, folder / "one.jsonl", replays=replayed(items, folder / "home"), overwrite=True)
        row = json.loads((folder / "one.jsonl").read_text(encoding="utf-8"))
        used = {c["function"]["name"] for m in row["messages"] for c in m.get("tool_calls") or []}
        row["tools"] = [t for t in row["tools"] if t["function"]["name"] in used]
        rows.append(row)
    (folder / "one.jsonl").unlink()
    (folder / "sft.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                      encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def sft_dataset(tmp_path_factory) -> Path:
    return write_sft_dataset(tmp_path_factory.mktemp("sft-dataset"))


@pytest.fixture(scope="module")
def tiny() -> Path:
    return shared_tiny_smollm2()


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("KOPA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("KOPA_RECORDER__CASSETTES", str(CASSETTES))
    return tmp_path / "home"


def test_one_sft_step_on_the_cpu_writes_the_checkpoint_contract(home, sft_dataset, tiny):
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    done = CliRunner().invoke(train_app, ["sft", "--engine", "trl", "--dataset", str(sft_dataset), "--model",
                                          str(tiny), "--max-steps", "1", "--seed", "3",
                                          "--max-length", str(MAX_LENGTH)])
    assert done.exit_code == 0, done.output
    runs = list((home / "train" / "runs").iterdir())
    assert len(runs) == 1 and runs[0].name.startswith("sft-trl-")
    run = runs[0]
    assert str(run) in done.output and "step 1: loss " in done.output

    metrics = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [1]
    assert math.isfinite(metrics[0]["loss"]) and metrics[0]["loss"] > 0
    assert 1000 < metrics[0]["tokens"] <= MAX_LENGTH and metrics[0]["step_time_s"] > 0
    assert metrics[0]["tokens_per_s"] == pytest.approx(metrics[0]["tokens"] / metrics[0]["step_time_s"])

    checkpoint = run / "checkpoint"
    assert json.loads((checkpoint / "kopa-checkpoint.json").read_text()) == {
        "kind": "lora", "base": str(tiny.resolve()), "base_gguf": None, "template": "kopa-hermes-chatml",
        "engine": "trl", "parent": None}
    for name in ("adapter_config.json", "adapter_model.safetensors", "tokenizer.json", "tokenizer_config.json"):
        assert (checkpoint / name).is_file(), name
    adapter = json.loads((checkpoint / "adapter_config.json").read_text())
    assert (adapter["r"], adapter["lora_alpha"], adapter["lora_dropout"]) == (16, 32, 0.05)
    assert set(adapter["target_modules"]) == {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                              "down_proj"}

    base = AutoModelForCausalLM.from_pretrained(tiny)
    trained = PeftModel.from_pretrained(base, checkpoint)
    lora_b = [p for n, p in trained.named_parameters() if "lora_B" in n]
    assert lora_b and any(p.abs().sum() > 0 for p in lora_b)  # one step moved B away from its zero init
    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    assert tokenizer.eos_token == "<|im_end|>" and tokenizer.pad_token == "<|endoftext|>"
    with torch.no_grad():
        logits = trained(**tokenizer("서울역", return_tensors="pt")).logits
    assert torch.isfinite(logits).all()

    from appliance.config import KopaSettings
    from appliance.metadb import open_metadb
    from train.records import recent_runs

    [row] = recent_runs(open_metadb(KopaSettings().metadb_url))
    assert (row.run_dir, row.kind, row.status, row.steps) == (str(run), "sft", "finished", 1)

    # an adapter continues from the run folder: its kopa-checkpoint.json names the base
    from train.engines.trl.model import resolve_model

    source = resolve_model(run, home=home)
    assert (source.base, source.adapter) == (tiny.resolve(), checkpoint.resolve())


class _Killed(Exception):
    """Stands for the kill of a long SFT run, right after a checkpoint was saved."""


def _steps(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def _killed_at_save(step: int):
    """A trainer callback that kills the run right after the checkpoint of ``step`` is saved."""
    from transformers import TrainerCallback

    class KillAtSave(TrainerCallback):
        def on_save(self, args, state, control, **kwargs):
            if state.global_step == step:
                raise _Killed

    return KillAtSave()


def _resumable_sft(sft_dataset, tiny, tmp_path, max_steps: int):
    from train.engines.trl.sft import run_sft

    def train(run: Path, *callbacks) -> Path:
        return run_sft(sft_dataset, home=tmp_path / "home", model=tiny, max_steps=max_steps, seed=3,
                       max_length=MAX_LENGTH, run_dir=run, save_every=1, resume=True, callbacks=callbacks)

    return train


def _same_adapter(run: Path, other: Path) -> bool:
    import torch
    from safetensors.torch import load_file

    weights = load_file(run / "checkpoint" / "adapter_model.safetensors")
    expected = load_file(other / "checkpoint" / "adapter_model.safetensors")
    return weights.keys() == expected.keys() and all(torch.allclose(weights[k], expected[k], atol=1e-5)
                                                     for k in weights)


def test_a_killed_run_continues_from_its_last_checkpoint_and_ends_as_an_unbroken_run_would(sft_dataset, tiny,
                                                                                          tmp_path):
    from train.engines.trl.sft import latest_trainer_checkpoint

    train = _resumable_sft(sft_dataset, tiny, tmp_path, max_steps=3)
    whole = train(tmp_path / "whole")
    cut = tmp_path / "cut"
    with pytest.raises(_Killed):
        train(cut, _killed_at_save(2))
    assert latest_trainer_checkpoint(cut) == cut / "checkpoint-2"
    assert sorted(p.name for p in cut.glob("checkpoint-*")) == ["checkpoint-2"]  # only the latest is kept
    assert not (cut / "checkpoint").exists()
    with (cut / "metrics.jsonl").open("a") as f:  # a step the kill cut short logged a line: it is trained again
        f.write(json.dumps({"step": 3, "loss": 99.0}) + "\n")

    train(cut)
    assert [m["step"] for m in _steps(cut)] == [1, 2, 3]
    for resumed, unbroken in zip(_steps(cut), _steps(whole), strict=True):
        assert resumed["loss"] == pytest.approx(unbroken["loss"], rel=1e-4)
        assert resumed["tokens"] == unbroken["tokens"]
    assert _same_adapter(cut, whole)
    assert not list(cut.glob("checkpoint-*")) and not list(whole.glob("checkpoint-*"))  # spent once the end is written


def test_a_run_killed_after_its_last_checkpoint_trains_no_step_more(sft_dataset, tiny, tmp_path):
    from transformers import TrainerCallback

    class Starts(TrainerCallback):
        seen: list = []

        def on_train_begin(self, args, state, control, model=None, processing_class=None, **kwargs):
            self.seen.append((state.global_step, model is not None, processing_class is not None))

    train = _resumable_sft(sft_dataset, tiny, tmp_path, max_steps=2)
    whole = train(tmp_path / "whole")
    cut = tmp_path / "cut"
    with pytest.raises(_Killed):
        train(cut, _killed_at_save(2))  # as the kill of a loop during its last step's probe
    assert (cut / "checkpoint-2" / "trainer_state.json").is_file()
    starts = Starts()
    train(cut, starts)
    assert [m["step"] for m in _steps(cut)] == [1, 2]  # transformers alone would train a step 3 here
    assert starts.seen == [(2, True, True)]  # the callbacks (the loop's probes) still start, at step 2
    assert _same_adapter(cut, whole)
    assert not list(cut.glob("checkpoint-*"))


def test_the_loss_mask_covers_the_assistant_turns_only(sft_dataset, tiny, tmp_path):
    from models.templates import render_conversation
    from tests.models.template_cases import masked_spans
    from train.engines.trl.sft import build_trainer, prepare

    rows, _source, model, tokenizer = prepare(sft_dataset, home=tmp_path, model=tiny, seed=0, max_length=MAX_LENGTH)
    assert len(rows) == len(SFT_IDS) and all(r["messages"][-1]["role"] == "assistant" for r in rows)
    trainer = build_trainer(rows, model, tokenizer, tmp_path / "out", max_steps=1, seed=0, learning_rate=1e-4,
                            max_length=MAX_LENGTH)
    seen = 0
    for example in trainer.train_dataset:
        ids, labels = example["input_ids"], example["labels"]
        trained = [label != -100 for label in labels]
        assert all(label == token for token, label, bit in zip(ids, labels, trained, strict=True) if bit)
        spans = masked_spans(range(len(ids)), trained)  # positions
        row = next(r for r in rows if tokenizer.decode(ids).startswith(
            render_conversation(r["messages"], json.loads(r["tools"]))[:2000]))
        turns = [m for m in row["messages"] if m["role"] == "assistant"]
        assert len(spans) == len(turns) >= 1
        for span, turn in zip(spans, turns, strict=True):
            whole = render_conversation([turn])  # "<|im_start|>assistant\n" + the turn + "<|im_end|>\n"
            assert tokenizer.decode([ids[i] for i in span]) == whole.removeprefix("<|im_start|>assistant\n")[:-1]
            assert tokenizer.decode(ids[:span[0]]).endswith("<|im_start|>assistant\n")
            assert tokenizer.decode([ids[span[-1]]]) == "<|im_end|>"
        seen += 1
    assert seen == len(SFT_IDS)
    batch = next(iter(trainer.get_train_dataloader()))
    assert (batch["labels"] != -100).sum() > 0 and (batch["labels"] == -100).sum() > 1000  # the prompt is masked


def test_rows_reach_the_template_with_typed_arguments_as_the_bench_renders_them(sft_dataset):
    from models.templates import render_conversation
    from models.toolcalls import template_messages
    from train.engines.trl.sft import load_sft_rows

    raw = [json.loads(line) for line in (sft_dataset / "sft.jsonl").read_text().splitlines()]
    rows = load_sft_rows(sft_dataset)
    for row, original in zip(rows, raw, strict=True):
        assert json.loads(row["tools"]) == original["tools"]
        assert render_conversation(row["messages"], original["tools"]) == \
            render_conversation(template_messages(original["messages"], original["tools"]), original["tools"])


@pytest.mark.parametrize("case", ["no-sft-jsonl", "missing-dataset", "model-not-a-model", "model-missing",
                                  "row-without-assistant"])
def test_bad_input_is_one_line_exit_2_and_nothing_written(home, sft_dataset, tmp_path, case):
    empty = tmp_path / "empty"
    empty.mkdir()
    args = {"no-sft-jsonl": ["--dataset", str(empty)],
            "missing-dataset": ["--dataset", str(tmp_path / "nope")],
            "model-not-a-model": ["--dataset", str(sft_dataset), "--model", str(empty)],
            "model-missing": ["--dataset", str(sft_dataset), "--model", str(tmp_path / "nope")],
            "row-without-assistant": ["--dataset", str(tmp_path / "bad")]}[case]
    if case == "row-without-assistant":
        (tmp_path / "bad").mkdir()
        (tmp_path / "bad" / "sft.jsonl").write_text('{"messages": [{"role": "user", "content": "hi"}], "tools": []}\n')
    done = CliRunner().invoke(train_app, ["sft", "--engine", "trl", *args])
    assert done.exit_code == 2, done.output
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.output
    expected = {"no-sft-jsonl": f"--dataset {empty}: has no sft.jsonl",
                "missing-dataset": "nope: does not exist",
                "model-not-a-model": f"--model {empty}: is not a model folder (no config.json",
                "model-missing": "nope: does not exist",
                "row-without-assistant": "sft.jsonl:1: the row has no assistant turn"}[case]
    assert expected in lines[0]
    assert not (home / "train").exists() and not (home / "models").exists()


def test_the_lm_head_scores_only_trained_positions_on_the_cpu_with_the_same_loss(sft_dataset, tiny, tmp_path,
                                                                                  monkeypatch):
    """``score_labeled_positions_only``: TRL's fused head projects the ~200 labeled positions of a row instead of all
    ~3,000 (half of a CPU step with Gemma's vocabulary), and the loss is the one every position gives."""
    import torch
    from trl.trainer import utils

    from train.engines.trl.fused_head import score_labeled_positions_only
    from train.engines.trl.sft import build_trainer, prepare

    projected: list[int] = []
    apply = utils._ChunkedLogProbFunction.apply

    def counting(hidden, *args):
        projected.append(hidden.shape[0])
        return apply(hidden, *args)

    monkeypatch.setattr(utils._ChunkedLogProbFunction, "apply", counting)
    rows, _source, model, tokenizer = prepare(sft_dataset, home=tmp_path, model=tiny, seed=0, max_length=MAX_LENGTH)
    trainer = build_trainer(rows, model, tokenizer, tmp_path / "out", max_steps=1, seed=0, learning_rate=1e-4,
                            max_length=MAX_LENGTH)
    batch = next(iter(trainer.get_train_dataloader()))
    labeled = int((batch["labels"][:, 1:] != -100).sum())
    positions = batch["labels"][:, 1:].numel()
    model.eval()  # no LoRA dropout: both paths see the same network
    with torch.no_grad():
        every = trainer.compute_loss(model, dict(batch))
        with score_labeled_positions_only() as switched:
            only_labeled = trainer.compute_loss(model, dict(batch))
    assert switched
    assert projected == [positions, labeled] and 0 < labeled < positions / 5
    assert torch.allclose(every, only_labeled, rtol=1e-5, atol=1e-6), (float(every), float(only_labeled))
    assert utils._use_triton(torch.device("cpu")) is False  # the switch is TRL's own again after the context


def with_slip(row: dict) -> tuple[dict, int]:
    """``row`` with EDGE's slip (``kopa edge export --slips``): its first assistant turn made once before it, not
    learnt (weight 0), answered with an error; and the slip's index."""
    first = next(i for i, m in enumerate(row["messages"]) if m["role"] == "assistant")
    slip = {**row["messages"][first], "weight": 0}
    answer = {"role": "tool", "tool_call_id": "call_slip", "content": '{"outcome": "missing_field"}'}
    return {**row, "messages": [*row["messages"][:first], slip, answer, *row["messages"][first:]]}, first


def test_a_row_is_never_cut_after_a_turn_it_does_not_learn(sft_dataset, tiny, tmp_path):
    from train.engines.trl.sft import fit_rows, prepare

    rows, _source, _model, tokenizer = prepare(sft_dataset, home=tmp_path, model=tiny, seed=0, max_length=MAX_LENGTH)
    slipped, first = with_slip(rows[0])
    up_to_slip = len(tokenizer.apply_chat_template(slipped["messages"][:first + 1], tools=json.loads(slipped["tools"]),
                                                   tokenize=True, return_dict=True)["input_ids"])
    assert fit_rows([slipped], tokenizer, up_to_slip) == ([], 1)  # room for the slip alone: nothing to learn
    (kept,), dropped = fit_rows([slipped], tokenizer, MAX_LENGTH + 512)
    assert dropped == 0 and kept["messages"][-1]["role"] == "assistant" and "weight" not in kept["messages"][-1]
    assert kept["messages"][first]["weight"] == 0  # the slip stays where a learnt turn follows it


def test_a_turn_of_weight_0_is_shown_but_not_learnt(sft_dataset, tiny, tmp_path):
    from tests.models.template_cases import masked_spans
    from train.engines.trl.sft import build_trainer, prepare

    rows, _source, model, tokenizer = prepare(sft_dataset, home=tmp_path, model=tiny, seed=0, max_length=MAX_LENGTH)
    plain = rows[0]
    slipped, first = with_slip(plain)
    slip = slipped["messages"][first]
    trainer = build_trainer([plain, slipped], model, tokenizer, tmp_path / "out", max_steps=1, seed=0,
                            learning_rate=1e-4, max_length=MAX_LENGTH + 512)
    learnt = []
    for example in trainer.train_dataset:
        ids, labels = example["input_ids"], example["labels"]
        spans = masked_spans(range(len(ids)), [label != -100 for label in labels])
        learnt.append([tokenizer.decode([ids[i] for i in span]) for span in spans])
    assert len(learnt[0]) >= 1 and learnt[1] == learnt[0]  # the same turns learnt: the slip is not among them
    shown = [tokenizer.decode(example["input_ids"]).count("<tool_call>") for example in trainer.train_dataset]
    assert shown[1] == shown[0] + len(slip["tool_calls"])  # but the slip is in what the model reads
