"""Assemble a working gateway: catalog + platform clients + secrets + ToolRuntime.

    gateway = open_gateway(upstream="sandbox", profile="chat", home=Path("~/.kopa").expanduser())
    result = await gateway.runtime.call("search_school_info", {"ATPT_OFCDC_SC_CODE": "T10"}, "s1")
    await gateway.aclose()

``upstream="sandbox"`` (the embedded default) builds or opens the sandbox world and talks to the
emulated platforms in-process through ``httpx.ASGITransport``: no port, no network, no keys to
configure (the sandbox's own keys are used). ``upstream="live"`` talks to the real portals with
keys from ``KOPA_KEY_<PLATFORM>`` variables or an owner-only key file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import httpx

from recorder.sandbox import (
    DEFAULT_SEED,
    KeyStore,
    World,
    create_sandbox_app,
    default_keys,
    ensure_world,
)

from .catalog import Catalog, load_catalog
from .clients import ClientSet, Limits, PlatformURLs, SecretStore
from .runtime.runtime import ToolRuntime

UPSTREAMS = ("sandbox", "live", "replay")
SANDBOX_ORIGIN = "http://sandbox"
# The in-process sandbox needs no politeness: the live portals' per-platform rate limit would
# only slow benchmarks and rollouts down. Retries and timeouts stay as for the live upstream.
SANDBOX_LIMITS = Limits(rate_per_s=1e6, burst=10**6, concurrency=64)


class GatewayConfigError(ValueError):
    """The gateway cannot be assembled as configured; the message says what to change."""


@dataclass
class Gateway:
    runtime: ToolRuntime
    clients: ClientSet
    catalog: Catalog
    upstream: str
    world: World | None = None

    async def aclose(self) -> None:
        await self.clients.aclose()
        if self.world is not None:
            self.world.close()


def open_gateway(*, upstream: str = "sandbox", profile: str = "chat", home: Path | None = None,
                 seed: int = DEFAULT_SEED, world_version: str = "v1", scale: float = 1.0,
                 key_file: Path | None = None, catalog: Catalog | None = None) -> Gateway:
    """Build the runtime for ``upstream`` (sandbox | live | replay)."""
    if upstream not in UPSTREAMS:
        raise GatewayConfigError(f"unknown upstream {upstream!r}; choose one of {', '.join(UPSTREAMS)}")
    catalog = catalog or load_catalog()
    if upstream == "replay":
        raise GatewayConfigError("--upstream replay needs a recorded cassette bundle; the recorder that makes "
                                 "them is not part of this build yet (use --upstream sandbox or live)")
    if upstream == "sandbox":
        world = World.open(ensure_world(home or Path("~/.kopa").expanduser(), seed=seed, version=world_version,
                                        scale=scale))
        keys = default_keys()
        secrets = SecretStore(keys, source="sandbox defaults")
        transport = httpx.ASGITransport(create_sandbox_app(world, KeyStore.from_mapping(keys)))
        clients = ClientSet(PlatformURLs.sandbox(SANDBOX_ORIGIN), transport=transport, secrets=secrets,
                            limits=SANDBOX_LIMITS)
        return Gateway(ToolRuntime(catalog, clients, secrets, profile), clients, catalog, upstream, world)
    secrets = SecretStore.from_file(key_file) if key_file else SecretStore.from_env()
    clients = ClientSet(PlatformURLs.live(), secrets=secrets)
    return Gateway(ToolRuntime(catalog, clients, secrets, profile), clients, catalog, upstream)
