"""The `kopa` command.

    kopa sandbox info [--world v1|v2] [--json]       table sizes, platforms, keys to use
    kopa sandbox serve [--host H] [--port N] [--world v1|v2] [--faults PROFILE]
    kopa sandbox check                               one call per platform over loopback HTTP
    kopa sandbox changelog                           world v1 → v2 differences (JSON)
    kopa tools stats [--json]                        tool counts per platform and domain
    kopa serve [--upstream sandbox|live|replay] [--mode live|record|replay|replay-or-record] [--bundle REF]
               [--profile chat|bench] [--stdio] [--host H --port N] [--strict-catalog]
    kopa record …, kopa cassettes …, kopa drift …   the recorder (see cassettes_cli.py)
    kopa bench run --agent A --tasks FILE …          KOPA-Bench episodes, replayed (see bench_cli.py)
    kopa bench report RUN | compare RUN_A RUN_B | list    reports, comparisons, recorded runs
    kopa agent serve [--model PATH] | endpoint …    the tuned agent: model server, agent endpoint (agent_cli.py)
    kopa tui [--url URL] [--token T] [--[no-]start] the operator console (Textual; see tui/)

Every command reads ``KopaSettings`` (env ``KOPA_*``, ``kopa.toml``); options override it.
Bad arguments end with a one-line error naming the option and the valid values (exit 2).
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sandbox.faults import BUILTIN_PROFILES, FaultProfileError
from sandbox.versions import WORLD_VERSIONS

# these register kopa bench demo | build-tasks | stats | audit and kopa edge synth | filter | export | stats
from . import bench_demo, edge_data_cli, taskset_cli  # noqa: F401
from .agent_cli import agent_app
from .bench_cli import bench_app
from .cassettes_cli import cassettes_app
from .cassettes_cli import drift as drift_command
from .cassettes_cli import record as record_command
from .config import KopaSettings
from .edge_cli import edge_app
from .train_cli import train_app

if TYPE_CHECKING:  # the world and its server load only in the commands that use them: `kopa` starts fast
    from sandbox import KeyStore, World

app = typer.Typer(help="KOPA appliance: Korean open public APIs as MCP tools, benchmarks and training.",
                  no_args_is_help=True, pretty_exceptions_enable=False)
sandbox_app = typer.Typer(help="The sandbox upstream: a generated world behind the ten platforms' real APIs.",
                          no_args_is_help=True)
app.add_typer(sandbox_app, name="sandbox")
tools_app = typer.Typer(help="The tool catalog (>= 2,318 tools over ten platforms).", no_args_is_help=True)
app.add_typer(tools_app, name="tools")
app.add_typer(cassettes_app, name="cassettes")
app.add_typer(bench_app, name="bench")
app.add_typer(edge_app, name="edge")
app.add_typer(train_app, name="train")
app.add_typer(agent_app, name="agent")
app.command("record")(record_command)
app.command("drift")(drift_command)

console = Console()
err = Console(stderr=True, soft_wrap=True)

WorldOpt = Annotated[str | None, typer.Option("--world", help=f"world version ({' | '.join(WORLD_VERSIONS)})")]
SeedOpt = Annotated[int | None, typer.Option("--seed", help="world seed")]


class UsageError(Exception):
    """A bad option value; printed as one line, exit code 2."""


def _settings(world: str | None = None, seed: int | None = None, **sandbox: object) -> KopaSettings:
    settings = KopaSettings()
    overrides = {k: v for k, v in {"world": world, "seed": seed, **sandbox}.items() if v is not None}
    if overrides.get("world") is not None and overrides["world"] not in WORLD_VERSIONS:
        raise UsageError(f"--world {overrides['world']!r} is not a world version; choose one of "
                         f"{', '.join(WORLD_VERSIONS)}")
    if overrides:
        merged = settings.sandbox.model_dump() | overrides
        settings = settings.model_copy(update={"sandbox": type(settings.sandbox).model_validate(merged)})
    return settings


def _keystore(settings: KopaSettings) -> KeyStore:
    from sandbox import KeyStore, default_keys

    keys = default_keys() | {p: k.get_secret_value() for p, k in settings.sandbox.keys.items()}
    return KeyStore.from_mapping(keys)


def _open_world(settings: KopaSettings) -> World:
    from sandbox import World, ensure_world

    path = ensure_world(settings.home_dir, seed=settings.sandbox.seed, version=settings.sandbox.world,
                        scale=settings.sandbox.scale, log=lambda m: err.print(f"[dim]{m}[/dim]"))
    return World.open(path)


@sandbox_app.command("info")
def sandbox_info(world: WorldOpt = None, seed: SeedOpt = None,
                 as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False) -> None:
    """Build (first time) and describe the world: tables, platforms and the keys to use."""
    from sandbox import platform_specs

    settings = _settings(world, seed)
    w = _open_world(settings)
    keys = _keystore(settings)
    origin = f"http://{settings.sandbox.host}:{settings.sandbox.port}"
    platforms = [{"id": s.id, "title": s.title, "domain": s.domain, "live_base_url": s.live_base_url,
                  "sandbox_base_url": s.sandbox_base_url(origin), "key_param": s.key_param,
                  "key": keys.first(s.id)} for s in platform_specs()]
    sizes = w.table_sizes()
    if as_json:
        print(json.dumps({"world": {"version": w.version, "seed": w.seed, "scale": w.scale,
                                    "content_hash": w.content_hash, "path": str(w.path)},
                          "tables": sizes, "platforms": platforms}, ensure_ascii=False, indent=2))
        return
    console.print(f"[bold]world[/bold] {w.version}  seed {w.seed}  scale {w.scale:g}  "
                  f"hash {w.content_hash[:16]}  {w.path}")
    tables = Table("table", "rows", title=f"{len(sizes)} tables, {sum(sizes.values()):,} rows")
    for name, rows in sizes.items():
        tables.add_row(name, f"{rows:,}")
    console.print(tables)
    plat = Table("platform", "domain", "sandbox base URL", "key parameter", "sandbox key", title="platforms")
    for p in platforms:
        plat.add_row(p["id"], p["domain"], p["sandbox_base_url"], p["key_param"], p["key"])
    console.print(plat)


@sandbox_app.command("serve")
def sandbox_serve(
    host: Annotated[str | None, typer.Option(help="interface to listen on")] = None,
    port: Annotated[int | None, typer.Option(help="TCP port", min=1, max=65535)] = None,
    world: WorldOpt = None, seed: SeedOpt = None,
    faults: Annotated[str | None, typer.Option(
        help=f"fault profile: {', '.join(BUILTIN_PROFILES)}, or a JSON file")] = None,
    workers: Annotated[int, typer.Option(help="worker processes (one per core serves the most)", min=1, max=64)] = 1,
) -> None:
    """Serve the ten emulated platforms on HOST:PORT until interrupted."""
    from sandbox import load_profile

    from .sandbox_service import SandboxService

    settings = _settings(world, seed, host=host, port=port, faults=faults)
    try:
        profile = load_profile(settings.sandbox.faults)
    except FaultProfileError as exc:
        raise UsageError(f"--faults: {exc}") from exc
    service = SandboxService(settings, _open_world(settings), _keystore(settings), profile)
    err.print(f"sandbox world {service.world.version} on http://{settings.sandbox.host}:{settings.sandbox.port} "
              f"(faults: {settings.sandbox.faults}); Ctrl-C stops")
    service.run_forever(workers)


@sandbox_app.command("check")
def sandbox_check(world: WorldOpt = None, seed: SeedOpt = None) -> None:
    """Serve the sandbox on a free loopback port and call every platform once over HTTP."""
    from .sandbox_service import probe_platforms

    settings = _settings(world, seed)
    results = probe_platforms(_open_world(settings), _keystore(settings))
    table = Table("platform", "request", "HTTP", "result code", "records", "total", "ms", title="sandbox check")
    for r in results:
        table.add_row(r.platform, r.path, str(r.status), r.code, str(r.records), str(r.total), f"{r.ms:.1f}")
    console.print(table)
    failed = [r for r in results if not r.ok]
    if failed:
        raise UsageError(f"{len(failed)} platform(s) failed the check: {', '.join(r.platform for r in failed)}")


@sandbox_app.command("changelog")
def sandbox_changelog(seed: SeedOpt = None) -> None:
    """Print world v2's changelog against v1 (JSON, one item per difference)."""
    settings = _settings("v2", seed)
    print(json.dumps(_open_world(settings).changelog(), ensure_ascii=False, indent=2))


