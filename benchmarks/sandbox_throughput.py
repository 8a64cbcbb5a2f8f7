"""Sandbox throughput: requests/s and p50/p99 latency for a representative request mix.

Starts `kopa sandbox serve` as its own process on a free loopback port (the path a user takes),
then drives it from this process with an asyncio httpx client at a fixed concurrency. The mix
is paged list queries on every platform, including deep pages of the largest tables.

    python benchmarks/sandbox_throughput.py [--requests 3000] [--concurrency 8] [--scale 1.0]

Goal on a 2-core machine: >= 500 requests/s for paged list queries, p99 <= 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from recorder.sandbox import KeyStore, World, ensure_world  # noqa: E402
from recorder.sandbox.bench_mix import request_mix  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def drive(origin: str, mix: list[tuple[str, str, dict[str, str]]], total: int, concurrency: int
                ) -> tuple[float, dict[str, list[float]], int]:
    latencies: dict[str, list[float]] = defaultdict(list)
    errors = 0
    counter = iter(range(total))
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=origin, limits=limits, timeout=30,
                                 headers={"User-Agent": "kopa-bench"}) as client:
        async def worker() -> None:
            nonlocal errors
            for i in counter:
                label, path, params = mix[i % len(mix)]
                start = time.perf_counter()
                response = await client.get(path, params=params)
                latencies[label].append((time.perf_counter() - start) * 1000)
                if response.status_code != 200:
                    errors += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - started, latencies, errors


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--home", default=os.environ.get("KOPA_HOME", str(Path("~/.kopa").expanduser())))
    args = parser.parse_args()

    world = World.open(ensure_world(args.home, scale=args.scale, log=print))
    mix = request_mix(world, KeyStore.default())
    world.close()
    port = free_port()
    env = {**os.environ, "KOPA_HOME": args.home, "KOPA_SANDBOX__SCALE": str(args.scale)}
    server = subprocess.Popen([sys.executable, "-m", "appliance", "sandbox", "serve", "--port", str(port)],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
    origin = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                httpx.get(origin + "/healthz", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("sandbox did not start")
                time.sleep(0.2)
        asyncio.run(drive(origin, mix, len(mix) * 3, args.concurrency))  # warm-up: counts and caches
        seconds, latencies, errors = asyncio.run(drive(origin, mix, args.requests, args.concurrency))
    finally:
        server.terminate()
        server.wait(timeout=20)

    every = [v for vs in latencies.values() for v in vs]
    print(f"\nsandbox throughput: {args.requests} requests, concurrency {args.concurrency}, world scale {args.scale:g}")
    print(f"{'request':<44} {'n':>6} {'p50 ms':>8} {'p99 ms':>8}")
    for label in sorted(latencies):
        vs = latencies[label]
        print(f"{label:<44} {len(vs):>6} {statistics.median(vs):>8.2f} {pct(vs, 0.99):>8.2f}")
    print(f"{'ALL':<44} {len(every):>6} {statistics.median(every):>8.2f} {pct(every, 0.99):>8.2f}")
    print(f"\nrequests/s: {args.requests / seconds:.0f}   errors (non-200): {errors}   "
          f"goal: >= 500 req/s, p99 <= 50 ms")


if __name__ == "__main__":
    main()
