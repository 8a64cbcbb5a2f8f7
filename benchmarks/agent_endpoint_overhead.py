"""Agent endpoint overhead per turn, beside calling the model server directly, with the same prompts.

    .venv/bin/python benchmarks/agent_endpoint_overhead.py [--rounds 5] [--max-tokens 24] [--json OUT]

One llama.cpp server (the packaged SmolLM2, as `kopa agent serve` starts it) and one `kopa agent endpoint`
process in front of it (its own process, as deployed; a bearer token; the chat-profile gateway). Each prompt is
sent both ways in alternating order, greedy and with the same token limit, so both do the same model work (the
completion token counts are checked equal). A prompt offers no tools, so a request through the endpoint is exactly
one model turn: the difference is the endpoint's cost per turn (HTTP hop, auth, the loop, the reply).

The second request of a pair finds its prompt in llama.cpp's cache, so a pair's difference has two modes, one per
order; the added latency is the mean of the two orders' median differences, which cancels that advantage.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.server_process import REPO, server_process  # noqa: E402
from models.plan import plan_model_server  # noqa: E402
from models.server import ModelServer  # noqa: E402

PROMPTS = ["What is the capital of France?", "Name three colours.", "서울은 어느 나라의 수도인가요?",
           "Write one sentence about rivers.", "What is 12 plus 30?", "Say hello in Korean.",
           "Give a synonym for quick.", "What do bees make?"]
TOKEN = "overhead-bench-token"  # a loopback-only token for this run


def measure_overhead(base_url: str, served_name: str, prompts: list[str], *, rounds: int,
                     max_tokens: int) -> dict:
    """Start `kopa agent endpoint` in front of the model server at ``base_url`` and measure what it adds per turn.

    Each prompt goes both ways, in alternating order; the completion token counts must match.
    """
    env = {**os.environ, "KOPA_GATEWAY__TOKENS": json.dumps([TOKEN]),
           "KOPA_HOME": os.environ.get("KOPA_HOME", str(Path.home() / ".cache" / "kopa" / "test-data"))}
    kopa = Path(sys.executable).with_name("kopa")  # this environment's, else the repo's .venv
    command = [str(kopa if kopa.exists() else REPO / ".venv" / "bin" / "kopa"), "agent", "endpoint",
               "--model-url", base_url, "--model-name", served_name]
    with server_process(command, env) as origin, httpx.Client(timeout=300) as http:
        direct_s, endpoint_s = [], []
        by_order: dict[str, list[float]] = {"direct first": [], "endpoint first": []}

        def body(prompt: str) -> dict:
            return {"model": served_name, "messages": [{"role": "user", "content": prompt}], "seed": 0,
                    "temperature": 0.0, "max_tokens": max_tokens}

        def direct(prompt: str) -> tuple[float, int]:
            started = time.perf_counter()
            reply = http.post(f"{base_url}/chat/completions", json=body(prompt)).json()
            return time.perf_counter() - started, reply["usage"]["completion_tokens"]

        def through(prompt: str) -> tuple[float, int]:
            started = time.perf_counter()
            reply = http.post(f"{origin}/v1/chat/completions", json=body(prompt),
                              headers={"Authorization": f"Bearer {TOKEN}"}).json()
            elapsed = time.perf_counter() - started
            assert len(reply["choices"][0]["message"]["kopa"]["turns"]) == 1, reply
            return elapsed, reply["usage"]["completion_tokens"]

        for prompt in prompts:  # warm-up: the model's prompt cache and both HTTP paths
            direct(prompt), through(prompt)
        for r in range(rounds):
            for i, prompt in enumerate(prompts):
                pair = (direct, through) if (r + i) % 2 == 0 else (through, direct)
                results = {f.__name__: f(prompt) for f in pair}
                assert results["direct"][1] == results["through"][1], (prompt, results)
                direct_s.append(results["direct"][0])
                endpoint_s.append(results["through"][0])
                order = "direct first" if pair[0] is direct else "endpoint first"
                by_order[order].append(results["through"][0] - results["direct"][0])

    d, e = statistics.median(direct_s), statistics.median(endpoint_s)
    per_order = {k: statistics.median(v) for k, v in by_order.items() if v}
    added = sum(per_order.values()) / len(per_order)
    return {"turns": len(direct_s), "max_tokens": max_tokens,
            "direct_median_ms": round(d * 1000, 1), "endpoint_median_ms": round(e * 1000, 1),
            "median_added_ms_by_order": {k: round(v * 1000, 1) for k, v in per_order.items()},
            "added_ms_per_turn": round(added * 1000, 1), "added_latency_pct": round(100 * added / d, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="times each prompt is sent each way")
    parser.add_argument("--max-tokens", type=int, default=24)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    plan = plan_model_server(None, n_threads=2)
    with ModelServer(plan, startup_timeout_s=120) as model:
        figures = measure_overhead(model.base_url, plan.served_name, PROMPTS, rounds=args.rounds,
                                   max_tokens=args.max_tokens)
    print(json.dumps(figures, indent=1))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
