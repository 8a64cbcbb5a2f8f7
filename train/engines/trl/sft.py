"""SFT with TRL on EDGE's ``sft.jsonl``: a LoRA adapter, the loss on the assistant's turns only.

    run = run_sft(Path("~/.kopa/edge/datasets/d1"), home=home, max_steps=20, seed=0)
    run / "checkpoint"            # adapter_config.json, adapter_model.safetensors, tokenizer files, kopa-checkpoint.json
    run / "metrics.jsonl"         # {"step", "loss", "tokens", "tokens_per_s", "step_time_s", "cpu_time_s", ...} a line

The rows (``{"messages": [...], "tools": [...]}``, tool-call arguments as JSON strings) reach the chat template
through ``models.toolcalls.template_messages`` (the arguments typed by the tool's schema), as verl's and the
rollouts' token builders see them; the typed arguments go back into a JSON string (``json.dumps`` with
``ensure_ascii=False``, byte for byte what the template's ``tojson`` writes) so that the rows fit one Arrow
schema. TRL's ``assistant_only_loss`` masks the loss to the ``{% generation %}`` spans of
``models.templates.HERMES_CHATML``: each assistant turn's text and calls and its ``<|im_end|>``.

A conversation longer than ``max_length`` tokens is cut after its last assistant turn that fits (never inside a
turn); one whose first assistant turn does not fit is left out (EDGE's tool schemas alone are 6-8k tokens of
byte-level Hangul for SmolLM2's tokenizer). Precision: ``train.engines.trl_precision`` (bf16 on CUDA or a CPU
with AMX-BF16 or AVX512-BF16, else fp32).

A run given ``save_every`` keeps its latest trainer checkpoint (``checkpoint-<step>``: adapter, optimizer, scheduler, RNG
states) and ``resume=True`` continues from it: a killed run of hours loses at most ``save_every`` steps, and the steps it
redoes are cut from ``metrics.jsonl`` first, so each step has one line. The ``checkpoint-<step>`` folders are removed
once the final ``checkpoint`` is written.

The run folder is ``<home>/train/runs/sft-trl-<UTC stamp>``, made only after the dataset and the model are read;
bad input (no ``sft.jsonl``, no usable row, a ``--model`` that is no model) is a ``ModelInputError`` with one
line and leaves nothing behind.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .fused_head import score_labeled_positions_only
from .model import LoraSettings, ModelInputError, ModelSource, load_for_training, resolve_model

__all__ = ["DEFAULT_MAX_LENGTH", "RECIPE", "TEMPLATE", "CheckpointInfo", "build_trainer", "check_settings", "fit_rows",
           "latest_trainer_checkpoint", "load_sft_rows", "prepare", "run_prepared", "run_sft", "write_checkpoint"]

RECIPE = "sft-trl"
TEMPLATE = "kopa-hermes-chatml"  # models.templates.TEMPLATE_NAME
DEFAULT_MAX_LENGTH = 8192

CheckpointInfo = dict[str, Any]


def _row_problem(row: Any) -> str | None:
    if not isinstance(row, dict) or not isinstance(row.get("messages"), list):
        return "has no messages list"
    if not any(isinstance(m, dict) and m.get("role") == "assistant" for m in row["messages"]):
        return "has no assistant turn"
    if not isinstance(row.get("tools", []), list):
        return "has a tools value that is not a list"
    return None


def load_sft_rows(dataset_dir: Path) -> list[dict[str, Any]]:
    """The rows of ``<dataset_dir>/sft.jsonl`` as the trainer takes them (module doc): ``messages`` with typed,
    re-serialized call arguments and ``tools`` as a JSON string.

    Raises:
        ModelInputError: the folder or its ``sft.jsonl`` is missing, a line is not JSON, a row has no
            assistant turn, or there is no row.
    """
    from models.toolcalls import template_messages

    folder = Path(dataset_dir).expanduser()
    path = folder / "sft.jsonl" if folder.is_dir() else folder
    if not folder.exists():
        raise ModelInputError(f"--dataset {dataset_dir}: does not exist")
    if not path.is_file() or path.name != "sft.jsonl":
        raise ModelInputError(f"--dataset {dataset_dir}: has no sft.jsonl (write it with `kopa edge export DIR`)")
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise ModelInputError(f"{path}:{number}: not JSON ({exc})") from None
        problem = _row_problem(row)
        if problem:
            raise ModelInputError(f"{path}:{number}: the row {problem}")
        tools = row.get("tools") or []
        messages = template_messages(row["messages"], tools)
        for message in messages:
            for call in message.get("tool_calls") or []:
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict) and not isinstance(function.get("arguments"), str):
                    function["arguments"] = json.dumps(function["arguments"], ensure_ascii=False)
        rows.append({"messages": messages, "tools": json.dumps(tools, ensure_ascii=False)})
    if not rows:
        raise ModelInputError(f"{path}: has no rows")
    return rows


def fit_rows(rows: list[dict[str, Any]], tokenizer: Any, max_length: int) -> tuple[list[dict[str, Any]], int]:
    """Each row cut after its last learnt assistant turn within ``max_length`` tokens (never after a turn of
    ``"weight": 0``, which teaches nothing alone); rows whose first learnt turn does not fit are dropped. Returns the
    rows kept and how many were dropped."""
    kept, dropped = [], 0
    for row in rows:
        tools = json.loads(row["tools"]) or None
        messages = row["messages"]
        ends = [i + 1 for i, m in enumerate(messages) if m.get("role") == "assistant" and m.get("weight") != 0]
        best = None
        for end in reversed(ends):
            ids = tokenizer.apply_chat_template(messages[:end], tools=tools, tokenize=True, return_dict=True)
            if len(ids["input_ids"]) <= max_length:
                best = end
                break
        if best is None:
            dropped += 1
        else:
            kept.append({"messages": messages[:best], "tools": row["tools"]})
    return kept, dropped


def write_checkpoint(model: Any, tokenizer: Any, folder: Path, source: ModelSource) -> CheckpointInfo:
    """The adapter, the tokenizer and ``kopa-checkpoint.json`` (the contract serving reads) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    from models.checkpoints import checkpoint_info

    template = checkpoint_info(source.base).get("template") or TEMPLATE  # the base's own (Gemma has its own)
    info: CheckpointInfo = {"kind": "lora", "base": str(source.base.resolve()),
                            "base_gguf": str(source.base_gguf.resolve()) if source.base_gguf else None,
                            "template": template, "engine": "trl",
                            "parent": str(source.adapter) if source.adapter else None}
    (folder / "kopa-checkpoint.json").write_text(json.dumps(info, indent=1), encoding="utf-8")
    return info


