"""The sandbox upstream: a generated Korean public-data world and the ten platforms' HTTP APIs.

Usage::

    from sandbox import World, create_sandbox_app, ensure_world
    world = World.open(ensure_world("~/.cache/kopa"))
    app = create_sandbox_app(world)

    upstream = InProcessSandbox(home)   # the same, lazily, as a gateway's in-process upstream
"""

from .app import create_sandbox_app
from .faults import (
    BUILTIN_PROFILES,
    FaultInjector,
    FaultKind,
    FaultProfile,
    FaultRates,
    load_profile,
)
from .keys import PLATFORM_IDS, KeyStore, default_keys
from .platforms import platform_specs
from .platforms.base import PlatformSpec
from .upstream import InProcessSandbox
from .world.builder import (
    DEFAULT_SEED,
    GENERATOR_VERSION,
    WORLD_VERSIONS,
    WorldBuildError,
    ensure_world,
    generate,
)
from .world.runtime import World

__all__ = [
    "BUILTIN_PROFILES", "DEFAULT_SEED", "GENERATOR_VERSION", "PLATFORM_IDS", "WORLD_VERSIONS",
    "FaultInjector", "FaultKind", "FaultProfile", "FaultRates", "InProcessSandbox", "KeyStore", "PlatformSpec", "World",
    "WorldBuildError", "create_sandbox_app", "default_keys", "ensure_world", "generate", "load_profile",
    "platform_specs",
]
