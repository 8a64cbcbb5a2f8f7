"""`kopa record`, `kopa cassettes …` and `kopa drift`: the recorder's commands.

    kopa record (--calls FILE | --tasks FILE) [--bundle NAME] [--upstream sandbox|live]
                [--platform P]... [--tool T]... [--fresh]
    kopa cassettes list | show REF | verify REF [--public-key K]
    kopa cassettes recover [NAME] [--seal | --discard]
    kopa cassettes export REF --vcr OUT [--origin live|URL] | import PATH [--name N] [--public-key K]
    kopa cassettes query "SQL" [--bundle REF]... | coverage REF [--run STATS.json]
    kopa cassettes keygen PRIVATE PUBLIC | sign REF --key PRIVATE
    kopa drift OLD NEW [--json] [--out FILE] | kopa drift --live-sample N BUNDLE

REF is ``NAME`` (its HEAD), ``NAME@VERSION`` (a unique prefix will do) or a version folder.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from .config import KopaSettings

if TYPE_CHECKING:
    from recorder import CassetteStore

cassettes_app = typer.Typer(help="Cassette bundles: list, inspect, verify, sign, export/import, query.",
                            no_args_is_help=True)
console = Console()
err = Console(stderr=True, soft_wrap=True)

RefArg = Annotated[str, typer.Argument(help="NAME, NAME@VERSION or a bundle version folder")]


def _store(settings: KopaSettings | None = None) -> CassetteStore:
    from recorder import CassetteStore

    return CassetteStore((settings or KopaSettings()).cassettes_dir)


def record(
    calls: Annotated[Path | None, typer.Option(help="JSON/JSONL of {tool, args} calls to record")] = None,
    tasks: Annotated[Path | None, typer.Option(help="task set (JSON/JSONL) whose golden actions are recorded")] = None,
    bundle: Annotated[str, typer.Option(help="bundle name to record into (a new version)")] = "default",
    upstream: Annotated[str, typer.Option(help="sandbox (embedded default) | live")] = "sandbox",
    platform: Annotated[list[str] | None, typer.Option(help="only calls to this platform (repeatable)")] = None,
    tool: Annotated[list[str] | None, typer.Option(help="only calls of this tool (repeatable)")] = None,
    fresh: Annotated[bool, typer.Option("--fresh", help="do not carry the previous version's interactions over")]
    = False,
) -> None:
    """Record tool calls through the gateway into a new version of a cassette bundle."""
    from mcp_gateway.catalog import load_catalog

    from .record_service import load_calls, load_task_calls, record_calls, select

    if (calls is None) == (tasks is None):
        raise typer.BadParameter("give exactly one of --calls FILE or --tasks FILE")
    if upstream not in ("sandbox", "live"):
        raise typer.BadParameter(f"--upstream {upstream!r}: choose sandbox or live")
    settings = KopaSettings()
    loaded = load_calls(calls) if calls is not None else load_task_calls(tasks)  # type: ignore[arg-type]
    chosen = select(loaded, load_catalog(), set(platform or []), set(tool or []))
    if not chosen:
        raise typer.BadParameter("no upstream tool call is left after the filters")
    err.print(f"recording {len(chosen)} call(s) from {upstream} into bundle {bundle!r} …")
    run = asyncio.run(record_calls(settings, chosen, bundle=bundle, upstream=upstream, inherit=not fresh,
                                   progress=lambda c, o: err.print(f"  {c.tool}: {o}")))
    if run.resumed:
        err.print(f"resumed an interrupted recording of {bundle!r}: {run.resumed:,} exchange(s) it had journaled")
    table = Table("tool", "outcome", "total", title="calls")
    for call, outcome, total in run.results:
        table.add_row(call.tool, outcome, "" if total is None else f"{total:,}")
    console.print(table)
    if run.ref is None:
        console.print("nothing recorded")
        return
    console.print(f"[bold]{run.ref}[/bold]: {run.recorded:,} exchanges recorded → {run.ref.folder}")


@cassettes_app.command("list")
def list_bundles(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Bundles in the cassettes folder, with their versions."""
    store = _store()
    rows = []
    for name in store.names():
        head = store.head(name)
        for m in store.versions(name):
            rows.append({"name": name, "version": m.version, "head": m.version == head, "parent": m.parent,
                         "created_at": m.created_at, "source": ", ".join(m.sources),
                         "interactions": m.counts["interactions"], "state": "sealed"})
        for j in store.unsealed(name):  # what a crash (or a running recorder) left unsealed
            rows.append({"name": name, "version": f"unsealed-{j.id}", "head": False, "parent": None,
                         "created_at": j.started_at or "", "source": "", "interactions": j.interactions,
                         "state": j.state, "torn_bytes": j.torn_bytes, "refused": j.refused, "pid": j.pid})
    if as_json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    table = Table("name", "version", "head", "state", "parent", "created", "source", "interactions",
                  title=f"cassettes in {store.root}")
    for r in rows:
        state = r["state"] if r["state"] == "sealed" else f"[yellow]{r['state']}[/yellow]"
        table.add_row(r["name"], r["version"], "●" if r["head"] else "", state, r["parent"] or "", r["created_at"],
                      r["source"], f"{r['interactions']:,}")
    console.print(table)
    if any(r["state"] in ("interrupted", "cleanup-pending") for r in rows):
        console.print("unsealed recordings: `kopa cassettes recover NAME` seals them (`--discard` drops them)")


