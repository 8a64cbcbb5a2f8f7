"""The `kopa` pytest plugin's ``--kopa-record-misses``: a call the bundle lacks is recorded from the sandbox into
a new version of the bundle (the replayed version its parent), and that version then replays it strictly.

Real parts: a bundle recorded through the gateway from the cached test world into a temporary cassettes folder,
pytest in a subprocess on a test file outside the repository's tests (the plugin loads through its ``pytest11``
entry point), the gateway on a loopback port, the sandbox world in-process, the official MCP client.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_gateway.gateway import open_gateway
from recorder import CassetteStore
from tests.conftest import TEST_DATA_DIR, TEST_SCALE, sandbox_upstream

BUNDLE = "plugin-misses"
RECORDED = ("list_tollbooths", {"numOfRows": 7})
MISSED = ("search_school_info", {"ATPT_OFCDC_SC_CODE": "T10"})  # another platform: nothing to serve it from

AGENT_TEST = f'''
import pytest


@pytest.mark.asyncio
@pytest.mark.kopa_bundle("{BUNDLE}")
async def test_an_agent_makes_a_recorded_call_and_a_new_one(kopa_replay):
    for tool, args in ({RECORDED!r}, {MISSED!r}):
        result = await kopa_replay.client.call_tool(tool, args)
        assert not result.is_error, result.content
        assert result.structured_content["records"], (tool, args)
'''


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, world) -> Path:
    """A cassettes folder holding one version of ``BUNDLE``: the ``RECORDED`` call only."""
    folder = tmp_path_factory.mktemp("plugin-cassettes")

    async def record() -> None:
        gw = open_gateway(sandbox=sandbox_upstream(), home=TEST_DATA_DIR, mode="record", cassettes=folder,
                          bundle=BUNDLE)
        try:
            assert (await gw.runtime.call(*RECORDED, "s")).records
        finally:
            await gw.aclose()

    asyncio.run(record())
    return folder


def run_pytest(folder: Path, *options: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "KOPA_HOME": str(TEST_DATA_DIR), "KOPA_SANDBOX__SCALE": str(TEST_SCALE)}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-rA",
                           *options, str(folder)], cwd=folder, env=env, capture_output=True, text=True, timeout=600)


def interactions(store: CassetteStore, ref: str) -> set[tuple[str | None, str]]:
    return {(i.tool, i.url) for i in store.open(ref).interactions()}


def test_record_misses_writes_the_missed_call_into_a_child_version_that_then_replays(recorded, tmp_path):
    cassettes = tmp_path / "cassettes"
    shutil.copytree(recorded, cassettes)
    store = CassetteStore(cassettes)
    parent = store.head(BUNDLE)
    tests = tmp_path / "agent"
    tests.mkdir()
    (tests / "test_agent.py").write_text(AGENT_TEST, encoding="utf-8")

    strict = run_pytest(tests, "--kopa-cassettes", str(cassettes))
    out = strict.stdout + strict.stderr
    assert strict.returncode == 1, out
    assert 'search_school_info({"ATPT_OFCDC_SC_CODE": "T10"})' in out and "--kopa-record-misses" in out, out
    assert store.head(BUNDLE) == parent  # a strict replay records nothing

    recording = run_pytest(tests, "--kopa-cassettes", str(cassettes), "--kopa-record-misses")
    out = recording.stdout + recording.stderr
    assert recording.returncode == 0, out
    assert "PASSED test_agent.py::test_an_agent_makes_a_recorded_call_and_a_new_one" in out, out
    child = store.head(BUNDLE)
    assert child != parent
    assert f"kopa: the misses of {BUNDLE}@{parent} were recorded into {BUNDLE}@{child}" in out, out
    bundle = store.open(BUNDLE)
    assert bundle.manifest.parent == parent
    assert bundle.catalog_pin() is not None  # the new version pins the catalog it served, as any recording
    new = interactions(store, f"{BUNDLE}@{child}") - interactions(store, f"{BUNDLE}@{parent}")
    assert {tool for tool, _ in new} == {"search_school_info"} and any("T10" in url for _, url in new), new
    assert store.open(f"{BUNDLE}@{parent}", verify=True).version == parent  # the replayed version is untouched

    again = run_pytest(tests, "--kopa-cassettes", str(cassettes))  # HEAD is the child: nothing missed now
    out = again.stdout + again.stderr
    assert again.returncode == 0, out
    assert "missed the replayed bundle" not in out and "were recorded into" not in out, out
    assert store.head(BUNDLE) == child


def test_record_misses_refuses_to_write_into_the_shipped_cassettes(tmp_path):
    """With no --kopa-cassettes and no bundle of that name under KOPA_HOME, the plugin replays the cassettes shipped
    with the appliance; recording into them would change the installed package: refused, naming the way out."""
    (tmp_path / "test_shipped.py").write_text('''
import pytest


@pytest.mark.kopa_bundle("kopa-default")
def test_gateway(kopa_gateway):
    pass
''', encoding="utf-8")
    env = {**os.environ, "KOPA_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-rA",
                           "--kopa-record-misses", str(tmp_path)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    assert "--kopa-record-misses" in out and "--kopa-cassettes" in out and "shipped" in out, out
