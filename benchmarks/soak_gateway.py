"""Soak: M concurrent MCP sessions against `kopa serve` (its own process, loopback) for a bounded time.

    python benchmarks/soak_gateway.py [--sessions 50] [--duration 60] [--warmup 10] [--calls-per-session 25]

Each of M workers opens an MCP session with the official client over streamable HTTP, makes a mix of calls (an
upstream tool on the sandbox, the built-in expression tool, a workspace write and read), ends the session after
``--calls-per-session`` calls (HTTP DELETE, which drops its workspace) and opens a new one, until the time is up.
Printed: calls/s, p50/p99 latency and errors after warm-up, sessions opened and closed, and the server's RSS
(VmRSS in /proc/<pid>/status) at start, after warm-up, at its peak, at the end, and once every session is closed.
Goal: RSS growth from the end of warm-up to the end of the run at most 10%; closed sessions are freed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from server_process import server_popen  # noqa: E402  (benchmarks/ is on sys.path)

TOKEN = "soak-token"
GOAL_GROWTH = 0.10


def rss_mb(pid: int) -> float:
    """Resident set size of ``pid`` in MiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


@dataclass
class Tally:
    """What the workers saw; latencies and errors only count after warm-up."""

    measuring: bool = False
    latencies_ms: dict[str, list[float]] = field(default_factory=dict)  # per tool
    errors: Counter[str] = field(default_factory=Counter)
    opened: int = 0
    closed: int = 0


def calls(worker: int, n: int) -> list[tuple[str, dict]]:
    """The mix one session makes: upstream, built-in, workspace write then read (its own key)."""
    mix = [("search_school_info", {"ATPT_OFCDC_SC_CODE": "T10", "numOfRows": 5}),
           ("evaluate_expression", {"expression": f"{worker} * 1.1 + {n}"}),
           ("write_note", {"key": f"w{worker}", "text": "가" * 200}),
           ("read_note", {"key": f"w{worker}"})]
    return [mix[i % len(mix)] for i in range(n)]


async def worker(origin: str, index: int, per_session: int, stop: float, tally: Tally) -> None:
    while time.monotonic() < stop:
        try:
            async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as http,
                        Client(streamable_http_client(origin + "/mcp", http_client=http)) as client):
                tally.opened += 1
                for tool, args in calls(index, per_session):
                    if time.monotonic() >= stop:
                        break
                    started = time.perf_counter()
                    result = await client.call_tool(tool, args)
                    if tally.measuring:
                        tally.latencies_ms.setdefault(tool, []).append((time.perf_counter() - started) * 1000)
                        if result.is_error:
                            tally.errors[f"tool {result.structured_content.get('outcome')}"] += 1  # type: ignore
            tally.closed += 1  # the client's exit sent DELETE: the server dropped the session
        except Exception as exc:  # noqa: BLE001 - a soak counts failures instead of stopping at the first
            tally.errors[type(exc).__name__] += 1
            await asyncio.sleep(0.1)


async def soak(origin: str, pid: int, args: argparse.Namespace) -> dict[str, float]:
    rss = {"start": rss_mb(pid)}
    tally = Tally()
    began = time.monotonic()
    stop = began + args.warmup + args.duration
    tasks = [asyncio.create_task(worker(origin, i, args.calls_per_session, stop, tally)) for i in range(args.sessions)]
    await asyncio.sleep(args.warmup)
    tally.measuring, measured_from = True, time.perf_counter()
    rss["after warm-up"] = peak = rss_mb(pid)
    while time.monotonic() < stop:
        await asyncio.sleep(1)
        peak = max(peak, rss_mb(pid))
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - measured_from
    rss["peak"], rss["end"] = peak, rss_mb(pid)
    await asyncio.sleep(2)  # every session has been closed by now
    rss["all sessions closed"] = rss_mb(pid)
    times = sorted(t for per_tool in tally.latencies_ms.values() for t in per_tool)
    n = len(times)
    load = os.getloadavg()[0]
    print(f"\nsoak: {args.sessions} concurrent sessions, {args.duration:g} s measured after {args.warmup:g} s warm-up "
          f"({args.calls_per_session} calls per session, then a new session); load average {load:.1f} "
          f"on {os.cpu_count()} CPUs")
    print(f"calls {n:,}  throughput {n / elapsed:,.1f} calls/s  p50 {statistics.median(times):.1f} ms  "
          f"p99 {times[int(0.99 * (n - 1))]:.1f} ms")
    for tool, per_tool in sorted(tally.latencies_ms.items()):
        per_tool.sort()
        print(f"  {tool:<22} {len(per_tool):>6,} calls  p50 {statistics.median(per_tool):.1f} ms  "
              f"p99 {per_tool[int(0.99 * (len(per_tool) - 1))]:.1f} ms")
    print(f"sessions opened {tally.opened:,}, closed {tally.closed:,}; errors {sum(tally.errors.values())}"
          + (f" {dict(tally.errors)}" if tally.errors else ""))
    print("server RSS (MiB): " + ", ".join(f"{k} {v:.1f}" for k, v in rss.items()))
    growth = (rss["end"] - rss["after warm-up"]) / rss["after warm-up"]
    print(f"RSS growth after warm-up: {growth:+.1%} (goal <= {GOAL_GROWTH:.0%}: {'met' if growth <= GOAL_GROWTH else 'MISSED'})")
    return rss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=50, help="concurrent MCP sessions (M)")
    parser.add_argument("--duration", type=float, default=60, help="seconds measured after warm-up")
    parser.add_argument("--warmup", type=float, default=10, help="seconds before measuring (not counted)")
    parser.add_argument("--calls-per-session", type=int, default=25, help="calls before a session is closed")
    parser.add_argument("--scale", type=float, default=1.0, help="sandbox world scale")
    parser.add_argument("--home", default=os.environ.get("KOPA_HOME", "~/.kopa"))
    args = parser.parse_args()
    env = {**os.environ, "KOPA_HOME": str(Path(args.home).expanduser()), "KOPA_SANDBOX__SCALE": str(args.scale),
           "KOPA_GATEWAY__TOKENS": json.dumps([TOKEN])}
    with server_popen([sys.executable, "-m", "appliance", "serve"], env) as (origin, proc):
        asyncio.run(soak(origin, proc.pid, args))


if __name__ == "__main__":
    main()
