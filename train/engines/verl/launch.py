"""Start verl on a checked plan and stream its step metrics into a JSONL log (and the metadata DB).

    run_dir = prepare_run(plan)                       # agent_loops.yaml with absolute paths, sft.parquet, plan.json
    code = run(plan, run_dir, on_step=print)          # python -m verl.trainer.main_ppo <overrides>, waited for

verl logs every step through its ``file`` tracking backend into ``<run>/verl-metrics.jsonl``
(``VERL_FILE_LOGGER_PATH``); ``run`` follows that file and writes one summary line per step into
``<run>/metrics.jsonl``: the reward (mean sequence reward), the pass rate (mean score: the reward is the binary
pass, ``train.reward``), the KL loss, the mean response and prompt lengths, the mean number of turns and the step
time. verl's own output goes to ``<run>/verl.log``. Checkpoints go to ``<run>/checkpoints``. The run folder itself is
named by ``train.runs.new_run_dir``; an SFT run's data is EDGE's ``sft.jsonl`` written as ``<run>/sft.parquet``
(``train.sft_export.sft_parquet``).

The child gets ``PYTHONPATH`` with this repository (Ray workers import ``train.engines.verl.agent_loop``), offline Hugging Face
settings (nothing is downloaded) and ``RAY_ADDRESS`` when a cluster is given. No secret is passed or logged: a
replayed episode needs no platform key.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from bench.limits import EpisodeLimits
from train.data_checks import dataset_tasks_files
from train.sft_export import sft_parquet

from .recipes import REPO, Plan

__all__ = ["STEP_FIELDS", "command", "environment", "prepare_run", "run", "summarize_step"]

STEP_FIELDS = {  # our name -> verl's metric
    "reward": "critic/rewards/mean",
    "pass_rate": "critic/score/mean",
    "kl": "actor/kl_loss",
    "response_length": "response_length/mean",
    "prompt_length": "prompt_length/mean",
    "num_turns": "num_turns/mean",
    "step_time_s": "timing_s/step",
}


def prepare_run(plan: Plan, limits: EpisodeLimits | None = None) -> Path:
    """Create the run folder with the files the plan points at; returns it. ``limits``: the episode limits the
    rollouts play by (``KopaSettings().episode``, kopa.toml ``[episode]``), written into the agent loop's entry;
    verl's ``multi_turn`` settings give the turns and the calls per turn."""
    run_dir = Path(plan.variables["run_dir"])
    run_dir.mkdir(parents=True, exist_ok=True)
    loops = [{"name": "kopa_tool_agent", "_target_": "train.engines.verl.agent_loop.KopaToolAgentLoop",
              "cassettes": str(Path(plan.variables["cassettes"]).resolve()), "home": plan.variables["home"],
              "tasks_files": [str(p.resolve()) for p in dataset_tasks_files(Path(plan.variables["dataset"]))],
              "limits": (limits or EpisodeLimits()).model_dump(mode="json")}]
    Path(plan.variables["agent_loops"]).write_text(yaml.safe_dump(loops, allow_unicode=True), encoding="utf-8")
    if plan.recipe.kind == "sft":
        sft_parquet(Path(plan.variables["dataset"]) / "sft.jsonl", run_dir / "sft.parquet")
    (run_dir / "plan.json").write_text(json.dumps({"recipe": plan.recipe.name, "entrypoint": plan.recipe.entrypoint,
                                                   "variables": plan.variables, "args": plan.args}, indent=1,
                                                  ensure_ascii=False), encoding="utf-8")
    return run_dir


def command(plan: Plan) -> list[str]:
    if plan.recipe.kind == "sft":
        gpus = int(plan.get("trainer.n_gpus_per_node", 1))
        return ["torchrun", "--standalone", f"--nproc_per_node={gpus}", "-m", plan.recipe.entrypoint, *plan.args]
    return [sys.executable, "-m", plan.recipe.entrypoint, *plan.args]


def environment(run_dir: Path, ray_address: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    env["VERL_FILE_LOGGER_PATH"] = str(run_dir / "verl-metrics.jsonl")
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "WANDB_MODE": "disabled",
                "TOKENIZERS_PARALLELISM": "false"})
    if ray_address:
        env["RAY_ADDRESS"] = ray_address
    return env


def summarize_step(line: dict[str, Any]) -> dict[str, Any]:
    """One line of verl's file logger -> our step summary (missing metrics are None)."""
    data = line.get("data") or {}
    out: dict[str, Any] = {"step": int(line.get("step", 0))}
    for name, key in STEP_FIELDS.items():
        value = data.get(key)
        out[name] = float(value) if isinstance(value, (int, float)) else None
    return out


def run(plan: Plan, run_dir: Path, *, ray_address: str | None = None,
        on_step: Callable[[dict[str, Any]], None] | None = None, poll_s: float = 2.0) -> int:
    """Run verl to the end; every step it logs is summarised into ``metrics.jsonl`` and given to ``on_step``."""
    metrics_in, metrics_out = run_dir / "verl-metrics.jsonl", run_dir / "metrics.jsonl"
    offset = 0

    def drain() -> None:
        nonlocal offset
        if not metrics_in.exists():
            return
        with metrics_in.open("rb") as fh:
            fh.seek(offset)
            chunk = fh.read()
        complete = chunk[:chunk.rfind(b"\n") + 1]
        offset += len(complete)
        for raw in complete.splitlines():
            try:
                summary = summarize_step(json.loads(raw))
            except ValueError:
                continue
            with metrics_out.open("a", encoding="utf-8") as out:
                out.write(json.dumps(summary) + "\n")
            if on_step is not None:
                on_step(summary)

    with (run_dir / "verl.log").open("ab") as log:
        child = subprocess.Popen(command(plan), cwd=run_dir, env=environment(run_dir, ray_address), stdout=log,
                                 stderr=subprocess.STDOUT)
        try:
            while child.poll() is None:
                time.sleep(poll_s)
                drain()
        except KeyboardInterrupt:
            child.terminate()
            child.wait(timeout=60)
        drain()
    return child.returncode
