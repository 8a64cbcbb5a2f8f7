"""The `kopa` pytest plugin as a user meets it: pytest run on a test folder outside the repository's tests.

Real parts: pytest in a subprocess (the plugin loads through its ``pytest11`` entry point), the shipped bundle,
the gateway on a loopback port, the official MCP client.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.test_layout import REPO

EXAMPLE = REPO / "examples" / "pytest_plugin" / "test_replay_example.py"

TEARDOWN_AND_MISS = '''
import threading

import httpx
import pytest

SEEN = {}


@pytest.mark.asyncio
@pytest.mark.kopa_bundle("kopa-default")
async def test_a_lists_tools(kopa_replay):
    SEEN["url"] = kopa_replay.url
    assert kopa_replay.token and kopa_replay.bundle.startswith("kopa-default@")
    assert (await kopa_replay.session.list_tools()).tools


def test_b_the_gateway_is_gone_after_the_test():
    with pytest.raises(httpx.ConnectError):
        httpx.get(SEEN["url"], timeout=5)
    assert not [t for t in threading.enumerate() if t.name.startswith("kopa-replay-")]


@pytest.mark.asyncio
@pytest.mark.kopa_bundle("kopa-default")
async def test_c_calls_what_was_never_recorded(kopa_replay):
    await kopa_replay.client.call_tool("get_rest_area_fuel_prices", {"routeName": "없는노선"})
'''


def test_the_example_and_a_miss_run_from_outside_the_repository(tmp_path: Path):
    shutil.copy(EXAMPLE, tmp_path / EXAMPLE.name)
    (tmp_path / "test_teardown_and_miss.py").write_text(TEARDOWN_AND_MISS, encoding="utf-8")
    env = {**os.environ, "KOPA_HOME": str(tmp_path / "home")}  # no bundles there: the shipped one is used
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-rA",
                             str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    out = result.stdout + result.stderr
    assert "PASSED test_replay_example.py::test_the_cheapest_petrol_on_the_namhae_line_is_recorded" in out, out
    assert "PASSED test_teardown_and_miss.py::test_a_lists_tools" in out, out
    assert "PASSED test_teardown_and_miss.py::test_b_the_gateway_is_gone_after_the_test" in out, out
    assert "FAILED test_teardown_and_miss.py::test_c_calls_what_was_never_recorded" in out, out
    assert '1 call(s) missed the replayed bundle' in out, out
    assert 'get_rest_area_fuel_prices({"routeName": "없는노선"})' in out, out
    assert result.returncode == 1, out  # one failed test, no errors
    assert " error" not in out.splitlines()[-1], out
