"""Assemble a working gateway: catalog + platform clients + secrets + ToolRuntime.

    gateway = open_gateway(upstream="sandbox", sandbox=InProcessSandbox(home), profile="chat")
    result = await gateway.runtime.call("search_school_info", {"ATPT_OFCDC_SC_CODE": "T10"}, "s1")
    await gateway.aclose()

``upstream="sandbox"`` talks to an in-process upstream (the sandbox, built by the caller: the
gateway never imports it) through ``httpx.ASGITransport``: no port, no network, no keys to
configure (the upstream's own keys are used). ``upstream="live"`` talks to the real portals with
keys from ``KOPA_KEY_<PLATFORM>`` variables or an owner-only key file. Either way the
requests can go through the recorder's transport (``mode``): recorded into a cassette bundle,
or replayed from one (then no upstream is contacted at all, and none is needed).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import httpx

from public_apis import PLATFORM_IDS
from recorder import (
    Bundle,
    BundleRef,
    Capture,
    CassetteStore,
    CatalogDiff,
    CatalogMismatchError,
    Interaction,
    Mode,
    RecorderTransport,
    Recording,
    Routes,
    diff_catalogs,
)

from .catalog import Catalog, load_catalog
from .clients import ClientSet, Limits, PlatformURLs, SecretStore
from .limits import DEFAULT_LIMITS, InputLimits
from .runtime.runtime import ToolRuntime

UPSTREAMS = ("sandbox", "live", "replay")  # "replay" is short for the sandbox's URLs in recorder mode replay
MODES = tuple(str(m) for m in Mode)
SANDBOX_ORIGIN = "http://sandbox"
DEFAULT_HOME = Path("~/.kopa").expanduser()  # the appliance home when none is given (KOPA_HOME's default)
# The in-process sandbox needs no politeness: the live portals' per-platform rate limit would
# only slow benchmarks and rollouts down. Retries and timeouts stay as for the live upstream.
SANDBOX_LIMITS = Limits(rate_per_s=1e6, burst=10**6, concurrency=64)


# A strict replay sends nothing upstream, but the clients still fill each key parameter (masked in
# fingerprints either way): with no in-process upstream to lend its keys, they fill in this.
REPLAY_KEY = "replay-no-upstream"


class InProcessUpstream(Protocol):
    """An upstream served in this process over ASGI (``sandbox.InProcessSandbox`` is one)."""

    keys: Mapping[str, str]  # the keys it accepts, per platform id

    @property
    def source(self) -> str: ...  # provenance written into recordings, e.g. "sandbox@v1"

    def app(self) -> Any: ...  # the ASGI app; built on first use (a strict replay never asks)

    def transport(self) -> httpx.AsyncBaseTransport: ...  # the app as the clients' transport

    def describe(self) -> str: ...

    def close(self) -> None: ...


class GatewayConfigError(ValueError):
    """The gateway cannot be assembled as configured; the message says what to change."""


@dataclass
class Gateway:
    runtime: ToolRuntime
    clients: ClientSet
    catalog: Catalog
    upstream: str
    sandbox: InProcessUpstream | None = None  # the in-process upstream, when there is one
    mode: Mode = Mode.LIVE
    recording: Recording | None = None
    transport: RecorderTransport | None = None
    replaying: Bundle | None = None
    committed: BundleRef | None = None
    stats_file: Path | None = None  # where a replay run's hits and misses are written on close
    catalog_diff: CatalogDiff | None = None  # replay: the bundle's pinned catalog against this one (None: no pin)
    catalog_notice: str | None = None  # replay: the one line to show about the catalog (None: the same catalog)

    def commit(self, *, compress: bool = False) -> BundleRef | None:
        """Write what was recorded as a new bundle version (None when nothing was recorded).

        ``compress``: bodies zstd-compressed, for a bundle shipped in a repository.
        """
        if self.recording is None or not len(self.recording):
            return None
        self.committed = self.recording.commit(compress=compress)
        self.recording = self.recording.store.recording(self.recording.name, keys=self.recording.keys)
        return self.committed

    def add_recorded(self, exchanges: Iterable[Interaction]) -> None:
        """Add exchanges that an equivalent gateway recorded elsewhere (``open_gateway(record_into=…)``, in a worker
        process) to this gateway's recording, as if its own calls had made them.

        Raises:
            GatewayConfigError: this gateway records nothing.
        """
        if self.recording is None:
            raise GatewayConfigError(f"this gateway records nothing (recorder mode {self.mode})")
        for exchange in exchanges:
            self.recording.add(exchange)

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
            if self.sandbox is not None:
                self.sandbox.close()

    def describe_upstream(self) -> str:
        """What answers this gateway's calls: the replayed bundle, the in-process world, or the upstream's name."""
        if self.replaying is not None:
            return f"replay {self.replaying.manifest.name}@{self.replaying.manifest.version}"
        if self.sandbox is not None:
            return self.sandbox.describe()
        return self.upstream


def open_gateway(*, upstream: str = "sandbox", sandbox: InProcessUpstream | None = None, profile: str = "chat",
                 home: Path | None = None, key_file: Path | None = None, catalog: Catalog | None = None, mode: str = "live",
                 cassettes: Path | None = None, bundle: str | None = None, inherit: bool = True,
                 stats_file: Path | None = None, record_stamp: str | None = None,
                 input_limits: InputLimits = DEFAULT_LIMITS, resume_recording: bool = False,
                 strict_catalog: bool = False, record_into: Capture | None = None) -> Gateway:
    """Build the runtime for ``upstream`` (sandbox | live | replay) in recorder ``mode``.

    ``sandbox``: the in-process upstream that ``upstream="sandbox"`` talks to (required there unless
    the mode is a strict replay; the gateway closes it). ``upstream="replay"`` needs none.

    ``mode``: live (no cassettes), record and replay-or-record (into bundle name ``bundle``;
    committed by ``Gateway.commit`` or on close), replay (strictly from ``bundle``: ``NAME`` for
    its head, ``NAME@VERSION``, or a version folder). ``cassettes`` defaults to ``home/cassettes``.
    ``stats_file``: a replay run's hits and misses are written there on close
    (``kopa cassettes coverage REF --run FILE`` reports them). ``record_stamp``: a fixed ``recorded_at``
    (and zero timings) for what is recorded, so a deterministic upstream records the same bundle version twice.
    ``input_limits``: the input limits the runtime enforces on every call (``mcp_gateway.limits``).
    ``resume_recording``: continue the bundle's interrupted recording, if a crash left one (record modes).
    ``record_into``: record mode into this in-memory capture instead of a bundle (no ``bundle`` or cassettes; what
    it keeps is for another process's recording gateway to add: ``Gateway.add_recorded``).

    A recording pins ``catalog`` in the version it seals; a replay compares the bundle's pinned catalog with
    ``catalog``: the gateway's ``catalog_notice`` then says what differs (or that the bundle pins none), for the
    caller to show once. ``strict_catalog``: a difference refuses to open instead.

    Raises:
        GatewayConfigError: an unknown upstream or mode, or a mode without its bundle or upstream.
        CatalogMismatchError: ``strict_catalog`` and the replayed bundle pins another catalog.
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
    if record_into is not None and mode_ is not Mode.RECORD:
        raise GatewayConfigError(f"record_into records; it needs recorder mode record, not {mode}")
    if mode_ is not Mode.LIVE and not bundle and record_into is None:
        raise GatewayConfigError(f"recorder mode {mode} needs a cassette bundle name (--bundle NAME)")
    home = home or DEFAULT_HOME
    store = CassetteStore(cassettes or home / "cassettes")
    catalog = catalog or load_catalog()
    if upstream == "sandbox":
        if sandbox is None and mode_ is not Mode.REPLAY:
            raise GatewayConfigError("upstream 'sandbox' needs an in-process upstream (sandbox=InProcessSandbox(...)); "
                                     "only a strict replay runs without one")
        keys = dict(sandbox.keys) if sandbox is not None else dict.fromkeys(PLATFORM_IDS, REPLAY_KEY)
        secrets = SecretStore(keys, source="sandbox defaults" if sandbox is not None else "replay placeholders")
        urls = PlatformURLs.sandbox(SANDBOX_ORIGIN)
        inner: httpx.AsyncBaseTransport | None = None
        if mode_ is not Mode.REPLAY:  # replay alone needs no world
            assert sandbox is not None
            inner = sandbox.transport()
        limits, source = SANDBOX_LIMITS, sandbox.source if sandbox is not None else "sandbox"
    else:
        secrets = SecretStore.from_file(key_file) if key_file else SecretStore.from_env()
        urls, inner, limits, source = PlatformURLs.live(), None, None, "live"
    transport, recording, replaying = inner, None, None
    if record_into is not None:
        transport = RecorderTransport(mode_, routes=Routes.from_bases(urls.bases), inner=inner, recording=record_into,
                                      source=source)
    elif mode_ is not Mode.LIVE:
        assert bundle is not None
        name = bundle.split("@")[0]
        if mode_ is Mode.REPLAY or (mode_ is Mode.REPLAY_OR_RECORD and store.head(name)):
            replaying = store.open(bundle)
        elif mode_ is Mode.REPLAY_OR_RECORD:
            mode_ = Mode.RECORD  # nothing recorded yet under this name: everything is a miss
        if mode_.records:
            recording = store.recording(name, inherit=inherit, keys={p: secrets.key(p) for p in secrets.platforms()},
                                        stamp=record_stamp, resume=resume_recording, catalog=catalog.pin())
        transport = RecorderTransport(mode_, routes=Routes.from_bases(urls.bases), inner=inner,
                                      recording=recording, replay=replaying, source=source)
    try:
        catalog_diff, catalog_notice = check_catalog(replaying, catalog, strict=strict_catalog)
    except CatalogMismatchError:
        if recording is not None:
            recording.close()
        if sandbox is not None:
            sandbox.close()
        raise
    clients = ClientSet(urls, transport=transport, secrets=secrets, limits=limits)
    return Gateway(ToolRuntime(catalog, clients, secrets, profile, limits=input_limits), clients, catalog, upstream,
                   sandbox, mode_,
                   recording, transport if isinstance(transport, RecorderTransport) else None, replaying,
                   stats_file=stats_file, catalog_diff=catalog_diff, catalog_notice=catalog_notice)


def check_catalog(bundle: Bundle | None, catalog: Catalog, *, strict: bool = False) -> tuple[CatalogDiff | None,
                                                                                               str | None]:
    """The replayed ``bundle``'s pinned catalog against ``catalog``: the difference (None when the bundle pins none)
    and the notice to show (None when they are the same).

    Raises:
        CatalogMismatchError: ``strict`` and the catalogs differ (the message names every change).
    """
    if bundle is None:
        return None, None
    ref = f"{bundle.manifest.name}@{bundle.manifest.version}"
    pinned = bundle.catalog_pin()
    if pinned is None:
        return None, (f"bundle {ref} pins no tool catalog (recorded before catalogs were pinned): replayed as "
                      f"before, against this gateway's catalog {catalog.version}, unchecked")
    diff = diff_catalogs(pinned, catalog.pin())
    if not diff:
        return diff, None
    if strict:
        raise CatalogMismatchError(diff.message(ref).replace(
            "(--strict-catalog refuses to start on a difference)", "(refused: --strict-catalog)"))
    return diff, diff.message(ref)
