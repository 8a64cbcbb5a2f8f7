"""ASGI entry point for running the sandbox under several uvicorn worker processes.

    uvicorn --factory sandbox.asgi:app_from_env --workers 2

Each worker opens the (already built) world file read-only; configuration comes from the
environment because worker processes are started by uvicorn, not by our code.
"""

from __future__ import annotations

import json
import os

from starlette.types import ASGIApp

from .app import create_sandbox_app
from .faults import FaultProfile
from .keys import KeyStore
from .world.runtime import World

ENV_WORLD = "KOPA_SANDBOX_WORLD_FILE"
ENV_KEYS = "KOPA_SANDBOX_KEYS_JSON"
ENV_FAULTS = "KOPA_SANDBOX_FAULTS_JSON"


def app_from_env() -> ASGIApp:
    """Build the sandbox app from the variables ``worker_environment`` wrote."""
    world = World.open(os.environ[ENV_WORLD])
    keys = KeyStore.from_mapping(json.loads(os.environ[ENV_KEYS]))
    faults = FaultProfile.model_validate_json(os.environ[ENV_FAULTS])
    return create_sandbox_app(world, keys, faults)


def worker_environment(world: World, keys: KeyStore, faults: FaultProfile) -> dict[str, str]:
    """Environment for worker processes (set in the parent before uvicorn forks them)."""
    return {ENV_WORLD: str(world.path), ENV_KEYS: json.dumps({p: list(k) for p, k in keys.keys.items()}),
            ENV_FAULTS: faults.model_dump_json()}