@cassettes_app.command("recover")
def recover(name: Annotated[str | None, typer.Argument(help="bundle NAME (default: every bundle with an unsealed "
                                                              "recording)")] = None,
            seal: Annotated[bool, typer.Option("--seal", help="seal each interrupted recording as a new version "
                                                              "(the default)")] = False,
            discard: Annotated[bool, typer.Option("--discard", help="delete each interrupted recording instead")]
            = False) -> None:
    """Seal (or discard) recordings that a crash left unsealed; one running now is left alone."""
    if seal and discard:
        raise ValueError("--seal and --discard exclude each other: give one (sealing is the default)")
    store = _store()
    if name is not None and name.split("@")[0] not in store.names():
        from recorder.cassette import BundleNotFoundError, check_name

        check_name(name)
        raise BundleNotFoundError(f"no bundle named {name!r} in {store.root} (bundles: "
                                  f"{', '.join(store.names()) or 'none'})")
    names = [name] if name else sorted({j.name for j in store.unsealed()})
    outcomes = [o for n in names for o in store.recover(n, discard=discard)]
    if not outcomes:
        print(f"nothing to recover in {store.root}" + (f" for {name!r}" if name else ""))
        return
    for o in outcomes:
        what = {"sealed": f"sealed {o.interactions:,} interaction(s) as {o.name}@{o.version}",
                "discarded": f"discarded {o.interactions:,} interaction(s)",
                "in use": f"left alone ({o.interactions:,} interaction(s) so far)"}[o.action]
        print(f"{o.name} unsealed-{o.id}: {what}" + (f" — {o.detail}" if o.detail else ""))  # one line each, unwrapped
    busy = [o for o in outcomes if o.action == "in use"]
    if busy:
        raise RuntimeError(f"{len(busy)} recording(s) are still being written by a running recorder; stop it, then "
                           f"run `kopa cassettes recover` again")