@tools_app.command("stats")
def tools_stats(as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False) -> None:
    """Tool counts per platform and per domain."""
    from mcp_gateway.catalog import load_catalog

    stats = load_catalog().stats()
    if as_json:
        print(json.dumps(stats, ensure_ascii=False, indent=2))
        return
    for title, counts in (("platform", stats["by_platform"]), ("domain", stats["by_domain"])):
        table = Table(title, "tools", title=f"tools per {title}")
        for name, n in counts.items():
            table.add_row(name, f"{n:,}")
        console.print(table)
    console.print(f"[bold]{stats['total']:,}[/bold] tools")


@app.command("serve")
def serve(
    upstream: Annotated[str | None, typer.Option(help="sandbox (embedded default) | live | replay")] = None,
    mode: Annotated[str | None, typer.Option(help="recorder mode: live | record | replay | replay-or-record")] = None,
    bundle: Annotated[str | None, typer.Option(help="cassette bundle NAME[@VERSION] to record into or replay from")]
    = None,
    profile: Annotated[str | None, typer.Option(help="chat (keys injected) | bench (episode key tokens)")] = None,
    stdio: Annotated[bool, typer.Option("--stdio", help="serve MCP over stdin/stdout instead of HTTP")] = False,
    host: Annotated[str | None, typer.Option(help="interface to listen on")] = None,
    port: Annotated[int | None, typer.Option(help="TCP port", min=1, max=65535)] = None,
    strict_catalog: Annotated[bool | None, typer.Option(
        "--strict-catalog", help="replay: refuse to start when the bundle pins another tool catalog (exit 2)")]
    = None,
) -> None:
    """Serve every tool over MCP (streamable HTTP at /mcp, virtual servers at /mcp/<set>, or stdio)."""
    from mcp_gateway.gateway import UPSTREAMS

    settings = KopaSettings()
    overrides = {k: v for k, v in {"upstream": upstream, "profile": profile, "host": host, "port": port}.items()
                 if v is not None}
    gateway = settings.gateway.model_copy(update=overrides)
    recorder = settings.recorder.model_copy(update={k: v for k, v in {"mode": mode, "bundle": bundle,
                                                                      "strict_catalog": strict_catalog}.items()
                                                    if v is not None})
    # Options are checked before the server stack is imported (~2 s): a mistake is answered at once.
    if gateway.upstream not in UPSTREAMS:
        raise UsageError(f"unknown upstream {gateway.upstream!r}; choose one of {', '.join(UPSTREAMS)}")
    if gateway.profile not in ("chat", "bench"):
        raise UsageError(f"--profile {gateway.profile!r} is not a profile; choose chat or bench")
    if recorder.mode not in ("live", "record", "replay", "replay-or-record"):
        raise UsageError(f"--mode {recorder.mode!r}: choose live, record, replay or replay-or-record")
    if gateway.upstream == "replay" and recorder.mode == "live":
        recorder = recorder.model_copy(update={"mode": "replay"})
    if bundle is not None and recorder.mode == "live":
        raise UsageError("--bundle names a cassette bundle: it goes with --mode record|replay|replay-or-record "
                         "(or --upstream replay)")
    if recorder.mode != "live" and not recorder.bundle:
        raise UsageError(f"recorder mode {recorder.mode} needs --bundle NAME[@VERSION]")
    from .gateway_service import serve_gateway

    serve_gateway(settings, gateway, recorder, stdio=stdio, log=lambda m: err.print(m))


