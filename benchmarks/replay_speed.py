"""Replay speed per call over MCP, beside a trivial built-in tool measured in the same session.

    python benchmarks/replay_speed.py [--rounds 30] [--bundle kopa-default] [--cassettes cassettes]
        [--transports http,stdio] [--tasks bench/tasks/kopa-bench.jsonl] [--fast-output-check] [--smoke]
        [--json FILE]

The session (27 calls): for the first single-platform bench task on each of ex, seoul, dart, edu and
law, the key call of its start state (``get_<platform>_api_key``) and its golden calls in order, the
placeholders filled with the key token just issued. ``kopa serve --upstream replay --profile bench``
replays it from the shipped bundle, as its own process over streamable HTTP and over stdio, with
the official MCP client. Each round replays the whole session, and after every call the client
calls ``evaluate_expression`` ("1+1": the gateway's own trivial tool, no upstream, a tiny result)
on the same session. Per call: p50/p90 over the rounds, the first round's time (the cold call: the
first in the process), and p50 as a multiple of the trivial tool's p50. Before the first round the client
lists the tools once, as every agent does to show a model its tools (the SDK's ``call_tool`` would otherwise
list them inside the first call, to learn the output schemas); that listing and the server's start-up
(process start to healthy and initialized, the server's warm-up included) are printed on their own.

Goal (a ratio, so it holds across machines): a replayed data call's p50 <= 1.5x the trivial
tool's, and no replayed call above 10x it (its p90 and its first-round time both count).
``--smoke`` replays 2 rounds (for the test suite; its figures mean nothing).

Where the time of a 1,000-record page goes: the client's check of the structured content against the
tool's output schema (``ClientSession.validate_tool_result``: ``jsonschema`` descends into every field of
every record, ~90 % of the call). That check is the client's, not the gateway's: by default the benchmark
measures the SDK's client as a user's agent has it. ``--fast-output-check`` measures the client as the
appliance's own code opens it (the pytest plugin's ``kopa_replay.client``): the SDK's check with the
gateway's plain schemas compiled in front (``mcp_gateway.clients.mcp_output``; the same checks and errors).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from server_process import REPO, server_process  # noqa: E402  (benchmarks/ is on sys.path)

from bench.agents.base import resolve_placeholders  # noqa: E402
from mcp_gateway.clients.mcp_output import fast_output_checks  # noqa: E402

PLATFORMS = ("ex", "seoul", "dart", "edu", "law")
TRIVIAL = ("evaluate_expression", {"expression": "1+1"})
TOKEN = "bench-token"
GOAL_P50, GOAL_MAX = 1.5, 10.0


@dataclass(frozen=True)
class Call:
    label: str  # "dart fin-004 #1 find_dart_corp_code"
    tool: str
    args: dict[str, Any]
    key_name: str | None = None  # a key call: the context name its token fills
    data: bool = False  # goes to a (replayed) upstream


def session_calls(tasks: Path, catalog_names: dict[str, bool]) -> list[Call]:
    """Key call + golden calls of the first single-platform task on each platform."""
    chosen: dict[str, dict[str, Any]] = {}
    for line in tasks.read_text(encoding="utf-8").splitlines():
        task = json.loads(line)
        (platform, *rest) = task["platforms"]
        if not rest and platform in PLATFORMS and platform not in chosen:
            chosen[platform] = task
    calls: list[Call] = []
    for platform in PLATFORMS:
        task = chosen[platform]
        for action in task["system_state"]["actions"]:
            calls.append(Call(f"{platform} {task['id']} key {action['tool']}", action["tool"], {}, action["name"]))
        for n, golden in enumerate(task["golden_actions"]):
            calls.append(Call(f"{platform} {task['id']} #{n} {golden['tool']}", golden["tool"], golden["args"],
                              data=catalog_names[golden["tool"]]))
    return calls


@dataclass
class Timings:
    per_call: list[list[float]] = field(default_factory=list)  # call index → ms per round
    trivial: list[float] = field(default_factory=list)
    list_tools_ms: float = 0.0  # the one tools/list before the first round
    start_s: float = 0.0  # server start-up: process start → healthy (HTTP) and initialized


async def replay_session(client: Client, calls: list[Call], rounds: int) -> Timings:
    timings = Timings(per_call=[[] for _ in calls])
    started = time.perf_counter()
    await client.list_tools()
    timings.list_tools_ms = (time.perf_counter() - started) * 1000
    for _ in range(rounds):
        context: dict[str, Any] = {}
        for i, call in enumerate(calls):
            args = resolve_placeholders(call.args, context)
            started = time.perf_counter()
            result = await client.call_tool(call.tool, args)
            timings.per_call[i].append((time.perf_counter() - started) * 1000)
            if result.is_error:
                raise SystemExit(f"{call.label} failed on replay: {result.content[0].text[:300]}")  # type: ignore[union-attr]
            if call.key_name:
                context[call.key_name] = result.structured_content["records"][0]["api_key"]  # type: ignore[index]
            started = time.perf_counter()
            await client.call_tool(*TRIVIAL)
            timings.trivial.append((time.perf_counter() - started) * 1000)
    return timings


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summarize(transport: str, calls: list[Call], timings: Timings) -> dict[str, Any]:
    trivial = statistics.median(timings.trivial)
    rows = []
    for call, times in zip(calls, timings.per_call, strict=True):
        p50, p90 = statistics.median(times), quantile(times, 0.9)
        rows.append({"call": call.label, "data": call.data, "p50_ms": p50, "p90_ms": p90, "first_ms": times[0],
                     "p50_ratio": p50 / trivial, "worst_ratio": max(p90, times[0]) / trivial})
    data = [r for r in rows if r["data"]]
    return {"transport": transport, "start_s": timings.start_s, "list_tools_ms": timings.list_tools_ms,
            "trivial_p50_ms": trivial, "trivial_p90_ms": quantile(timings.trivial, 0.9),
            "calls": rows, "data_p50_ms": statistics.median(r["p50_ms"] for r in data),
            "worst_data_p50_ratio": max(r["p50_ratio"] for r in data),
            "worst_ratio": max(r["worst_ratio"] for r in rows)}


def print_summary(figures: dict[str, Any], rounds: int) -> None:
    print(f"\nreplay over {figures['transport']}, {figures.get('output_check', 'sdk')} output check ({rounds} rounds "
          f"of {len(figures['calls'])} calls; trivial tool "
          f"{TRIVIAL[0]} p50 {figures['trivial_p50_ms']:.2f} ms, p90 {figures['trivial_p90_ms']:.2f} ms)")
    print(f"server start-up {figures['start_s']:.2f} s (to healthy and initialized); tools/list before the first "
          f"round {figures['list_tools_ms']:.1f} ms")
    print(f"{'call':<58} {'p50 ms':>7} {'p90 ms':>7} {'first':>8} {'p50/triv':>8} {'worst/triv':>10}")
    for r in figures["calls"]:
        print(f"{r['call'][:58]:<58} {r['p50_ms']:>7.2f} {r['p90_ms']:>7.2f} {r['first_ms']:>8.2f} "
              f"{r['p50_ratio']:>7.2f}x {r['worst_ratio']:>9.2f}x")
    ok_p50, ok_max = figures["worst_data_p50_ratio"] <= GOAL_P50, figures["worst_ratio"] <= GOAL_MAX
    print(f"{figures['transport']}: data calls' median p50 {figures['data_p50_ms']:.2f} ms; worst data call p50 = "
          f"{figures['worst_data_p50_ratio']:.2f}x the trivial tool's (goal <= {GOAL_P50}x: "
          f"{'met' if ok_p50 else 'missed'}); worst call (p90 or first) = {figures['worst_ratio']:.2f}x "
          f"(goal <= {GOAL_MAX:g}x: {'met' if ok_max else 'missed'})")


@asynccontextmanager
async def http_session(command: list[str], env: dict[str, str], fast_check: bool = False) -> AsyncIterator[Client]:
    with server_process(command, env) as origin:
        async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as http,
                    Client(streamable_http_client(origin + "/mcp", http_client=http)) as client):
            yield _checked(client, fast_check)


@asynccontextmanager
async def stdio_session(command: list[str], env: dict[str, str], fast_check: bool = False) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=command[0], args=[*command[1:], "--stdio"], env=env, cwd=REPO)
    async with Client(params) as client:
        yield _checked(client, fast_check)


def _checked(client: Client, fast_check: bool) -> Client:
    if fast_check and not fast_output_checks(client.session):
        raise SystemExit("--fast-output-check: this MCP SDK's ClientSession has no output-schema validator to wrap")
    return client


async def main(args: argparse.Namespace) -> list[dict[str, Any]]:
    from mcp_gateway.catalog import load_catalog

    catalog = load_catalog()
    calls = session_calls(args.tasks, {s.name: s.endpoint is not None for s in catalog})
    home = tempfile.TemporaryDirectory()  # replay stats and audit lines land here, not in ~/.kopa
    env = {**os.environ, "KOPA_HOME": home.name, "KOPA_RECORDER__CASSETTES": str(args.cassettes.resolve()),
           "KOPA_GATEWAY__TOKENS": json.dumps([TOKEN])}
    command = [sys.executable, "-m", "appliance", "serve", "--upstream", "replay", "--bundle", args.bundle,
               "--profile", "bench"]
    out = []
    try:
        for transport in args.transports:
            opened = (http_session if transport == "http" else stdio_session)(command, env, args.fast_output_check)
            started = time.perf_counter()
            async with opened as client:
                start_s = time.perf_counter() - started
                timings = await replay_session(client, calls, args.rounds)
                timings.start_s = start_s
            figures = summarize("streamable HTTP" if transport == "http" else "stdio", calls, timings)
            figures["output_check"] = "fast" if args.fast_output_check else "sdk"
            print_summary(figures, args.rounds)
            out.append(figures)
    finally:
        home.cleanup()
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--bundle", default="kopa-default")
    parser.add_argument("--cassettes", type=Path, default=REPO / "cassettes")
    parser.add_argument("--tasks", type=Path, default=REPO / "bench" / "tasks" / "kopa-bench.jsonl")
    parser.add_argument("--transports", type=lambda s: s.split(","), default=["http", "stdio"])
    parser.add_argument("--fast-output-check", action="store_true",
                        help="the client's output-schema check as the appliance's own clients run it (compiled)")
    parser.add_argument("--smoke", action="store_true", help="2 rounds: the script runs end to end")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    options = parser.parse_args()
    if options.smoke:
        options.rounds = 2
    bad = set(options.transports) - {"http", "stdio"}
    if bad:
        parser.error(f"--transports: unknown {', '.join(sorted(bad))}; choose http, stdio")
    results = asyncio.run(main(options))
    if options.json:
        options.json.write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
