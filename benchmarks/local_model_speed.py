"""The local model on the demo's episodes: wall time, model turns and errors, on a quiet or a loaded machine.

    .venv/bin/python benchmarks/local_model_speed.py                    # the local agent as shipped
    .venv/bin/python benchmarks/local_model_speed.py --load 1           # beside one busy-loop process
    .venv/bin/python benchmarks/local_model_speed.py --variant before   # the settings of earlier releases

Plays what ``kopa bench demo`` gives the local model: the first task of each domain of the shipped set, one
rollout, ``--max-turns`` 4, replayed from the shipped bundle. ``--variant before`` emulates the earlier local
agent: full tool schemas (with their ``\\uXXXX``-escaped Korean descriptions), two threads whatever the load,
no prompt cache, a fixed 120 s request limit. Prints one JSON object: the server's start-up time and measured
speed, the request limit, the episodes' wall time, model turns, prompt tokens of the first request, answers,
passes, and the errors by kind; the 1-minute load average before and after (other work on the machine counts).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.agents.local import LocalAgent, LocalModel  # noqa: E402
from bench.agents.openai_agent import OpenAIAgent  # noqa: E402
from bench.report.errors import error_groups  # noqa: E402
from bench.runner import open_bench_gateway, run_benchmark, run_bundle  # noqa: E402
from bench.task import load_tasks  # noqa: E402
from bench.taskset.build import DEFAULT_CASSETTES, DEFAULT_TASKS  # noqa: E402
from mcp_gateway.catalog import load_catalog  # noqa: E402


class _FullToolsAgent(LocalAgent):
    """The earlier local agent: the tools' schemas as the catalog gives them."""

    run = OpenAIAgent.run  # type: ignore[assignment]


def _first_per_domain(tasks: list, n: int) -> list:
    seen: dict[str, int] = {}
    kept = []
    for task in tasks:
        seen[task.domain] = seen.get(task.domain, 0) + 1
        if seen[task.domain] <= n:
            kept.append(task)
    return kept


def _before(model: LocalModel) -> None:
    command = list(model.plan.command)
    if "--cache" in command:
        at = command.index("--cache")
        del command[at:at + 6]  # --cache true --cache_type ram --cache_size N
    command[command.index("--n_threads") + 1] = command[command.index("--n_threads_batch") + 1] = "2"
    model.plan = replace(model.plan, command=tuple(command), warm_up=False)


async def measure(variant: str, per_domain: int, max_turns: int, out_dir: Path) -> dict[str, Any]:
    tasks = _first_per_domain(load_tasks(DEFAULT_TASKS, catalog=load_catalog()), per_domain)
    model = LocalModel()
    overrides: dict[str, Any] = {"max_turns": max_turns}
    if variant == "before":
        _before(model)
        overrides.update(request_timeout_s=120.0)
    agent = (_FullToolsAgent if variant == "before" else LocalAgent)(model, **overrides)
    gateway = open_bench_gateway(run_bundle(tasks), cassettes=DEFAULT_CASSETTES)
    started = time.monotonic()
    try:
        async with agent:
            startup_s = time.monotonic() - started
            episodes_started = time.monotonic()
            await run_benchmark(tasks, agent, gateway, rollouts=1, seeds=[0], out_dir=out_dir, agent_name="local")
            episodes_s = time.monotonic() - episodes_started
            config = agent.config
    finally:
        await gateway.aclose()
    lines = [json.loads(t) for t in (out_dir / "episodes.jsonl").read_text(encoding="utf-8").splitlines() if t]
    turns = [line.get("model_turns") or [] for line in lines]
    first_prompt = [t[0]["usage"]["prompt_tokens"] for t in turns if t and t[0].get("usage")]
    threads = model.plan.command[model.plan.command.index("--n_threads") + 1]
    return {
        "variant": variant, "threads": int(threads), "startup_s": round(startup_s, 1),
        "speed_tokens_per_s": None if model.speed is None else {
            "prompt": round(model.speed.prompt_tokens_per_s), "decode": round(model.speed.decode_tokens_per_s)},
        "request_timeout_s": config.endpoint.timeout_s, "episodes": len(lines), "episodes_wall_s": round(episodes_s, 1),
        "model_turns": sum(len(t) for t in turns), "episodes_with_a_model_turn": sum(bool(t) for t in turns),
        "first_prompt_tokens": first_prompt, "answers": sum(line.get("answer") is not None for line in lines),
        "passed": sum(bool(line["scores"]["passed"]) for line in lines),
        "errors": [{"kind": g.kind, "count": g.count, "example": g.example[:160]}
                   for g in error_groups(line.get("error") for line in lines)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", choices=("after", "before"), default="after")
    parser.add_argument("--load", type=int, default=0, help="busy-loop processes beside the model")
    parser.add_argument("--per-domain", type=int, default=1)
    parser.add_argument("--max-turns", type=int, default=4)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)]
    try:
        load_before = os.getloadavg()[0]
        with tempfile.TemporaryDirectory() as tmp:
            figures = asyncio.run(measure(args.variant, args.per_domain, args.max_turns, Path(tmp) / "run"))
        figures.update(busy_loops=args.load, load_1min_before=round(load_before, 2),
                       load_1min_after=round(os.getloadavg()[0], 2), cpus=os.cpu_count())
    finally:
        for process in busy:
            process.kill()
            process.wait()
    print(json.dumps(figures, indent=1, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
