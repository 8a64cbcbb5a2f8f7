"""The sandbox upstream: a generated Korean public-data world and the ten platforms' HTTP APIs.

Usage::

    from sandbox import World, create_sandbox_app, ensure_world
    world = World.open(ensure_world("~/.cache/kopa"))
    app = create_sandbox_app(world)

    upstream = InProcessSandbox(home)   # the same, lazily, as a gateway's in-process upstream

Names are imported from their modules on first use (PEP 562): ``import sandbox`` alone costs nothing,
so the ``kopa`` command starts fast and only the commands that serve or build a world load the
generator, DuckDB and the platform apps.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "create_sandbox_app": ".app",
    "BUILTIN_PROFILES": ".faults", "FaultInjector": ".faults", "FaultKind": ".faults", "FaultProfile": ".faults",
    "FaultRates": ".faults", "load_profile": ".faults",
    "PLATFORM_IDS": ".keys", "KeyStore": ".keys", "default_keys": ".keys",
    "platform_specs": ".platforms", "PlatformSpec": ".platforms.base",
    "InProcessSandbox": ".upstream",
    "DEFAULT_SEED": ".versions", "WORLD_VERSIONS": ".versions",
    "GENERATOR_VERSION": ".world.builder", "WorldBuildError": ".world.builder", "ensure_world": ".world.builder",
    "generate": ".world.builder",
    "World": ".world.runtime",
}

__all__ = [
    "BUILTIN_PROFILES", "DEFAULT_SEED", "GENERATOR_VERSION", "PLATFORM_IDS", "WORLD_VERSIONS", "FaultInjector",
    "FaultKind", "FaultProfile", "FaultRates", "InProcessSandbox", "KeyStore", "PlatformSpec", "World",
    "WorldBuildError", "create_sandbox_app", "default_keys", "ensure_world", "generate", "load_profile",
    "platform_specs",
]


def __getattr__(name: str) -> Any:
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'sandbox' has no attribute {name!r}") from None
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


if TYPE_CHECKING:
    from .app import create_sandbox_app
    from .faults import BUILTIN_PROFILES, FaultInjector, FaultKind, FaultProfile, FaultRates, load_profile
    from .keys import PLATFORM_IDS, KeyStore, default_keys
    from .platforms import platform_specs
    from .platforms.base import PlatformSpec
    from .upstream import InProcessSandbox
    from .versions import DEFAULT_SEED, WORLD_VERSIONS
    from .world.builder import GENERATOR_VERSION, WorldBuildError, ensure_world, generate
    from .world.runtime import World
