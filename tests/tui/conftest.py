"""Fixtures of the console's tests: fixture homes (deterministic data) and one real gateway over the sandbox.

The snapshot tests and the pilot tests get separate homes: a pilot test signs a bundle and adds a run,
which a snapshot must never see. The gateway is the console's own ``LocalGateway`` over the test world,
served on a loopback port once per session (per xdist worker).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mcp_gateway.server import ToolSet
from tests.conftest import TEST_DATA_DIR, sandbox_upstream
from tests.tui.fixture_home import DATA, build_fixture_home
from tui import ApplianceSource, KopaConsole, LocalGateway
from tui.sources import Cassettes

SMALL_TASKS = DATA / "tasks-small.jsonl"


@pytest.fixture(scope="session")
def snapshot_home(tmp_path_factory: pytest.TempPathFactory):
    return build_fixture_home(tmp_path_factory.mktemp("snap") / "home")


@pytest.fixture(scope="session")
def pilot_home(tmp_path_factory: pytest.TempPathFactory):
    return build_fixture_home(tmp_path_factory.mktemp("pilot") / "home")


@pytest.fixture(scope="session")
def make_snapshot_app(snapshot_home) -> Callable[..., KopaConsole]:
    """A console over the snapshot home with no gateway and no polling: what it shows is fixed."""

    def make() -> KopaConsole:
        source = ApplianceSource.from_settings(snapshot_home)
        source.default_tasks = Path("tests/tui/data/tasks-small.jsonl")
        source.cassettes = Cassettes(snapshot_home.cassettes_dir)  # not the shipped bundles: they change with the repo
        app = KopaConsole(source, poll_s=None)
        # A tab's underline slides for 0.3 s; on a busy machine the picture was taken mid-slide (a CI failure
        # of the jobs view). A snapshot shows the settled screen, so nothing animates.
        app.animation_level = "none"
        return app

    return make


@pytest.fixture(scope="session")
def gateway(pilot_home) -> Iterator[LocalGateway]:
    local = LocalGateway.open(upstream=sandbox_upstream(), home=TEST_DATA_DIR,
                              audit_file=pilot_home.home_dir / "logs" / "audit.jsonl",
                              toolsets={"all": ToolSet.everything()})  # /mcp is what the console calls
    local.start()
    yield local
    local.close()