def _step_logger(metrics: Path, on_step: Callable[[dict[str, Any]], None] | None) -> Any:
    from transformers import TrainerCallback

    class StepLog(TrainerCallback):
        """One line of ``metrics.jsonl`` per logged step: the loss, the step time, the tokens it trained on."""

        def __init__(self) -> None:
            self.started = self.cpu_started = 0.0
            self.step_time = self.cpu_time = 0.0
            self.seen = 0

        def on_train_begin(self, args, state, control, **kwargs):
            self.seen = int(state.num_input_tokens_seen)  # a resumed run has seen the tokens of its earlier steps

        def on_step_begin(self, args, state, control, **kwargs):
            self.started, self.cpu_started = time.perf_counter(), time.process_time()

        def on_step_end(self, args, state, control, **kwargs):
            self.step_time = time.perf_counter() - self.started
            self.cpu_time = time.process_time() - self.cpu_started

        def on_log(self, args, state, control, logs=None, **kwargs):
            if not logs or "loss" not in logs:
                return
            tokens = int(state.num_input_tokens_seen) - self.seen
            self.seen = int(state.num_input_tokens_seen)
            summary = {"step": state.global_step, "loss": float(logs["loss"]), "tokens": tokens,
                       "tokens_per_s": tokens / self.step_time if self.step_time else None,
                       "step_time_s": self.step_time, "cpu_time_s": self.cpu_time,
                       "learning_rate": logs.get("learning_rate"),
                       "grad_norm": logs.get("grad_norm")}
            with metrics.open("a", encoding="utf-8") as out:
                out.write(json.dumps(summary) + "\n")
            if on_step is not None:
                on_step(summary)

    return StepLog()


