"""Start-up of the sandbox upstream as a service, and its self-check over loopback HTTP."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import httpx
import uvicorn

from sandbox import FaultProfile, InProcessSandbox, KeyStore, World, create_sandbox_app
from sandbox.asgi import worker_environment
from sandbox.loopback import LoopbackServer
from sandbox.probes import PROBES, read_outcome

from .config import KopaSettings
from .metadb import SandboxSession, WorldBuild, close_session, open_metadb, record


def in_process_sandbox(settings: KopaSettings, *, memo_bytes: int = 0) -> InProcessSandbox:
    """The configured world as an in-process upstream (for the gateway, ``kopa record``, bench runs); ``memo_bytes``
    for a caller that repeats requests (``sandbox.memo``)."""
    return InProcessSandbox(settings.home_dir, seed=settings.sandbox.seed, version=settings.sandbox.world,
                            scale=settings.sandbox.scale, memo_bytes=memo_bytes)


class SandboxService:
    """The sandbox app under uvicorn, with its runs recorded in the metadata DB."""

    def __init__(self, settings: KopaSettings, world: World, keys: KeyStore, faults: FaultProfile):
        self.settings, self.world, self.keys, self.faults = settings, world, keys, faults
        self.app = create_sandbox_app(world, keys, faults)

    def run_forever(self, workers: int = 1) -> None:
        engine = open_metadb(self.settings.metadb_url)
        record(engine, WorldBuild(version=self.world.version, seed=self.world.seed, scale=self.world.scale,
                                  content_hash=self.world.content_hash, path=str(self.world.path)))
        session = record(engine, SandboxSession(
            world_version=self.world.version, content_hash=self.world.content_hash,
            host=self.settings.sandbox.host, port=self.settings.sandbox.port, faults=self.settings.sandbox.faults))
        try:
            if workers == 1:
                uvicorn.run(self.app, host=self.settings.sandbox.host, port=self.settings.sandbox.port,
                            log_level="warning", lifespan="off")
            else:
                # Worker processes rebuild the app from the environment (keys stay in memory/env only).
                os.environ.update(worker_environment(self.world, self.keys, self.faults))
                uvicorn.run("sandbox.asgi:app_from_env", factory=True, workers=workers,
                            host=self.settings.sandbox.host, port=self.settings.sandbox.port,
                            log_level="warning", lifespan="off")
        finally:
            close_session(engine, session.id)


@dataclass
class ProbeResult:
    platform: str
    path: str
    status: int
    code: str
    records: int
    total: int | None
    ms: float
    ok: bool


def probe_platforms(world: World, keys: KeyStore) -> list[ProbeResult]:
    """Call one representative request per platform over real HTTP and read its outcome."""
    results = []
    with LoopbackServer(create_sandbox_app(world, keys)) as srv, \
            httpx.Client(base_url=srv.origin, timeout=30, headers={"User-Agent": "kopa-check"}) as client:
        for probe in PROBES:
            started = time.perf_counter()
            response = client.get(probe.path(keys), params=probe.params(keys))
            ms = (time.perf_counter() - started) * 1000
            outcome = read_outcome(probe, response)
            # The template, not the filled path: Seoul puts its key in the path, and keys are never printed.
            results.append(ProbeResult(probe.platform, probe.path_template.replace("{key}", "{KEY}"),
                                       response.status_code, outcome.code, outcome.records, outcome.total, ms,
                                       outcome.ok))
    return results
