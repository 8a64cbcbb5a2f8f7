"""A pytest plugin (registered as ``kopa`` through the ``pytest11`` entry point): replay a bundle in a test.

    @pytest.mark.asyncio
    @pytest.mark.kopa_bundle("kopa-default@3301bc57787fc3653bb4")
    async def test_agent(kopa_replay):
        result = await kopa_replay.client.call_tool("search_laws", {"query": "법"})   # an MCP client, connected
        my_agent(url=kopa_replay.url, token=kopa_replay.token)                       # or the agent's own client

``kopa_replay`` starts a strict-replay gateway for the bundle the test's ``kopa_bundle`` marker names (``NAME``,
``NAME@VERSION``, a unique version prefix will do) on a free loopback port, in this process, and yields its URL,
its bearer token and an MCP client (the official SDK's ``Client``; ``.session`` is its ``ClientSession``)
connected to it. The gateway is torn down after the test. A call the bundle has no answer for fails the test,
naming the tool and its arguments (the agent saw it as a tool error, as in any strict replay). The bundle must
pin the catalog the gateway runs (a bundle recorded before catalogs were pinned replays unchecked).
``kopa_gateway`` is the same gateway without the client (a synchronous fixture).

Options:
    --kopa-cassettes DIR     where bundles are (default: <KOPA_HOME>/cassettes if it has the bundle's name, else
                             the cassettes shipped with the appliance)
    --kopa-record-misses     record what the bundle misses from the sandbox upstream (as `kopa serve --mode
                             replay-or-record` does) into a new version of the bundle's name, instead of failing
                             (not into the cassettes shipped with the appliance: give --kopa-cassettes a copy)

Async tests and ``kopa_replay`` need pytest-asyncio (the appliance's dev set has it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

MARKER = "kopa_bundle"
_MISSES = pytest.StashKey[list[str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kopa", "KOPA appliance: replayed cassette bundles")
    group.addoption("--kopa-cassettes", type=Path, default=None, metavar="DIR",
                    help="cassettes folder holding the bundles that kopa_bundle markers name")
    group.addoption("--kopa-record-misses", action="store_true", default=False,
                    help="record replay misses from the sandbox upstream into a new bundle version (no failure)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}(ref): the cassette bundle (NAME or NAME@VERSION) that the "
                                       "kopa_replay / kopa_gateway fixtures replay")


@dataclass
class KopaGateway:
    """A gateway replaying one bundle on a loopback port."""

    url: str  # the MCP endpoint, http://127.0.0.1:PORT/mcp
    token: str  # its bearer token
    bundle: str  # NAME@VERSION replayed
    misses: list[str] = field(default_factory=list)  # "tool(args): why", one per missed call
    recorded_into: str | None = None  # with --kopa-record-misses: the version the misses went into, once torn down

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@dataclass
class KopaReplay(KopaGateway):
    """``KopaGateway`` plus a connected MCP client."""

    client: Any = None  # mcp.Client
    session: Any = None  # mcp.ClientSession (client.session)


class _MissWatch:
    """The runtime as the server sees it, noting every call answered with a replay miss."""

    def __init__(self, runtime: Any, misses: list[str]):
        self._runtime, self._misses = runtime, misses

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runtime, name)

    async def call(self, tool: str, args: dict[str, Any], session_id: str) -> Any:
        from mcp_gateway.runtime.result import Outcome

        result = await self._runtime.call(tool, args, session_id)
        if result.outcome is Outcome.REPLAY_MISS:
            shown = json.dumps(args, ensure_ascii=False, sort_keys=True)
            self._misses.append(f"{tool}({shown}): {result.message or 'replay miss'}")
        return result


def _bundle_ref(request: pytest.FixtureRequest) -> str:
    marker = request.node.get_closest_marker(MARKER)
    if marker is None or len(marker.args) != 1 or not isinstance(marker.args[0], str):
        raise pytest.UsageError(f"{request.node.nodeid}: the kopa_replay / kopa_gateway fixtures need "
                                f'@pytest.mark.{MARKER}("NAME@VERSION") naming the bundle to replay')
    return marker.args[0]


@contextlib.contextmanager
def serve_bundle(ref: str, *, cassettes: Path | None = None, record_misses: bool = False) -> Iterator[KopaGateway]:
    """Serve bundle ``ref`` (strict replay; ``record_misses``: misses recorded from the sandbox) on a free loopback
    port until the block ends; the gateway, its server thread and its port are gone when it returns.

    Raises:
        LookupError: no such bundle in the cassettes folder.
        ValueError: ``record_misses`` where the bundle is one shipped with the appliance (its folder is not written).
        recorder.CatalogMismatchError: the bundle pins another tool catalog than the one installed.
    """
    import uvicorn

    from bench.taskset.build import DEFAULT_CASSETTES
    from mcp_gateway.gateway import open_gateway
    from mcp_gateway.server import create_gateway_app, default_toolsets

    from .bench_cli import bundle_folder
    from .config import KopaSettings
    from .sandbox_service import in_process_sandbox

    settings = KopaSettings()
    folder = bundle_folder(settings, ref, cassettes)
    if record_misses and folder.resolve() == DEFAULT_CASSETTES.resolve():
        raise ValueError(f"--kopa-record-misses would record into the cassettes shipped with the appliance "
                         f"({DEFAULT_CASSETTES}), where {ref} was found: copy the bundle's folder into a cassettes "
                         f"folder of your own and pass it with --kopa-cassettes DIR (or into {settings.cassettes_dir})")
    if record_misses:
        opened = open_gateway(upstream="sandbox", sandbox=in_process_sandbox(settings), mode="replay-or-record",
                              bundle=ref, home=settings.home_dir, cassettes=folder, strict_catalog=True)
    else:
        opened = open_gateway(upstream="replay", mode="replay", bundle=ref, home=settings.home_dir, cassettes=folder,
                              strict_catalog=True)
    replaying = opened.replaying
    name = f"{replaying.manifest.name}@{replaying.version}" if replaying is not None else ref
    token = secrets.token_urlsafe(16)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    gateway = KopaGateway(url=f"http://127.0.0.1:{port}/mcp", token=token, bundle=name)
    runtime = _MissWatch(opened.runtime, gateway.misses)
    app = create_gateway_app(runtime, tokens={token}, toolsets=default_toolsets(opened.catalog),
                             resources=[opened])  # the lifespan closes the gateway (and commits a recording)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name=f"kopa-replay-{port}", daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError(f"the replay gateway for {name} did not start (see the log above)")
            threading.Event().wait(0.02)
        yield gateway
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
        if opened.committed is not None:
            gateway.recorded_into = f"{opened.committed.name}@{opened.committed.version}"


def _options(config: pytest.Config) -> dict[str, Any]:
    return {"cassettes": config.getoption("kopa_cassettes"), "record_misses": config.getoption("kopa_record_misses")}


@pytest.fixture
def kopa_gateway(request: pytest.FixtureRequest) -> Iterator[KopaGateway]:
    """A strict-replay gateway for the test's ``kopa_bundle``: URL and token (no client)."""
    with serve_bundle(_bundle_ref(request), **_options(request.config)) as gateway:
        request.node.stash[_MISSES] = gateway.misses
        yield gateway
    _report_recording(request, gateway)


