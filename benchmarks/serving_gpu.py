"""GPU serving figures: vLLM as `kopa agent serve` starts it, then TTFT and tokens/s, alone and under load.

    pip install 'kopa-appliance[vllm]'        # on the CUDA machine
    python benchmarks/serving_gpu.py --model /models/qwen3.5-4b [--concurrency 1,8,32] [--max-tokens 256]
        [--json OUT] [--endpoint [--rounds 4]]
    python benchmarks/serving_gpu.py --backend llama.cpp [--model M.gguf] ...   # the same figures on CPU

Runs as is on a CUDA machine with the [vllm] extra and a local model folder (nothing is downloaded:
HF_HUB_OFFLINE=1). For each concurrency level it streams ``requests`` chat completions with the qwen3_coder
tool parser and reasoning parser on, and reports the median and p90 time to first token (first content or
reasoning delta), the median per-request decode rate (tokens after the first / time after the first), and the
aggregate output tokens/s. ``--endpoint`` also sends the same prompts through the agent endpoint in front of
the server (a `kopa agent endpoint` process) and reports its added latency per turn.

``--backend llama.cpp`` (the packaged SmolLM2 unless ``--model`` names a GGUF) runs the same measurement
against llama.cpp on CPU: the suite runs it that way, so every part of the script but vLLM's start is tested
where there is no GPU. A server that does not report usage in its stream is counted by its content deltas.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

import httpx
import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.agent_endpoint_overhead import measure_overhead  # noqa: E402
from models.errors import ModelServerError  # noqa: E402
from models.plan import plan_model_server  # noqa: E402
from models.server import ModelServer  # noqa: E402

PROMPTS = ["서울 지하철 2호선의 역은 몇 개인가요? 한 문단으로 설명해 주세요.",
           "Explain in one paragraph how a cassette replay makes a benchmark reproducible.",
           "공공데이터포털 API 키를 안전하게 관리하는 방법을 세 가지 알려 주세요.",
           "Write a short plan for calling three public APIs in a chain."]


async def one(http: httpx.AsyncClient, url: str, model: str, prompt: str, max_tokens: int) -> dict:
    body = {"model": model, "messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens,
            "temperature": 0.0, "stream": True, "stream_options": {"include_usage": True}}
    started = time.perf_counter()
    first = None
    tokens = deltas = 0
    async with http.stream("POST", url, json=body) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if chunk.get("usage"):
                tokens = chunk["usage"]["completion_tokens"]
            delta = (chunk.get("choices") or [{}])[0].get("delta") or {}
            if delta.get("content") or delta.get("reasoning_content") or delta.get("reasoning"):
                deltas += 1
                first = first or time.perf_counter()
    done = time.perf_counter()
    tokens = tokens or deltas
    first = first or done
    return {"ttft_s": first - started, "total_s": done - started, "tokens": tokens,
            "decode_tps": (tokens - 1) / (done - first) if tokens > 1 and done > first else 0.0}


async def level(base_url: str, model: str, concurrency: int, requests: int, max_tokens: int) -> dict:
    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(timeout=600, limits=limits) as http:
        gate = asyncio.Semaphore(concurrency)

        async def gated(i: int) -> dict:
            async with gate:
                return await one(http, f"{base_url}/chat/completions", model, PROMPTS[i % len(PROMPTS)], max_tokens)

        await gated(0)  # warm-up
        started = time.perf_counter()
        results = await asyncio.gather(*(gated(i) for i in range(requests)))
        wall = time.perf_counter() - started
    ttfts = [r["ttft_s"] for r in results]
    return {"concurrency": concurrency, "requests": requests,
            "ttft_median_ms": round(1000 * statistics.median(ttfts), 1),
            "ttft_p90_ms": round(1000 * float(numpy.percentile(ttfts, 90)), 1),
            "decode_tokens_per_s_median": round(statistics.median(r["decode_tps"] for r in results), 1),
            "aggregate_output_tokens_per_s": round(sum(r["tokens"] for r in results) / wall, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="a local Hugging Face model folder (vllm), or a GGUF file (llama.cpp; "
                                            "default: the packaged SmolLM2)")
    parser.add_argument("--backend", choices=("vllm", "llama.cpp"), default="vllm")
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--requests", type=int, default=64, help="requests per concurrency level")
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--endpoint", action="store_true", help="also measure the agent endpoint's overhead")
    parser.add_argument("--rounds", type=int, default=4, help="endpoint: times each prompt is sent each way")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.backend == "vllm" and not (args.model and Path(args.model).is_dir()):
        raise SystemExit(f"--model {args.model}: no such model folder (this script downloads nothing)")
    try:
        plan = plan_model_server(args.model, backend=args.backend)
    except ModelServerError as exc:
        raise SystemExit(f"--backend {args.backend}: {exc}") from None
    print(f"{plan.backend} command: {' '.join(plan.command)}", file=sys.stderr)
    with ModelServer(plan, startup_timeout_s=1200) as server:
        figures: dict = {"model": args.model, "backend": plan.backend, "command": list(plan.command), "levels": []}
        for c in (int(x) for x in args.concurrency.split(",")):
            figures["levels"].append(asyncio.run(level(server.base_url, plan.served_name, c,
                                                       max(args.requests, c), args.max_tokens)))
            print(json.dumps(figures["levels"][-1]), file=sys.stderr)
        if args.endpoint:
            figures["endpoint"] = measure_overhead(server.base_url, plan.served_name, PROMPTS, rounds=args.rounds,
                                                   max_tokens=args.max_tokens)
    print(json.dumps(figures, indent=1))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