def build_trainer(rows: list[dict[str, Any]], model: Any, tokenizer: Any, output_dir: Path, *, max_steps: int,
                  seed: int, learning_rate: float, max_length: int, callbacks: list[Any] = (),
                  save_every: int | None = None) -> Any:
    """TRL's ``SFTTrainer`` over the fitted rows: batch 1, assistant-only loss, the precision of this machine;
    ``save_every``: a resumable checkpoint every that many steps (only the latest kept)."""
    import torch
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    from train.engines import trl_precision

    cuda = torch.cuda.is_available()
    precision, _why = trl_precision(cuda=cuda)
    config = SFTConfig(output_dir=str(output_dir), max_steps=max_steps, per_device_train_batch_size=1,
                       gradient_accumulation_steps=1, learning_rate=learning_rate, seed=seed, data_seed=seed,
                       logging_steps=1, save_strategy="steps" if save_every else "no", save_steps=save_every or 500,
                       save_total_limit=1, report_to=[], use_cpu=not cuda,
                       bf16=precision == "bf16", assistant_only_loss=True, max_length=max_length,
                       include_num_input_tokens_seen="all", dataloader_num_workers=0, disable_tqdm=True,
                       warmup_steps=0, lr_scheduler_type="constant")
    return SFTTrainer(model=model, args=config, train_dataset=Dataset.from_list(rows), processing_class=tokenizer,
                      callbacks=list(callbacks))


def prepare(dataset_dir: Path, *, home: Path, model: Path | None, seed: int,
            max_length: int = DEFAULT_MAX_LENGTH,
            select: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None,
            ) -> tuple[list[dict[str, Any]], ModelSource, Any, Any]:
    """Everything read and checked before a run folder exists: the rows (fitted, then ``select``-ed), the source,
    model, tokenizer.

    Raises:
        ModelInputError: bad dataset or model (module doc), or no row fits ``max_length``.
    """
    rows = load_sft_rows(dataset_dir)
    source = resolve_model(model, home=home)
    peft_model, tokenizer = load_for_training(source, seed=seed, lora=LoraSettings())
    fitted, dropped = fit_rows(rows, tokenizer, max_length)
    if not fitted:
        raise ModelInputError(f"--dataset {dataset_dir}: none of its {dropped} rows has an assistant turn within "
                              f"{max_length} tokens (raise --max-length)")
    if select is not None:
        fitted = select(fitted)
    return fitted, source, peft_model, tokenizer


def run_sft(dataset_dir: Path, *, home: Path, model: Path | None = None, max_steps: int = 20, seed: int = 0,
            learning_rate: float = 1e-4, max_length: int = DEFAULT_MAX_LENGTH,
            on_step: Callable[[dict[str, Any]], None] | None = None, run_dir: Path | None = None,
            callbacks: Sequence[Any] = (), save_every: int | None = None, resume: bool = False,
            select: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None) -> Path:
    """Train a LoRA adapter on ``<dataset_dir>/sft.jsonl`` for ``max_steps`` steps; returns the run folder
    (``run_dir``, or a new one under ``<home>/train/runs``). ``callbacks``: more ``transformers`` trainer callbacks;
    ``save_every`` / ``resume``: checkpoints to continue a killed run from (module doc); ``select``: the rows to
    train on, of those read (``train.row_balance.balanced_rows``: evenly across domains).

    Raises:
        ModelInputError: bad input (module doc); nothing is written then.
    """
    check_settings(max_steps, learning_rate)
    prepared = prepare(dataset_dir, home=home, model=model, seed=seed, max_length=max_length, select=select)
    return run_prepared(prepared, home=home, dataset_dir=dataset_dir, max_steps=max_steps, seed=seed,
                        learning_rate=learning_rate, max_length=max_length, on_step=on_step, run_dir=run_dir,
                        callbacks=callbacks, save_every=save_every, resume=resume)


def check_settings(max_steps: int, learning_rate: float) -> None:
    """A ``ModelInputError`` naming the setting when ``max_steps`` < 1 or ``learning_rate`` is not positive."""
    if max_steps < 1:
        raise ModelInputError(f"--max-steps {max_steps}: must be at least 1")
    if not (learning_rate > 0 and math.isfinite(learning_rate)):
        raise ModelInputError(f"--learning-rate {learning_rate}: must be a positive number")


