"""``python -m image.check``: the image run as a deployment runs it, with no network but loopback.

    python -m image.check [--dir .image-build] [--tag localhost/kopa:cpu] [--no-demo]

It re-runs itself inside ``unshare -n`` (a network namespace whose only interface is loopback, brought up here),
makes a working container of the image (``buildah from``) and, with ``buildah run`` as the image's own user:

- starts the image's ``CMD`` (``kopa serve``, gateway token from the environment, as an operator passes it) and
  times the start to ``/healthz`` 200 (and, apart, what ``buildah run`` of ``true`` costs: the runtime's share);
- lists the tools with the MCP client (streamable HTTP, bearer token) and calls one on the baked world;
- runs the image's ``HEALTHCHECK`` command while the gateway runs, and ``id -u`` (not 0);
- verifies every cassette bundle version's signature (``kopa cassettes verify --public-key``, the key mounted
  read-only: it comes with the image but not in it);
- runs ``kopa bench demo --no-local`` and reads pass@1 of oracle and first-page from the runs it wrote.

Prints a JSON report (also ``<dir>/check-<tag>.json``); exit 1 when a check fails. Needs root.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx2

from .buildah import Buildah
from .containerfile import healthcheck_command
from .context import bundle_versions

REPO = Path(__file__).resolve().parent.parent
INNER = "KOPA_IMAGE_CHECK_NETNS"
TOOL, ARGS = "search_school_info", {"ATPT_OFCDC_SC_CODE": "T10", "numOfRows": 10}
EXPECTED = {"tools": 2416, "oracle": 1.0, "first-page": 0.621}
KEY_INSIDE = "/run/kopa/bundle-signing.pub.pem"
DEMO_OUT = "/tmp/kopa-demo"


def in_netns(argv: list[str]) -> list[str]:
    """This check again, inside a new network namespace (only ``lo``)."""
    return ["unshare", "-n", sys.executable, "-m", "image.check", *argv]


def healthz_wait(port: int, process: subprocess.Popen, deadline_s: float = 120) -> float:
    started = time.perf_counter()
    while True:
        try:
            if httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return time.perf_counter() - started
        except httpx2.TransportError:
            pass
        if process.poll() is not None or time.perf_counter() - started > deadline_s:
            raise RuntimeError(f"kopa serve did not answer /healthz (exit {process.poll()})")
        time.sleep(0.05)


async def mcp_session(port: int, token: str) -> dict:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
                Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client):
        tools, cursor = [], None
        while True:  # the gateway pages tools/list: follow the cursor to the end
            page = await client.list_tools(cursor=cursor)
            tools += page.tools
            cursor = page.next_cursor
            if not cursor:
                break
        result = await client.call_tool(TOOL, dict(ARGS))
        return {"mcp_tools": len(tools), "mcp_call": TOOL, "mcp_call_error": bool(result.is_error),
                "mcp_call_result_chars": len(json.dumps(result.structured_content or {}, ensure_ascii=False))}


def stop(process: subprocess.Popen) -> None:
    """End the gateway this check started (its own process group, by id)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


def pass_at_1(buildah: Buildah, container: str, agent: str) -> float:
    run = json.loads(subprocess.run(buildah.run(container, ["cat", f"{DEMO_OUT}/{agent}/run.json"]), check=True,
                                    capture_output=True, text=True).stdout)
    return round(float(run["summary"]["pass_at"]["1"]), 3)


