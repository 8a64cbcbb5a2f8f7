"""The GPU smoke run: a tiny random Qwen3, 4 shipped bench tasks as EDGE rows, GRPO steps of 4 prompts x 4 rollouts.

    python -m train.smoke OUT [--steps 2]        # what train/gpu_smoke.sh runs; prints step time and reward

Everything is built here, offline: the dataset with EDGE's own writer (``edge.dataset.export``) from bench tasks
replayed from ``cassettes/``, the model with ``train.tiny_model``; then verl's ``grpo_1gpu_small`` recipe is
checked and run through ``train.engines.verl.launch`` exactly as ``kopa train grpo`` does. The tiny model is random:
its reward is near 0; the point is that every part runs (vLLM rollouts, the replayed tool episodes, the bench
reward, the update) and how long a step takes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

from .engines.verl.check import check_plan
from .engines.verl.launch import prepare_run, run
from .engines.verl.recipes import REPO, load_recipe, plan_run

SMOKE_IDS = ("trf-001", "fin-001", "fin-019", "edu-029")


def build_dataset(out: Path, ids: tuple[str, ...] = SMOKE_IDS, cassettes: Path = REPO / "cassettes") -> Path:
    """``out``/train.parquet and items.jsonl for the bench tasks ``ids`` (their golden trajectories must replay)."""
    from bench.runner import open_bench_gateway
    from bench.task import load_tasks
    from bench.taskset.build import DEFAULT_TASKS
    from edge.dataset.export import export_verl, replay_items
    from edge.synth.item import SynthItem, TaskType

    tasks = {t.id: t for t in load_tasks(DEFAULT_TASKS)}
    items = [SynthItem(task=tasks[i], task_type=TaskType.MIXED, recipe={}, seed=0, graph_run="kopa-bench",
                       call_records=(1,) * len(tasks[i].golden_actions), writer="rule:bench") for i in ids]

    async def replay():
        gateway = open_bench_gateway(items[0].task.bundle, cassettes=cassettes, home=out / "home")
        try:
            return await replay_items(items, gateway)
        finally:
            await gateway.aclose()

    out.mkdir(parents=True, exist_ok=True)
    export_verl(items, out / "train.parquet", replays=asyncio.run(replay()), overwrite=True)
    (out / "items.jsonl").write_text("".join(i.model_dump_json() + "\n" for i in items), encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--steps", type=int, default=2)
    args = parser.parse_args(argv)
    out = args.out.resolve()
    started = time.monotonic()
    dataset = build_dataset(out / "dataset")
    from .tiny_model import build_tiny_model, corpus_from_tasks

    model = out / "tiny-qwen3"
    if not (model / "config.json").exists():
        build_tiny_model(model, corpus_from_tasks(REPO / "bench" / "tasks" / "kopa-bench.jsonl"))
    print(f"data and model ready in {time.monotonic() - started:.0f} s", flush=True)
    plan = plan_run(load_recipe("grpo_1gpu_small"), home=out / "home", run_dir=out / "run", dataset=dataset,
                    model=model, agent_loops=out / "run" / "agent_loops.yaml",
                    extra=[f"trainer.total_training_steps={args.steps}", "trainer.logger=[console,file]"])
    prepare_run(plan)
    problems = check_plan(plan)
    if problems:
        print("the smoke recipe does not check:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1

    def on_step(s: dict) -> None:
        print(f"step {s['step']}: step time {s['step_time_s']} s, reward {s['reward']}, pass rate {s['pass_rate']}, "
              f"kl {s['kl']}, response length {s['response_length']}, turns {s['num_turns']}", flush=True)

    code = run(plan, out / "run", on_step=on_step, poll_s=1.0)
    steps = [json.loads(line) for line in (out / "run" / "metrics.jsonl").read_text().splitlines()] \
        if (out / "run" / "metrics.jsonl").exists() else []
    print(f"verl exited {code} after {time.monotonic() - started:.0f} s with {len(steps)} step(s); "
          f"log: {out / 'run' / 'verl.log'}", flush=True)
    if code != 0:
        print((out / "run" / "verl.log").read_text(errors="replace")[-6000:], file=sys.stderr)
    return 0 if code == 0 and steps else 1


if __name__ == "__main__":
    raise SystemExit(main())