def run_prepared(prepared: tuple[list[dict[str, Any]], ModelSource, Any, Any], *, home: Path, dataset_dir: Path,
                 max_steps: int, seed: int, learning_rate: float, max_length: int = DEFAULT_MAX_LENGTH,
                 on_start: Callable[[Path], None] | None = None,
                 on_step: Callable[[dict[str, Any]], None] | None = None, run_dir: Path | None = None,
                 callbacks: Sequence[Any] = (), save_every: int | None = None, resume: bool = False) -> Path:
    """``run_sft`` after ``prepare``: the run folder is made here (or ``run_dir``), ``on_start`` gets it before the
    first step; with ``resume`` a run folder's latest ``checkpoint-<step>`` is continued (module doc)."""
    from train.runs import new_run_dir

    check_settings(max_steps, learning_rate)
    rows, source, peft_model, tokenizer = prepared
    if run_dir is None:
        run_dir = new_run_dir(home, RECIPE)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "run.json").write_text(json.dumps({
        "engine": "trl", "kind": "sft", "dataset": str(Path(dataset_dir).expanduser().resolve()),
        "base": str(source.base), "adapter": str(source.adapter) if source.adapter else None, "rows": len(rows),
        "max_steps": max_steps, "seed": seed, "learning_rate": learning_rate, "max_length": max_length},
        indent=1), encoding="utf-8")
    if on_start is not None:
        on_start(run_dir)
    start = latest_trainer_checkpoint(run_dir) if resume else None
    metrics = run_dir / "metrics.jsonl"
    _keep_metrics_until(metrics, _checkpoint_step(start) if start else 0)
    trainer = build_trainer(rows, peft_model, tokenizer, run_dir, max_steps=max_steps, seed=seed,
                            learning_rate=learning_rate, max_length=max_length, save_every=save_every,
                            callbacks=[_step_logger(metrics, on_step), *callbacks])
    if start is not None and _checkpoint_step(start) >= max_steps:
        _finished_before(trainer, start)
    else:
        with score_labeled_positions_only():  # the LM head over the trained tokens only: ~2x faster a step on the CPU
            trainer.train(resume_from_checkpoint=str(start) if start else None)
    write_checkpoint(trainer.model, tokenizer, run_dir / "checkpoint", source)
    for folder in _trainer_checkpoints(run_dir):  # the final adapter is written: the resume points are spent
        shutil.rmtree(folder)
    return run_dir


def _finished_before(trainer: Any, checkpoint: Path) -> None:
    """A run killed after its last step's checkpoint (during that step's callbacks, a probe): ``trainer.train`` would
    train one step more on resuming from it, so its adapter is taken as the result instead, and the callbacks hear the
    start of training at that step (a probe still due plays there)."""
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file
    from transformers import TrainerState

    set_peft_model_state_dict(trainer.model, load_file(checkpoint / "adapter_model.safetensors"))
    trainer.state = TrainerState.load_from_json(str(checkpoint / "trainer_state.json"))
    trainer.callback_handler.on_train_begin(trainer.args, trainer.state, trainer.control)


_TRAINER_CHECKPOINT = re.compile(r"checkpoint-(\d+)")


def _checkpoint_step(folder: Path) -> int:
    match = _TRAINER_CHECKPOINT.fullmatch(folder.name)
    assert match is not None
    return int(match.group(1))


def _trainer_checkpoints(run_dir: Path) -> list[Path]:
    return sorted((p for p in run_dir.glob("checkpoint-*") if p.is_dir() and _TRAINER_CHECKPOINT.fullmatch(p.name)),
                  key=_checkpoint_step)


def latest_trainer_checkpoint(run_dir: Path) -> Path | None:
    """The run folder's latest complete ``checkpoint-<step>`` (its trainer state written last, so a folder cut off
    while saving has none and is skipped); None when there is none."""
    complete = [p for p in _trainer_checkpoints(run_dir) if (p / "trainer_state.json").is_file()]
    return complete[-1] if complete else None


def _keep_metrics_until(metrics: Path, step: int) -> None:
    """Cut ``metrics.jsonl`` to the steps up to ``step`` (those after it are trained again)."""
    if not metrics.is_file():
        return
    kept = []
    for line in metrics.read_text(encoding="utf-8").splitlines():
        try:
            if json.loads(line).get("step", 0) <= step:
                kept.append(line + "\n")
        except ValueError:
            continue  # a line cut off by the kill
    tmp = metrics.with_suffix(".tmp")
    tmp.write_text("".join(kept), encoding="utf-8")
    tmp.replace(metrics)