def check(args: argparse.Namespace) -> dict:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    buildah = Buildah.under(args.dir)
    config = buildah.inspect(args.tag)["Docker"]["config"]
    env = dict(item.split("=", 1) for item in config["Env"])
    port = int(env.get("KOPA_GATEWAY__PORT", "8765"))
    report: dict = {"tag": args.tag, "user": config.get("User"), "cmd": config.get("Cmd"),
                    "healthcheck_in_config": bool((config.get("Healthcheck") or {}).get("Test"))}
    container = buildah.call("from", "--pull-never", args.tag)
    try:
        uid = subprocess.run(buildah.run(container, ["id", "-u"]), check=True, capture_output=True, text=True)
        report["uid"] = int(uid.stdout.strip())
        started = time.perf_counter()  # what `buildah run` itself costs (chroot set-up), apart from the gateway
        subprocess.run(buildah.run(container, ["true"]), check=True)
        report["buildah_run_overhead_s"] = round(time.perf_counter() - started, 2)
        token = secrets.token_urlsafe(24)  # this run's only: in the gateway's environment, in no file
        serve = buildah.run(container, config["Cmd"], env={"KOPA_GATEWAY__TOKENS": json.dumps([token])})
        gateway = subprocess.Popen(serve, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        try:
            report["start_to_healthz_s"] = round(healthz_wait(port, gateway), 2)
            report |= asyncio.run(mcp_session(port, token))
            test = (config.get("Healthcheck") or {}).get("Test") or ["CMD", *healthcheck_command(
                (REPO / "Dockerfile").read_text(encoding="utf-8"))]
            started = time.perf_counter()
            health = subprocess.run(buildah.run(container, test[1:]), capture_output=True, text=True)
            report |= {"healthcheck_rc": health.returncode, "healthcheck_s": round(time.perf_counter() - started, 2)}
        finally:
            stop(gateway)
        public_key = args.dir / "keys" / "bundle-signing.pub.pem"
        verified = {}
        for version in bundle_versions(args.dir / "context" / "cassettes"):
            ref = f"{version.parent.name}@{version.name}"
            result = subprocess.run(buildah.run(container, ["kopa", "cassettes", "verify", ref, "--public-key",
                                                            KEY_INSIDE], volumes={public_key: KEY_INSIDE}),
                                    capture_output=True, text=True)
            verified[ref] = result.returncode == 0
        report["signatures_verified"] = verified
        if args.demo:
            started = time.perf_counter()
            subprocess.run(buildah.run(container, ["kopa", "bench", "demo", "--no-local", "--out", DEMO_OUT]),
                           check=True, stdout=subprocess.DEVNULL)
            report["demo_s"] = round(time.perf_counter() - started, 1)
            report["demo_pass_at_1"] = {agent: pass_at_1(buildah, container, agent)
                                        for agent in ("oracle", "first-page")}
    finally:
        subprocess.run(buildah.cmd("rm", container), capture_output=True)
    return report


def failures(report: dict) -> list[str]:
    """What in the report falls short of a deployment's expectations."""
    found = []
    if report.get("uid") in (None, 0):
        found.append("runs as root")
    if report.get("mcp_tools") != EXPECTED["tools"]:
        found.append(f"MCP lists {report.get('mcp_tools')} tools, not {EXPECTED['tools']}")
    if report.get("mcp_call_error") is not False:
        found.append(f"{TOOL} failed")
    if report.get("healthcheck_rc") != 0:
        found.append("HEALTHCHECK failed")
    if not report.get("signatures_verified") or not all(report["signatures_verified"].values()):
        found.append("a bundle signature did not verify")
    demo = report.get("demo_pass_at_1")
    if demo is not None and demo != {"oracle": EXPECTED["oracle"], "first-page": EXPECTED["first-page"]}:
        found.append(f"bench demo gave {demo}")
    return found


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=REPO / ".image-build")
    parser.add_argument("--tag", default="localhost/kopa:cpu")
    parser.add_argument("--no-demo", dest="demo", action="store_false", help="skip `kopa bench demo --no-local`")
    args = parser.parse_args(argv)
    args.dir = args.dir.resolve()
    if os.environ.get(INNER) != "1":
        raise SystemExit(subprocess.run(in_netns(argv), env=os.environ | {INNER: "1"}, cwd=REPO).returncode)
    report = check(args)
    report["failures"] = failures(report)
    name = args.tag.rsplit("/", 1)[-1].replace(":", "-")
    (args.dir / f"check-{name}.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=1))
    raise SystemExit(1 if report["failures"] else 0)


if __name__ == "__main__":
    main()
