"""The small seed-5 worlds that the generator and row-JSON tests read, built once per machine.

They live beside the full test worlds (``KOPA_TEST_DATA_DIR/small-worlds``), named by seed, version,
scale and generator version like every cached world, so a changed generator rebuilds them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox import ensure_world
from tests.conftest import TEST_DATA_DIR

SMALL_SEED, SMALL_SCALE = 5, 0.02


@pytest.fixture(scope="session")
def small_world_files() -> dict[str, Path]:
    """{"v1": path, "v2": path} of the small seed-5 worlds."""
    return {v: ensure_world(TEST_DATA_DIR / "small-worlds", seed=SMALL_SEED, version=v, scale=SMALL_SCALE)
            for v in ("v1", "v2")}
