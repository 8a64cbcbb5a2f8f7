"""GRPO on one machine with TRL: each rollout is a bench episode (``train.episode``) played by the model being trained.

    run = run_grpo(Path("out/edge"), home=home, max_steps=10, seed=0)        # -> <home>/train/runs/grpo-trl-<stamp>
    run / "metrics.jsonl"      # a line per step: step, reward_mean (TRL's), pass_rate, loss, completion_tokens_mean
                               # (model-written tokens), step_time_s, rollout_s, rollouts
    run / "checkpoint"         # the LoRA adapter, the tokenizer and kopa-checkpoint.json (engine "trl")

**How rollouts plug into TRL.** ``GRPOTrainer(rollout_func=...)`` (TRL 1.16, experimental): the trainer hands the
function the prompts of its generation batch (each dataset row already repeated ``num_generations`` times by its
sampler) and the trainer itself, and takes back ``prompt_ids``, ``completion_ids`` and ``logprobs`` per prompt;
every other key goes to the reward functions, except ``env_mask``, which TRL multiplies into the loss mask. It does
not need vLLM (only its weight sync is vLLM's), so no trainer method is overridden. ``EpisodeRollouts`` is that
function:

* the row's task: the prompt is matched to its dataset row (the rows' prompts, system and user text, are
  distinct), and the row's ``extra_info`` to its task (``train.tasks.TaskIndex`` over the dataset's items.jsonl);
* the episode: ``train.episode.run_rollout`` on a strict-replay bench gateway of the task's bundle (one per bundle,
  kept for the run; each rollout its own session), with a ``TokenTrace`` over the tokenizer's chat template
  (``ChatTemplateTokens``). The policy is the trained model: ``generate`` on ``trace.ids``, sampling at
  ``temperature``, stopping at ``<|im_end|>``, at most ``max_new_tokens`` (and what is left of the response
  budget), the torch seed fixed per (seed, step, rollout, turn);
* what TRL trains on: ``completion_ids`` = ``trace.response_ids`` (generations and the tool results between them),
  ``env_mask`` = ``trace.response_mask``: tool-result and template tokens get no loss;
* the reward: ``kopa_episode`` (``train.episode.episode_record``) goes to the reward function ``bench_score``,
  ``train.reward.score_record(record)["score"]``, the bench's verdict. A replay miss is a tool error the model sees
  and the bench scores (reward 0), never an exception.

The model is the engine's (``train.engines.trl.model``): a LoRA adapter (r 16, alpha 32, on q/k/v/o/gate/up/down,
here without dropout) over the base checkpoint, over a model folder given as ``model``, or continuing the adapter
of a LoRA checkpoint or run folder (an SFT run's: it becomes the ``parent``); the checkpoint is written as SFT
writes it (``train.engines.trl.sft.write_checkpoint``).
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.agents.step import Generation, TokenTrace
from bench.limits import EpisodeLimits
from train.episode import Rollout, run_rollout
from train.reward import RECORD_KEY, score_record
from train.runs import new_run_dir
from train.tasks import TaskIndex, decode_json

from .fused_head import score_labeled_positions_only
from .generate import torch_policy
from .model import LoraSettings, load_for_training, resolve_model
from .sft import write_checkpoint
from .tokens import ChatTemplateTokens

__all__ = ["EpisodeRollouts", "GrpoError", "PlayedRollout", "bench_score", "check_dataset", "run_grpo"]

LORA = LoraSettings(dropout=0.0)  # r 16, alpha 32, every projection; no dropout: rollouts and loss see one model
SEED_STRIDE = 1_000_003  # seeds of different steps, rollouts and turns never meet


class GrpoError(ValueError):
    """The GRPO run cannot start: the dataset or the model is not what it needs; the message says which."""


def bench_score(completions: Sequence[Any], **kwargs: Any) -> list[float]:
    """The GRPO reward (TRL reward function): the bench's verdict on each rollout's episode record."""
    return [score_record(record)["score"] for record in kwargs[RECORD_KEY]]


def _prompt_key(prompt: Sequence[Mapping[str, Any]]) -> str:
    return json.dumps([[m.get("role"), m.get("content")] for m in prompt], ensure_ascii=False)


@dataclass
class PlayedRollout:
    """One rollout as TRL got it: the episode, its token trace and its reward."""

    rollout: Rollout
    trace: TokenTrace
    reward: float
    step: int


@dataclass
class EpisodeRollouts:
    """TRL's ``rollout_func`` (module doc): ``rollouts(prompts, trainer)`` plays one episode per prompt.

    ``rows``: the dataset rows (``prompt`` and ``extra_info``); ``index`` finds their tasks. ``played`` keeps the
    rollouts of the last call (what the metrics and the tests read). ``guide(task, i)``, when given and it returns
    a policy (``train.episode.Policy``, e.g. ``train.policies.GoldenPolicy``), plays the ``i``-th rollout of the
    call instead of the model: demonstrations mixed into a group (off-policy guidance), or a CPU check that needs
    a rollout with tool calls from a random model's group; its text is trained on as if the model wrote it.
    """

    rows: Sequence[Mapping[str, Any]]
    index: TaskIndex
    tokenizer: Any
    cassettes: Path
    home: Path | None = None
    limits: EpisodeLimits = field(default_factory=EpisodeLimits)
    max_new_tokens: int = 256
    max_response_tokens: int = 4096
    temperature: float = 1.0
    seed: int = 0
    guide: Callable[[Any, int], Any] | None = None
    played: list[PlayedRollout] = field(default_factory=list)
    rollout_s: float = 0.0  # the time the last call spent playing episodes

    def __post_init__(self) -> None:
        self._rows: dict[str, Any] = {}
        for row in self.rows:
            key = _prompt_key(row["prompt"])
            info = decode_json(row.get("extra_info"))
            if key in self._rows and self._rows[key] != info:
                raise GrpoError(f"two dataset rows have the same prompt but name different items: "
                                f"{self._rows[key]} and {info}")
            self._rows[key] = info
        self._loop = asyncio.new_event_loop()
        self._gateways: dict[str, Any] = {}

    def task_for(self, prompt: Sequence[Mapping[str, Any]]) -> Any:
        key = _prompt_key(prompt)
        if key not in self._rows:
            raise GrpoError(f"a prompt is not one of the dataset's {len(self._rows)} rows: {key[:200]}")
        return self.index.task_for(self._rows[key])

    def __call__(self, prompts: Sequence[Sequence[Mapping[str, Any]]], trainer: Any) -> dict[str, list[Any]]:
        step = int(trainer.state.global_step)
        model = trainer.accelerator.unwrap_model(trainer.model)
        self.played = self.run(prompts, model, step)
        out: dict[str, list[Any]] = {"prompt_ids": [], "completion_ids": [], "logprobs": [], "env_mask": [],
                                     RECORD_KEY: [], "kopa_passed": []}
        for p in self.played:
            ids, mask, logprobs = p.trace.response_ids, p.trace.response_mask, p.trace.response_logprobs
            if not ids:  # the episode ended before its first generation: one end token, no loss
                ids, mask, logprobs = [self.tokenizer.eos_token_id], [0], [0.0]
            out["prompt_ids"].append(p.trace.prompt_ids)
            out["completion_ids"].append(list(ids))
            out["env_mask"].append(list(mask))
            out["logprobs"].append(list(logprobs) if len(logprobs) == len(ids) else [0.0] * len(ids))
            out[RECORD_KEY].append(p.rollout.record)
            out["kopa_passed"].append(float(p.rollout.outcome.passed))
        return out

    def run(self, prompts: Sequence[Sequence[Mapping[str, Any]]], model: Any, step: int = 0) -> list[PlayedRollout]:
        """``play`` on the event loop the gateways live in (kept until ``close``)."""
        started = time.monotonic()
        try:
            return self._loop.run_until_complete(self.play(prompts, model, step))
        finally:
            self.rollout_s = time.monotonic() - started

    async def play(self, prompts: Sequence[Sequence[Mapping[str, Any]]], model: Any,
                   step: int = 0) -> list[PlayedRollout]:
        """One rollout per prompt, in order (the model generates on this machine's one device)."""
        played = []
        for i, prompt in enumerate(prompts):
            task = self.task_for(prompt)
            trace = TokenTrace(ChatTemplateTokens(self.tokenizer), max_response_tokens=self.max_response_tokens)
            guide = self.guide(task, i) if self.guide is not None else None
            policy = (self._guided(guide) if guide is not None else
                      self._policy(model, trace, seed=self.seed + SEED_STRIDE * (step * len(prompts) + i)))
            rollout = await run_rollout(task, policy, await self._gateway(task.bundle), limits=self.limits,
                                        tokens=trace)
            if not trace.ids:  # ended before the first generation (its time ran out): the prompt alone
                await trace.codec.start(trace, rollout.messages[:2], [])
            played.append(PlayedRollout(rollout, trace, score_record(rollout.record)["score"], step))
        return played

    def _policy(self, model: Any, trace: TokenTrace, *, seed: int) -> Callable[..., Any]:
        return torch_policy(model, self.tokenizer, trace, seed=seed, temperature=self.temperature,
                            max_new_tokens=self.max_new_tokens)

    def _guided(self, guide: Any) -> Callable[..., Any]:
        """A guide's text as the tokens of a generation that ended at the end-of-turn token (log-probs 0)."""
        async def policy(messages: Any, tools: Any) -> Generation:
            text = str(await guide(messages, tools))
            ids = list(self.tokenizer.encode(text, add_special_tokens=False)) + [self.tokenizer.eos_token_id]
            return Generation(text + self.tokenizer.eos_token, ids, [0.0] * len(ids))

        return policy

    async def _gateway(self, bundle: str) -> Any:
        if bundle not in self._gateways:
            from mcp_gateway.gateway import open_gateway

            self._gateways[bundle] = open_gateway(upstream="replay", mode="replay", profile="bench", bundle=bundle,
                                                  cassettes=self.cassettes, home=self.home)
        return self._gateways[bundle]

    def close(self) -> None:
        """Close the gateways and the event loop the rollouts ran in."""
        async def close_all() -> None:
            for bundle in list(self._gateways):
                await self._gateways.pop(bundle).aclose()

        if not self._loop.is_closed():
            self._loop.run_until_complete(close_all())
            self._loop.close()


# ---------------------------------------------------------------------------------------------- the run


def _metrics_callback(rollouts: EpisodeRollouts, path: Path, on_step: Callable[[dict[str, Any]], None] | None) -> Any:
    from transformers import TrainerCallback

    class Metrics(TrainerCallback):
        started = 0.0

        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.started = time.monotonic()

        def on_log(self, args: Any, state: Any, control: Any, logs: Mapping[str, Any] | None = None,
                   **kwargs: Any) -> None:
            if not logs or "loss" not in logs:
                return
            passed = [float(p.rollout.outcome.passed) for p in rollouts.played]
            line = {"step": state.global_step, "reward_mean": float(logs.get("reward", math.nan)),
                    "pass_rate": sum(passed) / len(passed) if passed else math.nan, "loss": float(logs["loss"]),
                    "completion_tokens_mean": float(logs.get("completions/mean_length", math.nan)),
                    "step_time_s": round(time.monotonic() - self.started, 3),
                    "rollout_s": round(rollouts.rollout_s, 3), "rollouts": len(rollouts.played)}
            with path.open("a", encoding="utf-8") as out:
                out.write(json.dumps(line) + "\n")
            if on_step is not None:
                on_step(line)

    return Metrics()


def check_dataset(dataset_dir: Path) -> tuple[Path, Path]:
    """``train.parquet`` and ``items.jsonl`` of an EDGE dataset folder.

    Raises:
        GrpoError: the folder or one of the two files is missing (the message names it).
    """
    dataset_dir = Path(dataset_dir).expanduser()
    if not dataset_dir.is_dir():
        raise GrpoError(f"--dataset {dataset_dir}: no such folder")
    parquet, items = dataset_dir / "train.parquet", dataset_dir / "items.jsonl"
    for needed in (parquet, items):
        if not needed.is_file():
            raise GrpoError(f"--dataset {dataset_dir}: {needed.name} is missing; the folder needs train.parquet and "
                            "items.jsonl (EDGE's export)")
    return parquet, items


def run_grpo(dataset_dir: Path, *, home: Path, model: Path | None = None, max_steps: int = 1,
             num_generations: int = 2, prompts_per_step: int = 1, seed: int = 0, learning_rate: float = 1e-5,
             limits: EpisodeLimits | None = None, max_new_tokens: int = 256, max_response_tokens: int = 4096,
             temperature: float = 1.0, cassettes: Path | None = None, run_dir: Path | None = None,
             on_step: Callable[[dict[str, Any]], None] | None = None,
             guide: Callable[[Any, int], Any] | None = None, rollouts_out: list[EpisodeRollouts] | None = None) -> Path:
    """GRPO over ``dataset_dir`` (``train.parquet`` and ``items.jsonl``, as EDGE writes them); the run folder.

    ``model``: None for the base checkpoint of ``home``, a model folder, or a LoRA checkpoint to go on from.
    ``limits``: the episode limits (``kopa.toml``'s ``[episode]``). ``max_new_tokens`` bounds one generation,
    ``max_response_tokens`` the whole response (generations and tool results). Each step plays
    ``prompts_per_step`` rows ``num_generations`` times. ``on_step(line)`` hears each metrics line;
    ``guide``: see ``EpisodeRollouts``. ``rollouts_out`` gets the run's ``EpisodeRollouts`` (its last rollouts).

    Raises:
        GrpoError: the dataset is missing or not usable.
        train.engines.trl.model.ModelInputError: ``model`` is no model, adapter or run folder.
    """
    import os

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    dataset_dir, home = Path(dataset_dir).expanduser(), Path(home).expanduser()
    parquet, items = check_dataset(dataset_dir)
    cassettes = Path(cassettes) if cassettes else Path(__file__).resolve().parents[3] / "cassettes"
    data = Dataset.from_parquet(str(parquet)).select_columns(["prompt", "extra_info"])
    source = resolve_model(model, home=home)
    policy, tokenizer = load_for_training(source, seed=seed, lora=LORA)
    run = Path(run_dir) if run_dir else new_run_dir(home, "grpo-trl")
    run.mkdir(parents=True, exist_ok=True)
    rollouts = EpisodeRollouts(rows=list(data), index=TaskIndex.from_files([items]), tokenizer=tokenizer,
                               cassettes=cassettes, home=home, limits=limits or EpisodeLimits(),
                               max_new_tokens=max_new_tokens, max_response_tokens=max_response_tokens,
                               temperature=temperature, seed=seed, guide=guide)
    if rollouts_out is not None:
        rollouts_out.append(rollouts)
    config = GRPOConfig(output_dir=str(run / "trainer"), max_steps=max_steps, learning_rate=learning_rate, seed=seed,
                        per_device_train_batch_size=prompts_per_step * num_generations, gradient_accumulation_steps=1,
                        num_generations=num_generations, max_completion_length=max_response_tokens,
                        temperature=temperature, beta=0.0, logging_steps=1, save_strategy="no", report_to="none",
                        use_cpu=not torch.cuda.is_available(), bf16=False, fp16=False, remove_unused_columns=False,
                        dataloader_num_workers=0, disable_tqdm=True)
    trainer = GRPOTrainer(model=policy, reward_funcs=[bench_score], args=config, train_dataset=data,
                          processing_class=tokenizer, rollout_func=rollouts,
                          callbacks=[_metrics_callback(rollouts, run / "metrics.jsonl", on_step)])
    try:
        with score_labeled_positions_only():
            trainer.train()
    finally:
        rollouts.close()
    write_checkpoint(trainer.accelerator.unwrap_model(trainer.model), tokenizer, run / "checkpoint", source)
    return run