@cassettes_app.command("show")
def show(ref: RefArg, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """A bundle's manifest: provenance, counts per platform and tool, part hashes."""
    bundle = _store().open(ref)
    manifest = json.loads(bundle.manifest.to_json())
    if as_json:
        print(json.dumps(manifest, ensure_ascii=False, indent=2))
        return
    console.print(f"[bold]{manifest['name']}@{manifest['version']}[/bold]  parent {manifest['parent'] or '—'}  "
                  f"created {manifest['created_at']}  source {manifest['source']}")
    for title in ("platforms", "tools", "origins"):
        table = Table(title[:-1], "interactions", title=title)
        for name, n in manifest["counts"][title].items():
            table.add_row(name, f"{n:,}")
        console.print(table)
    for name, part in manifest["parts"].items():
        console.print(f"{name}: {part['bytes']:,} bytes, sha256 {part['sha256']}")


@cassettes_app.command("verify")
def verify(ref: RefArg, public_key: Annotated[Path | None, typer.Option(help="Ed25519 public key (PEM)")] = None
           ) -> None:
    """Check every part against the manifest (and the signature, with --public-key)."""
    store = _store()
    found = store.resolve(ref)
    bundle = store.open(ref)  # hash-checks every part; raises CorruptBundleError
    if public_key is not None:
        from recorder.signing import verify_bundle_signature

        verify_bundle_signature(found.folder, public_key)
    signed = " and signature" if public_key else ""
    console.print(f"{found}: {len(bundle):,} interactions, every part{signed} verified")


@cassettes_app.command("export")
def export(ref: RefArg,
           vcr: Annotated[Path, typer.Option("--vcr", help="vcrpy YAML cassette to write")],
           origin: Annotated[str, typer.Option(help="'live' (the real hosts) or a sandbox origin URL")] = "live",
           ) -> None:
    """Write a bundle as a stock vcrpy cassette (replay it with record_mode='none' and
    before_record_request=recorder.vcr.mask_secrets_for_vcr)."""
    from recorder import Routes
    from recorder.vcr import export_vcr

    routes = Routes.live() if origin == "live" else Routes.sandbox(origin)
    path = export_vcr(_store().open(ref), vcr, routes)
    console.print(f"wrote {path}")


@cassettes_app.command("import")
def import_(path: Annotated[Path, typer.Argument(help="a vcrpy YAML cassette, or a bundle version folder")],
            name: Annotated[str | None, typer.Option(help="bundle name to import into")] = None,
            public_key: Annotated[Path | None, typer.Option(help="require a valid Ed25519 signature (PEM key)")]
            = None,
            origin: Annotated[list[str] | None, typer.Option(help="sandbox origin(s) the vcr URIs may point at")]
            = None,
            ) -> None:
    """Import a vcrpy cassette (as a new version, marked imported) or a signed bundle folder."""
    from mcp_gateway.clients import SecretStore

    store = _store()
    if path.is_dir():
        from recorder.transfer import import_bundle

        imported = import_bundle(store, path, name=name, public_key=public_key)
        console.print(f"imported {imported}" + (f" ({imported.head_note})" if imported.head_note else ""))
        return
    if public_key is not None:
        raise typer.BadParameter("--public-key applies to bundle folders; a vcrpy cassette carries no signature")
    from recorder import Routes
    from recorder.vcr import import_vcr

    settings = KopaSettings()
    secrets = SecretStore.from_file(settings.gateway.key_file) if settings.gateway.key_file else SecretStore.from_env()
    keys = {p: secrets.key(p) for p in secrets.platforms()}
    interactions = import_vcr(path, Routes.everywhere(origin or []), keys=keys)
    target = name or path.stem
    ref = store.write(target, interactions, parent=store.head(target), keys=keys, note=f"imported from {path.name}")
    console.print(f"imported {len(interactions):,} interactions from {path} as {ref}")


@cassettes_app.command("keygen")
def keygen(private: Annotated[Path, typer.Argument(help="private key file to create (mode 0600)")],
           public: Annotated[Path, typer.Argument(help="public key file to create")]) -> None:
    """Make an Ed25519 key pair for signing bundles."""
    from recorder.signing import generate_keypair

    console.print(f"key {generate_keypair(private, public)}: private {private}, public {public}")


@cassettes_app.command("sign")
def sign(ref: RefArg, key: Annotated[Path, typer.Option(help="Ed25519 private key (PEM)")]) -> None:
    """Sign a bundle's manifest (which hashes every part) for air-gapped transfer."""
    from recorder.signing import sign_bundle

    console.print(f"wrote {sign_bundle(_store().resolve(ref).folder, key)}")


@cassettes_app.command("query")
def query_command(sql: Annotated[str, typer.Argument(help="SQL over the views interactions and responses")],
                  bundle: Annotated[list[str] | None, typer.Option(help="bundle REF (repeatable); default: every "
                                                                          "bundle's HEAD")] = None,
                  as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Run DuckDB SQL over bundles: `interactions` (one row per exchange) and `responses` (plus the body)."""
    from recorder.query import query

    store = _store()
    refs = bundle or [name for name in store.names() if store.head(name)]
    if not refs:
        raise typer.BadParameter(f"no bundles in {store.root}")
    columns, rows = query([(store.resolve(r).name, store.open(r)) for r in refs], sql)
    if as_json:
        print(json.dumps([dict(zip(columns, row)) for row in rows], ensure_ascii=False, indent=2, default=str))
        return
    table = Table(*columns)
    for row in rows:
        table.add_row(*("" if v is None else str(v) for v in row))
    console.print(table)


@cassettes_app.command("coverage")
def coverage_command(ref: RefArg,
                     run: Annotated[Path | None, typer.Option(help="replay run statistics (JSON) to report hits "
                                                                   "and misses of")] = None) -> None:
    """What a bundle covers (tools, parameter values, outcomes), or what a replay run hit and missed."""
    from mcp_gateway.cassette_reader import cassette_reader
    from recorder.query import coverage, replay_run_coverage

    bundle = _store().open(ref)
    if run is not None:
        report = replay_run_coverage(bundle, json.loads(run.read_text(encoding="utf-8")))
    else:
        report = coverage(bundle, cassette_reader())
    print(json.dumps(report, ensure_ascii=False, indent=2, default=str))


def drift(
    old: Annotated[str | None, typer.Argument(help="bundle REF recorded earlier")] = None,
    new: Annotated[str | None, typer.Argument(help="bundle REF recorded later")] = None,
    live_sample: Annotated[int | None, typer.Option("--live-sample", help="re-record N of OLD's queries against "
                                                                          "the current upstream and diff them")]
    = None,
    upstream: Annotated[str, typer.Option(help="for --live-sample: sandbox (with --world) | live")] = "sandbox",
    world: Annotated[str | None, typer.Option(help="for --live-sample on the sandbox: world version")] = None,
    seed: Annotated[int, typer.Option(help="for --live-sample: which queries are sampled")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON instead of Markdown")] = False,
    out: Annotated[Path | None, typer.Option(help="also write the report here (.json or .md)")] = None,
) -> None:
    """What drifted between two bundles (status, result codes, schema, cardinality, values, endpoints gone)."""
    from mcp_gateway.cassette_reader import cassette_reader
    from recorder.drift import compare

    store, reader = _store(), cassette_reader()
    if live_sample is not None:
        if old is None or new is not None:
            raise typer.BadParameter("--live-sample N takes exactly one bundle: kopa drift --live-sample N BUNDLE")
        from mcp_gateway.catalog import load_catalog
        from recorder.drift import catalog_section

        bundle = store.open(old)
        report = asyncio.run(_live_sample(bundle, live_sample, seed, upstream, world, reader))
        report.catalog = catalog_section(bundle.catalog_pin(), load_catalog().pin())  # the catalog served now
    else:
        if old is None or new is None:
            raise typer.BadParameter("give two bundles (kopa drift OLD NEW) or --live-sample N BUNDLE")
        report = compare(store.open(old), store.open(new), reader)
    text = json.dumps(report.to_json(), ensure_ascii=False, indent=2) if as_json else report.to_markdown()
    print(text)
    if out is not None:
        data = report.to_json()
        out.write_text(json.dumps(data, ensure_ascii=False, indent=2) if out.suffix == ".json"
                       else report.to_markdown(), encoding="utf-8")


async def _live_sample(bundle, n: int, seed: int, upstream: str, world: str | None, reader):
    import httpx

    from mcp_gateway.clients import SecretStore
    from recorder import Routes
    from recorder.drift import live_sample
    from sandbox import KeyStore, World, create_sandbox_app, default_keys, ensure_world

    settings = KopaSettings()
    if upstream == "sandbox":
        version = world or settings.sandbox.world
        opened = World.open(ensure_world(settings.home_dir, seed=settings.sandbox.seed, version=version,
                                         scale=settings.sandbox.scale))
        keys = default_keys()
        transport: httpx.AsyncBaseTransport = httpx.ASGITransport(
            create_sandbox_app(opened, KeyStore.from_mapping(keys)))
        routes, source = Routes.sandbox("http://sandbox"), f"sandbox@{version}"
    elif upstream == "live":
        secrets = (SecretStore.from_file(settings.gateway.key_file) if settings.gateway.key_file
                   else SecretStore.from_env())
        keys = {p: secrets.key(p) for p in secrets.platforms()}
        transport, routes, source = httpx.AsyncHTTPTransport(retries=2), Routes.live(), "live"
    else:
        raise typer.BadParameter(f"--upstream {upstream!r}: choose sandbox or live")
    sample = await live_sample(bundle, n, seed, transport, routes, keys, reader=reader, source=source)
    return sample.report(reader)