@app.command("tui")
def tui_command(
    url: Annotated[str | None, typer.Option(help="gateway origin to attach to, e.g. http://127.0.0.1:8765 "
                                                  "(default: the configured gateway host and port)")] = None,
    token: Annotated[str | None, typer.Option(envvar="KOPA_TUI_TOKEN", show_default=False,
                                              help="bearer token of that gateway (env KOPA_TUI_TOKEN; default: the "
                                                   "first of KOPA_GATEWAY__TOKENS)")] = None,
    start: Annotated[bool | None, typer.Option(
        "--start/--no-start", show_default=False,
        help="when nothing answers at URL: --start starts the in-process gateway over the sandbox, --no-start keeps "
             "retrying URL; neither: ask when --url was given, else start it")] = None,
) -> None:
    """The operator console: gateway, cassettes and drift, benchmark runs, EDGE and training jobs (Textual)."""
    from tui.cli import run_console  # lazily: Textual loads only for this command

    run_console(KopaSettings(), url=url, token=token, start=start)


def _error_text(exc: BaseException) -> str:
    """What went wrong, as the operator can act on it: a bad setting is named by its key, without pydantic's
    links and echo of the input."""
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError):
        return str(exc)
    return "\n".join(f"{'.'.join(map(str, e['loc'])) or 'settings'}: {e['msg'].removeprefix('Value error, ')}"
                     for e in exc.errors())


def main() -> None:
    try:
        app()
    except (UsageError, FaultProfileError, ValueError, LookupError, OSError, RuntimeError) as exc:
        err.print(f"[red]error:[/red] {escape(_error_text(exc))}")  # as written: NAME[@VERSION] is no markup
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
