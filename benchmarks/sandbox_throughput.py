"""Sandbox throughput: requests/s and p50/p99 latency for a representative request mix.

Starts `kopa sandbox serve` as its own process on a free loopback port (the path a user takes),
then drives it from this process over raw keep-alive HTTP/1.1 connections at a fixed
concurrency (a minimal client, so that the load generator's CPU does not cap the figure). The mix
is paged list queries on every platform, including deep pages of the largest tables.

    python benchmarks/sandbox_throughput.py [--requests 3000] [--concurrency 8] [--scale 1.0]

Goal on a 2-core machine: >= 500 requests/s for paged list queries, p99 <= 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from server_process import server_process  # noqa: E402  (benchmarks/ is on sys.path)

from sandbox import KeyStore, World, ensure_world  # noqa: E402
from sandbox.bench_mix import request_mix  # noqa: E402


class Connection:
    """A bare HTTP/1.1 keep-alive connection: the load generator must cost far less than the server."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str):
        self.reader, self.writer, self.host = reader, writer, host

    async def get(self, target: str) -> int:
        self.writer.write(f"GET {target} HTTP/1.1\r\nHost: {self.host}\r\nUser-Agent: kopa-bench\r\n\r\n".encode())
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        await self.reader.readexactly(length)
        return status


async def drive(origin: str, mix: list[tuple[str, str, dict[str, str]]], total: int, concurrency: int
                ) -> tuple[float, dict[str, list[float]], int]:
    host, port = origin.removeprefix("http://").split(":")
    targets = [(label, str(httpx.URL(path, params=params))) for label, path, params in mix]
    latencies: dict[str, list[float]] = defaultdict(list)
    errors = 0
    counter = iter(range(total))

    async def worker() -> None:
        nonlocal errors
        conn = Connection(*await asyncio.open_connection(host, int(port)), f"{host}:{port}")
        for i in counter:
            label, target = targets[i % len(targets)]
            start = time.perf_counter()
            status = await conn.get(target)
            latencies[label].append((time.perf_counter() - start) * 1000)
            errors += status != 200
        conn.writer.close()

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
    parser.add_argument("--workers", type=int, default=2, help="sandbox worker processes")
    parser.add_argument("--home", default=os.environ.get("KOPA_HOME", str(Path("~/.kopa").expanduser())))
    args = parser.parse_args()

    world = World.open(ensure_world(args.home, scale=args.scale, log=print))
    mix = request_mix(world, KeyStore.default())
    world.close()
    env = {**os.environ, "KOPA_HOME": args.home, "KOPA_SANDBOX__SCALE": str(args.scale)}
    command = [sys.executable, "-m", "appliance", "sandbox", "serve", "--workers", str(args.workers)]
    with server_process(command, env) as origin:
        asyncio.run(drive(origin, mix, len(mix) * 3, args.concurrency))  # warm-up: counts and caches
        seconds, latencies, errors = asyncio.run(drive(origin, mix, args.requests, args.concurrency))

    every = [v for vs in latencies.values() for v in vs]
    print(f"\nsandbox throughput: {args.requests} requests, concurrency {args.concurrency}, "
          f"{args.workers} server worker(s), world scale {args.scale:g}")
    print(f"{'request':<44} {'n':>6} {'p50 ms':>8} {'p99 ms':>8}")
    for label in sorted(latencies):
        vs = latencies[label]
        print(f"{label:<44} {len(vs):>6} {statistics.median(vs):>8.2f} {pct(vs, 0.99):>8.2f}")
    print(f"{'ALL':<44} {len(every):>6} {statistics.median(every):>8.2f} {pct(every, 0.99):>8.2f}")
    print(f"\nrequests/s: {args.requests / seconds:.0f}   errors (non-200): {errors}   "
          f"goal: >= 500 req/s, p99 <= 50 ms")


if __name__ == "__main__":
    main()
