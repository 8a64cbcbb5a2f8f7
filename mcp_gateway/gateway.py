"""Assemble a working gateway: catalog + platform clients + secrets + ToolRuntime.

    gateway = open_gateway(upstream="sandbox", profile="chat", home=Path("~/.kopa").expanduser())
    result = await gateway.runtime.call("search_school_info", {"ATPT_OFCDC_SC_CODE": "T10"}, "s1")
    await gateway.aclose()

``upstream="sandbox"`` (the embedded default) builds or opens the sandbox world and talks to the
emulated platforms in-process through ``httpx.ASGITransport``: no port, no network, no keys to
configure (the sandbox's own keys are used). ``upstream="live"`` talks to the real portals with
keys from ``KOPA_KEY_<PLATFORM>`` variables or an owner-only key file. Either way the
requests can go through the recorder's transport (``mode``): recorded into a cassette bundle,
or replayed from one (then no upstream is contacted at all).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import httpx

from recorder import Bundle, BundleRef, CassetteStore, Mode, RecorderTransport, Recording, Routes
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

UPSTREAMS = ("sandbox", "live", "replay")  # "replay" is short for the sandbox's URLs in recorder mode replay
MODES = tuple(str(m) for m in Mode)
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
    mode: Mode = Mode.LIVE
    recording: Recording | None = None
    transport: RecorderTransport | None = None
    replaying: Bundle | None = None
    committed: BundleRef | None = None
    stats_file: Path | None = None  # where a replay run's hits and misses are written on close

    def commit(self, *, compress: bool = False) -> BundleRef | None:
        """Write what was recorded as a new bundle version (None when nothing was recorded).

        ``compress``: bodies zstd-compressed, for a bundle shipped in a repository.
        """
        if self.recording is None or not len(self.recording):
            return None
        self.committed = self.recording.commit(compress=compress)
        self.recording = self.recording.store.recording(self.recording.name, keys=self.recording.keys)
        return self.committed

    async def __aenter__(self) -> Gateway:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Commit what was recorded (a key found in it refuses the bundle), then close the clients."""
        try:
            self.commit()
            if self.stats_file is not None and self.transport is not None and self.mode.replays:
                self.stats_file.parent.mkdir(parents=True, exist_ok=True)
                self.stats_file.write_text(json.dumps(self.transport.stats.as_json(), indent=1), encoding="utf-8")
        finally:
            await self.clients.aclose()
            if self.world is not None:
                self.world.close()


def open_gateway(*, upstream: str = "sandbox", profile: str = "chat", home: Path | None = None,
                 seed: int = DEFAULT_SEED, world_version: str = "v1", scale: float = 1.0,
                 key_file: Path | None = None, catalog: Catalog | None = None, mode: str = "live",
                 cassettes: Path | None = None, bundle: str | None = None, inherit: bool = True,
                 stats_file: Path | None = None) -> Gateway:
    """Build the runtime for ``upstream`` (sandbox | live | replay) in recorder ``mode``.

    ``mode``: live (no cassettes), record and replay-or-record (into bundle name ``bundle``;
    committed by ``Gateway.commit`` or on close), replay (strictly from ``bundle``: ``NAME`` for
    its head, ``NAME@VERSION``, or a version folder). ``cassettes`` defaults to ``home/cassettes``.
    ``stats_file``: a replay run's hits and misses are written there on close
    (``kopa cassettes coverage REF --run FILE`` reports them).
    """
    if upstream not in UPSTREAMS:
        raise GatewayConfigError(f"unknown upstream {upstream!r}; choose one of {', '.join(UPSTREAMS)}")
    if mode not in MODES:
        raise GatewayConfigError(f"unknown recorder mode {mode!r}; choose one of {', '.join(MODES)}")
    if upstream == "replay":
        upstream, mode = "sandbox", "replay" if mode == "live" else mode
        if mode != "replay":
            raise GatewayConfigError("--upstream replay means recorder mode replay; it cannot record")
    mode_ = Mode(mode)
    if mode_ is not Mode.LIVE and not bundle:
        raise GatewayConfigError(f"recorder mode {mode} needs a cassette bundle name (--bundle NAME)")
    home = home or Path("~/.kopa").expanduser()
    store = CassetteStore(cassettes or home / "cassettes")
    catalog = catalog or load_catalog()
    world = None
    if upstream == "sandbox":
        keys = default_keys()
        secrets = SecretStore(keys, source="sandbox defaults")
        urls = PlatformURLs.sandbox(SANDBOX_ORIGIN)
        inner: httpx.AsyncBaseTransport | None = None
        if mode_ is not Mode.REPLAY:  # replay alone needs no world
            world = World.open(ensure_world(home, seed=seed, version=world_version, scale=scale))
            inner = httpx.ASGITransport(create_sandbox_app(world, KeyStore.from_mapping(keys)))
        limits, source = SANDBOX_LIMITS, f"sandbox@{world_version}"
    else:
        secrets = SecretStore.from_file(key_file) if key_file else SecretStore.from_env()
        urls, inner, limits, source = PlatformURLs.live(), None, None, "live"
    transport, recording, replaying = inner, None, None
    if mode_ is not Mode.LIVE:
        assert bundle is not None
        name = bundle.split("@")[0]
        if mode_ is Mode.REPLAY or (mode_ is Mode.REPLAY_OR_RECORD and store.head(name)):
            replaying = store.open(bundle)
        elif mode_ is Mode.REPLAY_OR_RECORD:
            mode_ = Mode.RECORD  # nothing recorded yet under this name: everything is a miss
        if mode_.records:
            recording = store.recording(name, inherit=inherit, keys={p: secrets.key(p) for p in secrets.platforms()})
        transport = RecorderTransport(mode_, routes=Routes.from_bases(urls.bases), inner=inner,
                                      recording=recording, replay=replaying, source=source)
    clients = ClientSet(urls, transport=transport, secrets=secrets, limits=limits)
    return Gateway(ToolRuntime(catalog, clients, secrets, profile), clients, catalog, upstream, world, mode_,
                   recording, transport if isinstance(transport, RecorderTransport) else None, replaying,
                   stats_file=stats_file)
