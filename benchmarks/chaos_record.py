"""Chaos recording: record through the gateway under hostile upstream faults while the recorder is SIGKILLed.

    python benchmarks/chaos_record.py [--tasks bench/tasks/kopa-bench.jsonl | --calls FILE] [--total 10000]
                                      [--clients 32] [--kills 5] [--faults hostile] [--seed 0] [--scale 1.0]

``benchmarks/chaos_calls.jsonl`` holds the task set's golden calls (246) of its 41 tools whose recorded bodies
average under 8 KB: the whole task set records ~80 KB per exchange (whole results of up to 1,000-record
pages), which is disk and CPU, not chaos; the light list reaches 10,000 calls in minutes on 2 cores.

A supervisor (this process) starts the recorder: the gateway in record mode (``kopa serve --mode record``,
with the sandbox upstream behind a fault profile: rate limits, 5xx, hangs, malformed bodies, endpoints
down), in its own process on a loopback port. N MCP clients over streamable HTTP send the task set's golden
calls (or a call list), cycled to ``--total`` calls. At K seeded random points the supervisor kills the
recorder with SIGKILL, restarts it (it resumes its journal) and the clients re-send what was in flight. At
the end the recorder is stopped (SIGTERM: it seals), anything left unsealed is recovered, every version is
verified, and every acknowledged call is replayed from the sealed bundle.

Terms in the report:
* attempted: calls sent by the clients, re-sends included; re-sent: calls in flight at a kill (no answer
  came back; the client sent them again once the recorder was back).
* acknowledged: calls whose tool result reached the client. Only those were promised to anyone.
* lost: an acknowledged call that the sealed bundle cannot replay (a replay miss on any of its requests).
  A call in flight at the instant of a kill is not lost: it was never acknowledged, and it is re-sent.
* classified: acknowledged calls per outcome class of Table 7; unclassified = ``uncategorized``.
* retried: upstream requests the gateway sent again after a retryable fault (counted in the replay,
  which serves each call exactly the exchanges it met).
* replay identical: an acknowledged call's replayed result equals, field for field, what the client got.

Replaying a call exactly needs its own exchanges, in order. Identical requests of concurrent calls would
interleave in the bundle, so the supervisor never has two calls to one endpoint in flight at once, and
replay serves each call the exchanges of its fingerprints recorded after the call was sent.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import dataclasses
import hashlib
import json
import logging
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from sandbox.loopback import free_port  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TOKEN = "chaos-token"
BUNDLE = "chaos"
DEFAULT_TASKS = REPO / "bench" / "tasks" / "kopa-bench.jsonl"
KEY_TOKEN = re.compile(r"^\{\w+_api_key\}$")


# ---- the recorder process -------------------------------------------------------------------

def serve_recorder(args: argparse.Namespace) -> None:
    """``--serve-recorder``: the gateway in record mode over a faulty in-process sandbox, under uvicorn.

    It starts as a warm standby: imports done and catalog loaded, it waits for a line on stdin before it
    opens (and resumes) the recording, so that a restart after a kill costs a fraction of a cold start.
    """
    import uvicorn

    from mcp_gateway.catalog import load_catalog
    from mcp_gateway.gateway import open_gateway
    from mcp_gateway.server import ToolSet, create_gateway_app
    from sandbox import InProcessSandbox, KeyStore, World, create_sandbox_app, ensure_world
    from sandbox.faults import load_profile

    profile = load_profile(args.faults)
    if args.hang_seconds:
        profile = profile.model_copy(update={"hang_seconds": args.hang_seconds})

    @dataclass
    class FaultySandbox(InProcessSandbox):
        faults: Any = None

        def app(self) -> Any:
            if self.world is None:
                self.world = World.open(ensure_world(self.home, seed=self.seed, version=self.version,
                                                     scale=self.scale))
            return create_sandbox_app(self.world, KeyStore.from_mapping(self.keys), self.faults)

    catalog = load_catalog()
    if not sys.stdin.readline():
        return  # the supervisor ended without needing this standby
    went = time.perf_counter()
    home = Path(args.home).expanduser()
    gateway = open_gateway(upstream="sandbox", sandbox=FaultySandbox(home, scale=args.scale, faults=profile),
                           home=home, catalog=catalog, mode="record", cassettes=Path(args.cassettes), bundle=BUNDLE,
                           inherit=False, resume_recording=True)
    resumed = gateway.recording.resumed if gateway.recording is not None else 0
    print(f"recorder pid {os.getpid()}: resumed {resumed} journaled exchange(s), opened in "
          f"{time.perf_counter() - went:.2f} s", file=sys.stderr, flush=True)
    # /mcp alone (every tool): the other tool sets' servers only slow each restart down
    app = create_gateway_app(gateway.runtime, tokens={TOKEN}, toolsets={"all": ToolSet.everything()},
                             resources=[gateway])  # closing it (SIGTERM) seals the recording
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", lifespan="on")


class Recorder:
    """The recorder process: start (a warm standby told to go; wait for /healthz), SIGKILL, SIGTERM."""

    def __init__(self, args: argparse.Namespace, cassettes: Path, log: Path):
        self.port = free_port()
        self.origin = f"http://127.0.0.1:{self.port}"
        self.command = [sys.executable, __file__, "--serve-recorder", "--port", str(self.port), "--cassettes",
                        str(cassettes), "--home", args.home, "--scale", str(args.scale), "--faults", args.faults,
                        "--hang-seconds", str(args.hang_seconds or 0)]
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None
        self.standby = self._spawn()
        self.starts: list[float] = []

    def _spawn(self) -> subprocess.Popen[bytes]:
        with open(self.log, "ab") as log:
            return subprocess.Popen(self.command, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=log)

    def start(self) -> None:
        started = time.monotonic()
        self.proc, self.standby = self.standby, self._spawn()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"go\n")
        self.proc.stdin.flush()
        while True:
            try:
                if httpx.get(self.origin + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None or time.monotonic() - started > 300:
                raise SystemExit(f"the recorder did not start; see {self.log}:\n{self.log.read_text()[-2000:]}")
            time.sleep(0.02)
        self.starts.append(time.monotonic() - started)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def abandon(self) -> None:
        for proc in (self.proc, self.standby):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()

    def stop(self) -> int:
        """SIGTERM: uvicorn shuts down, the lifespan closes the gateway, which seals the recording."""
        assert self.proc is not None and self.standby.stdin is not None
        self.standby.stdin.close()  # EOF: the standby exits without opening anything
        self.standby.wait(timeout=120)
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=600)


# ---- the clients ------------------------------------------------------------------------------

@dataclass
class Acked:
    index: int
    tool: str
    args: dict[str, Any]
    sent_at: str  # UTC, milliseconds: the recorder's recorded_at has the same clock and precision
    outcome: str
    digest: str  # SHA-256 of the structured result (the records can be large)


@dataclass
class Run:
    calls: list[Any]  # record_service.Call, cycled to --total
    keys: list[str]  # the endpoint each call goes to (one call per endpoint in flight)
    acked: list[Acked] = field(default_factory=list)
    attempted: int = 0
    resent: int = 0
    kills: list[dict[str, Any]] = field(default_factory=list)


def digest(structured: Any) -> str:
    return hashlib.sha256(json.dumps(structured, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def utc_ms() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Scheduler:
    """Hands out calls so that no two calls to one endpoint are in flight together."""

    def __init__(self, run: Run):
        self.run, self.pending = run, list(range(len(run.calls)))
        self.busy: dict[str, float] = {}  # endpoint → 0 while in flight; release time after
        self.cond = asyncio.Condition()

    async def take(self) -> int | None:
        async with self.cond:
            while True:
                if not self.pending:
                    return None
                for pos, index in enumerate(self.pending):
                    if self.busy.get(self.run.keys[index], -1.0) != 0:
                        del self.pending[pos]
                        key = self.run.keys[index]
                        released = self.busy.get(key, 0.0)
                        self.busy[key] = 0
                        # recorded_at has millisecond precision: the previous call's last exchange must be
                        # strictly older than this call's send time
                        await asyncio.sleep(max(0.0, released + 0.003 - time.time()))
                        return index
                await self.cond.wait()

    async def release(self, index: int) -> None:
        async with self.cond:
            self.busy[self.run.keys[index]] = time.time()
            self.cond.notify_all()


async def client(run: Run, scheduler: Scheduler, up: asyncio.Event, origin: str) -> None:
    """One MCP client: a connection at a time, each in its own task (a dead server takes only that task down)."""
    holding: list[int] = []  # the call this client has taken and not yet had acknowledged
    while True:
        await up.wait()
        task = asyncio.create_task(connection(run, scheduler, origin, holding))
        await asyncio.wait({task})
        if not task.cancelled() and task.exception() is None:
            return  # no calls left
        if holding:
            run.resent += 1  # the recorder died under this call: it is sent again on the next connection
        await asyncio.sleep(0.05)


async def connection(run: Run, scheduler: Scheduler, origin: str, holding: list[int]) -> None:
    async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120) as http,
                Client(streamable_http_client(origin + "/mcp", http_client=http)) as session):
        while True:
            if not holding:
                index = await scheduler.take()
                if index is None:
                    return
                holding.append(index)
            index = holding[0]
            call = run.calls[index]
            sent_at = utc_ms()
            run.attempted += 1
            result = await asyncio.wait_for(session.call_tool(call.tool, dict(call.args)), 180)
            structured = result.structured_content or {}
            run.acked.append(Acked(index, call.tool, call.args, sent_at, str(structured.get("outcome")),
                                   digest(structured)))
            holding.clear()
            await scheduler.release(index)


async def killer(run: Run, recorder: Recorder, up: asyncio.Event, kills: int, rng: random.Random,
                 cassettes: Path) -> None:
    from recorder import CassetteStore

    total = len(run.calls)
    points = sorted(rng.sample(range(max(1, total // 20), max(2, total * 19 // 20)), kills))
    for point in points:
        while len(run.acked) < point:
            await asyncio.sleep(0.01)
        await asyncio.sleep(rng.uniform(0, 0.2))  # anywhere: mid-call, mid-write, between calls
        up.clear()
        recorder.kill()
        (journal,) = CassetteStore(cassettes).unsealed(BUNDLE) or [None]
        run.kills.append({"after_acked": len(run.acked), "state": journal.state if journal else "absent",
                          "journaled": journal.interactions if journal else 0,
                          "torn_bytes": journal.torn_bytes if journal else 0})
        await asyncio.to_thread(recorder.start)
        up.set()


# ---- the check --------------------------------------------------------------------------------

class PositionedHits(Counter):
    """Replay counters that start each fingerprint at its first exchange recorded at or after ``cursor``."""

    def __init__(self, times: dict[str, list[str]]):
        super().__init__()
        self.times, self.cursor = times, ""

    def __missing__(self, fingerprint: str) -> int:
        return bisect.bisect_left(self.times.get(fingerprint, []), self.cursor)


async def replay_check(run: Run, cassettes: Path, home: Path, refused: set[str]) -> dict[str, Any]:
    """Replay every acknowledged call; a call that differs is explained when one of its requests met an
    exchange the recorder refused (a key in it): that exchange was never written, so it cannot be replayed."""
    from mcp_gateway.gateway import open_gateway
    from recorder import CassetteStore

    store = CassetteStore(cassettes)
    bundle = store.open(BUNDLE)
    times: dict[str, list[str]] = defaultdict(list)
    for fp, at in zip(bundle.column("fingerprint"), bundle.column("recorded_at")):
        times[fp].append(at)  # recorded order is time order (one journal, appended as answers came)
    gateway = open_gateway(upstream="replay", home=home, mode="replay", cassettes=cassettes,
                           bundle=f"{BUNDLE}@{bundle.version}")
    transport = gateway.transport
    assert transport is not None
    ctx = gateway.clients.ctx
    ctx.limits = dataclasses.replace(ctx.limits, base_delay_s=0.0, max_delay_s=0.0)  # replay needs no backoff
    hits = PositionedHits(times)
    transport.stats.hits = hits
    lost, identical, retried, served = [], 0, 0, 0
    differs: list[dict[str, Any]] = []
    try:
        for acked in sorted(run.acked, key=lambda a: a.sent_at):
            hits.clear()
            hits.cursor = acked.sent_at
            misses = len(transport.stats.misses)
            result = await gateway.runtime.call(acked.tool, dict(acked.args), "replay")
            if len(transport.stats.misses) > misses or str(result.outcome) == "replay_miss":
                lost.append(acked)
                transport.stats.misses.clear()
                continue
            consumed = sum(hits[fp] - bisect.bisect_left(times.get(fp, []), acked.sent_at) for fp in list(hits))
            served += consumed
            retried += consumed - len(hits)
            if digest(result.structured()) == acked.digest:
                identical += 1
            else:
                differs.append({"tool": acked.tool, "acknowledged": acked.outcome, "replayed": str(result.outcome),
                                "met_a_refused_exchange": bool(refused & set(hits))})
    finally:
        await gateway.aclose()
    return {"lost": lost, "identical": identical, "retried": retried, "served": served, "differs": differs}


def verify_all(cassettes: Path) -> tuple[list[str], list[str]]:
    from recorder import CassetteStore, CorruptBundleError

    store, ok, bad = CassetteStore(cassettes), [], []
    for m in store.versions(BUNDLE):
        try:
            store.open(f"{BUNDLE}@{m.version}")
            ok.append(m.version)
        except CorruptBundleError as exc:
            bad.append(f"{m.version}: {exc}")
    return ok, bad


# ---- the supervisor ---------------------------------------------------------------------------

def load_run(args: argparse.Namespace) -> Run:
    from appliance.record_service import load_calls, load_task_calls, select
    from mcp_gateway.catalog import load_catalog

    catalog = load_catalog()
    loaded = load_calls(Path(args.calls)) if args.calls else load_task_calls(Path(args.tasks))
    # Golden calls carry episode key placeholders ("{ex_api_key}") for the bench profile; the chat profile
    # the recorder serves injects the keys itself and refuses a key parameter.
    chosen = [dataclasses.replace(c, args={k: v for k, v in c.args.items() if not KEY_TOKEN.match(str(v))})
              for c in select(loaded, catalog, set(), set())]
    calls = [chosen[i % len(chosen)] for i in range(args.total)]
    keys = []
    for call in calls:
        endpoint = catalog.get(call.tool).endpoint
        keys.append(f"{endpoint.platform}:{endpoint.path}")
    return Run(calls, keys)


async def supervise(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    from recorder import CassetteStore

    cassettes, log = workdir / "cassettes", workdir / "recorder.log"
    run = load_run(args)
    recorder = Recorder(args, cassettes, log)
    started = time.monotonic()
    try:
        await asyncio.to_thread(recorder.start)
        up = asyncio.Event()
        up.set()
        scheduler = Scheduler(run)
        rng = random.Random(args.seed)
        kill_task = asyncio.create_task(killer(run, recorder, up, args.kills, rng, cassettes))
        await asyncio.gather(*(client(run, scheduler, up, recorder.origin) for _ in range(args.clients)))
        await kill_task
        recorded_s = time.monotonic() - started
        (journal,) = CassetteStore(cassettes).unsealed(BUNDLE) or [None]
        refused = journal.refused if journal is not None else 0
        refused_fps = set()
        if refused:
            text = (journal.folder / "refused.jsonl").read_text(encoding="utf-8")
            refused_fps = {json.loads(line)["fingerprint"] for line in text.splitlines()}
        stopped = await asyncio.to_thread(recorder.stop)
    finally:
        recorder.abandon()  # on any failure above: no recorder process outlives the supervisor
    # A clean stop seals and leaves nothing here; a refused bundle (a key found in an exchange) leaves the
    # journal without that exchange, which is what an operator's `kopa cassettes recover` seals.
    recovered = CassetteStore(cassettes).recover(BUNDLE)
    ok, bad = verify_all(cassettes)
    check = await replay_check(run, cassettes, Path(args.home).expanduser(), refused_fps)
    bundle = CassetteStore(cassettes).open(BUNDLE)
    return {
        "calls": len(run.calls), "clients": args.clients, "faults": args.faults, "seed": args.seed,
        "attempted": run.attempted, "acknowledged": len(run.acked), "resent": run.resent,
        "recorded": len(bundle), "retried": check["retried"], "refused": refused,
        "classified": dict(sorted(Counter(a.outcome for a in run.acked).items())),
        "unclassified": sum(a.outcome in ("uncategorized", "None") for a in run.acked),
        "lost": len(check["lost"]), "lost_examples": [dataclasses.asdict(a) for a in check["lost"][:5]],
        "replay_identical": check["identical"], "replay_differs": check["differs"],
        "replay_differs_explained": sum(d["met_a_refused_exchange"] for d in check["differs"]),
        "kills": run.kills, "stop_exit": stopped,
        "recovered_at_end": [dataclasses.asdict(r) for r in recovered],
        "versions_verified": len(ok), "versions_corrupt": bad, "bundle": f"{BUNDLE}@{bundle.version}",
        "recorder_starts_s": [round(s, 2) for s in recorder.starts], "recording_s": round(recorded_s, 1),
        "total_s": round(time.monotonic() - started, 1),
    }


def report(r: dict[str, Any]) -> None:
    print(f"\nchaos recording: {r['calls']:,} calls, {r['clients']} clients, faults {r['faults']}, "
          f"{len(r['kills'])} SIGKILLs (seed {r['seed']})")
    rows = [("calls attempted (re-sends included)", r["attempted"]), ("calls acknowledged", r["acknowledged"]),
            ("calls re-sent after a kill", r["resent"]), ("exchanges recorded", r["recorded"]),
            ("exchanges refused (a key found in them)", r["refused"]),
            ("upstream requests retried", r["retried"])]
    for name, n in rows:
        print(f"  {name:<40} {n:>9,}")
    print("  classified (Table 7):")
    for outcome, n in r["classified"].items():
        print(f"    {outcome:<38} {n:>9,}")
    print(f"  {'unclassified':<40} {r['unclassified']:>9,}")
    print(f"  {'lost (acknowledged, not replayable)':<40} {r['lost']:>9,}")
    print(f"  {'replayed identical to the acknowledgment':<40} {r['replay_identical']:>9,} / {r['acknowledged']:,}")
    if r["replay_differs"]:
        print(f"    differing: {len(r['replay_differs'])}, of which {r['replay_differs_explained']} met an exchange "
              f"refused for holding a key (never written, so not replayable)")
    print(f"  bundle {r['bundle']}: {r['versions_verified']} version(s) verified, {len(r['versions_corrupt'])} "
          f"corrupt; left unsealed at the end (recovered): {len(r['recovered_at_end'])}; recorder exit "
          f"{r['stop_exit']}")
    for k in r["kills"]:
        print(f"  kill after {k['after_acked']:,} acknowledged: journal {k['state']}, {k['journaled']:,} exchanges, "
              f"torn tail {k['torn_bytes']} bytes")
    print(f"  recorder starts (s): {r['recorder_starts_s']}; recording {r['recording_s']} s, "
          f"total {r['total_s']} s")
    goals = {"0 lost": r["lost"] == 0, "0 unclassified": r["unclassified"] == 0,
             "every version verifies": not r["versions_corrupt"] and r["versions_verified"] > 0,
             "every acknowledged call replays identical (bar refused exchanges)":
                 r["replay_identical"] + r["replay_differs_explained"] == r["acknowledged"],
             ">= 10,000 calls": r["acknowledged"] >= 10_000, ">= 5 kills": len(r["kills"]) >= 5}
    print("goals: " + "; ".join(f"{name} {'met' if met else 'NOT MET'}" for name, met in goals.items()))


def main(argv: list[str] | None = None) -> dict[str, Any] | None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", default=str(DEFAULT_TASKS), help="task set whose golden calls are recorded")
    parser.add_argument("--calls", help="a calls file (JSON/JSONL of {tool, args}) instead of --tasks")
    parser.add_argument("--total", type=int, default=10_000, help="calls to make (the list is cycled)")
    parser.add_argument("--clients", type=int, default=32, help="concurrent MCP clients")
    parser.add_argument("--kills", type=int, default=5, help="SIGKILLs of the recorder during the run")
    parser.add_argument("--faults", default="hostile", help="sandbox fault profile: none, flaky, hostile or a file")
    parser.add_argument("--hang-seconds", type=float, default=0.0, help="override the profile's hang time")
    parser.add_argument("--seed", type=int, default=0, help="where the kills fall")
    parser.add_argument("--scale", type=float, default=float(os.environ.get("KOPA_SANDBOX__SCALE", "1.0")))
    parser.add_argument("--home", default=os.environ.get("KOPA_HOME", "~/.kopa"))
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary one)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--serve-recorder", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--cassettes", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_recorder:
        serve_recorder(args)
        return None
    # The clients call tools without listing 2,318 schemas first; the SDK warns once per call that it then
    # skips validating the structured result (the check compares results byte for byte anyway).
    logging.getLogger("client").setLevel(logging.ERROR)
    logging.getLogger("mcp.client.streamable_http").setLevel(logging.ERROR)  # a killed server's sessions are gone
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="kopa-chaos-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        result = asyncio.run(supervise(args, workdir))
    finally:
        if args.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
    report(result)
    if args.json:
        args.json.write_text(json.dumps(result, ensure_ascii=False, indent=2), encoding="utf-8")
    return result


if __name__ == "__main__":
    main()
