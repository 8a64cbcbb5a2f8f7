"""The `kopa` command as a user runs it: a real process, real exit codes and messages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from sandbox.loopback import free_port
from tests.conftest import TEST_DATA_DIR, TEST_SCALE


def kopa(*args: str, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "KOPA_HOME": str(TEST_DATA_DIR), "KOPA_SANDBOX__SCALE": str(TEST_SCALE), **(env or {})}
    return subprocess.run([sys.executable, "-m", "appliance", *args], capture_output=True, text=True,
                          env=full_env, timeout=timeout)


@pytest.mark.parametrize(("args", "message"), [
    (["sandbox", "serve", "--world", "v9"], "choose one of v1, v2"),
    (["sandbox", "serve", "--faults", "sometimes"], "none, flaky, hostile"),
    (["sandbox", "info", "--world", "v3"], "--world 'v3' is not a world version"),
])
def test_bad_arguments_exit_2_with_a_one_line_reason(args, message):
    result = kopa(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_out_of_range_port_is_refused_by_the_parser():
    result = kopa("sandbox", "serve", "--port", "70000")
    assert result.returncode == 2 and "65535" in result.stderr


def test_info_json_lists_tables_platforms_and_keys(world):
    result = kopa("sandbox", "info", "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["world"]["content_hash"] == world.content_hash
    assert {p["id"] for p in info["platforms"]} >= {"dart", "krx", "seoul", "gg"}
    assert all(p["key"] for p in info["platforms"])
    assert info["tables"] == world.table_sizes()


@contextmanager
def running_kopa(*args: str, log: Path, env: dict[str, str] | None = None, timeout: float = 120) -> Iterator[dict]:
    """Run `kopa ARGS --port P` until the block ends; yields /healthz's JSON and the origin."""
    port = free_port()
    full_env = {**os.environ, "KOPA_HOME": str(TEST_DATA_DIR), "KOPA_SANDBOX__SCALE": str(TEST_SCALE), **(env or {})}
    with open(log, "w") as log_file:
        proc = subprocess.Popen([sys.executable, "-m", "appliance", *args, "--port", str(port)], env=full_env,
                                stdout=subprocess.DEVNULL, stderr=log_file)
    origin = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                health = httpx.get(origin + "/healthz", timeout=1).json()
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
        yield {"health": health, "origin": origin}
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_serve_answers_on_the_requested_port_and_records_the_session(world, tmp_path):
    db = tmp_path / "meta.db"
    with running_kopa("sandbox", "serve", log=tmp_path / "serve.log", env={"KOPA_METADB__URL": f"sqlite:///{db}"}) as run:
        assert run["health"] == {"status": "ok", "world": "v1", "content_hash": world.content_hash}
    from appliance.metadb import latest_world_builds, open_metadb

    engine = open_metadb(f"sqlite:///{db}")
    (build,) = latest_world_builds(engine)
    engine.dispose()
    assert build.content_hash == world.content_hash