def _report_recording(request: pytest.FixtureRequest, gateway: KopaGateway) -> None:
    if gateway.recorded_into:
        reporter = request.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"kopa: the misses of {gateway.bundle} were recorded into {gateway.recorded_into}")


@contextlib.asynccontextmanager
async def connected(gateway: KopaGateway) -> AsyncIterator[Any]:
    """An MCP client (official SDK) connected to ``gateway`` over streamable HTTP; its output-schema check is the
    SDK's, with the gateway's plain schemas compiled in front (``mcp_gateway.clients.mcp_output``: the same
    checks and errors, a 1,000-record page checked in milliseconds instead of ~100 ms)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from mcp_gateway.clients.mcp_output import fast_output_checks

    async with (httpx2.AsyncClient(headers=gateway.headers, timeout=60) as http,
                Client(streamable_http_client(gateway.url, http_client=http)) as client):
        fast_output_checks(client.session)
        yield client


try:
    import pytest_asyncio
except ImportError:  # pragma: no cover - the dev set has it
    pytest_asyncio = None


async def _replay(request: pytest.FixtureRequest) -> AsyncIterator[KopaReplay]:
    # the server runs in its own thread (and loop), started off this loop: its start-up loads the catalog
    stack = contextlib.ExitStack()
    gateway = await asyncio.to_thread(stack.enter_context,
                                      serve_bundle(_bundle_ref(request), **_options(request.config)))
    try:
        request.node.stash[_MISSES] = gateway.misses
        # pytest-asyncio sets a fixture up and tears it down in different tasks; the client's cancel scopes must
        # open and close in one: a task of its own holds the client while the test uses it
        ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        stop = asyncio.Event()
        holder = asyncio.create_task(_hold_client(gateway, ready, stop))
        try:
            client = await ready
            yield KopaReplay(url=gateway.url, token=gateway.token, bundle=gateway.bundle, misses=gateway.misses,
                             client=client, session=client.session)
        finally:
            stop.set()
            await holder
    finally:
        await asyncio.to_thread(stack.close)
    _report_recording(request, gateway)


async def _hold_client(gateway: KopaGateway, ready: asyncio.Future[Any], stop: asyncio.Event) -> None:
    try:
        async with connected(gateway) as client:
            ready.set_result(client)
            await stop.wait()
    except BaseException as exc:
        if ready.done():
            raise
        ready.set_exception(exc)


if pytest_asyncio is not None:
    kopa_replay = pytest_asyncio.fixture(_replay, name="kopa_replay")
else:  # pragma: no cover
    @pytest.fixture(name="kopa_replay")
    def _no_asyncio() -> None:
        raise pytest.UsageError("the kopa_replay fixture needs pytest-asyncio (pip install pytest-asyncio)")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A call the replayed bundle has no answer for fails the test that made it, naming the call (also when the
    test failed first, on the tool error the miss answered with: its failure then carries the same note)."""
    try:
        result = yield
    except Exception as exc:  # the test failed (pytest's skip/xfail/fail outcomes are not Exceptions: left as they are)
        if (message := _miss_message(item)) is not None:
            exc.add_note(message)
        raise
    if (message := _miss_message(item)) is not None:
        pytest.fail(message, pytrace=False)
    return result


def _miss_message(item: pytest.Item) -> str | None:
    misses = item.stash.get(_MISSES, None)
    if not misses or item.config.getoption("kopa_record_misses"):
        return None
    shown = "\n  ".join(misses)
    return (f"{len(misses)} call(s) missed the replayed bundle (strict replay):\n  {shown}\n"
            f"record them with --kopa-record-misses, or fix the call")
