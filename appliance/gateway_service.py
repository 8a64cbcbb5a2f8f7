"""Start-up of the MCP gateway: the runtime over the chosen upstream, served over HTTP or stdio."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from pathlib import Path

import uvicorn

from mcp_gateway.gateway import open_gateway
from mcp_gateway.server import ToolSet, attach_audit_file, create_gateway_app, default_toolsets, run_stdio

from .config import GatewaySettings, KopaSettings, RecorderSettings
from .sandbox_service import in_process_sandbox


def serve_gateway(settings: KopaSettings, gateway: GatewaySettings, recorder: RecorderSettings, *, stdio: bool,
                  log: Callable[[str], None]) -> None:
    upstream = "sandbox" if gateway.upstream == "replay" else gateway.upstream
    opened = open_gateway(upstream=upstream, sandbox=in_process_sandbox(settings) if upstream == "sandbox" else None,
                          profile=gateway.profile, home=settings.home_dir, key_file=gateway.key_file, mode=recorder.mode,
                          cassettes=settings.cassettes_dir, bundle=recorder.bundle,
                          stats_file=_stats_file(settings, recorder), input_limits=gateway.limits,
                          resume_recording=True,  # a crashed `kopa serve --mode record` continues where it stopped
                          strict_catalog=recorder.strict_catalog)
    if opened.catalog_notice:
        log(f"warning: {opened.catalog_notice}" if opened.catalog_diff else f"notice: {opened.catalog_notice}")
    if stdio:
        asyncio.run(_stdio(opened))
        return
    tokens = {t.get_secret_value() for t in gateway.tokens}
    if not tokens:  # no token configured: make one for this run and say it once, on stderr
        token = secrets.token_urlsafe(24)
        tokens = {token}
        log(f"no gateway token configured (KOPA_GATEWAY__TOKENS); this run accepts: Bearer {token}")
    toolsets = default_toolsets(opened.catalog, pinned=gateway.pinned)
    for name, tools in gateway.toolsets.items():  # e.g. a benchmark task set: {"task/finance-cb": [...]}
        toolsets[name] = ToolSet(name, tuple(tools))
        toolsets[name].resolve(opened.catalog)  # an unknown tool name stops start-up with its name
    app = create_gateway_app(opened.runtime, tokens=tokens, toolsets=toolsets,
                             page_size=gateway.page_size, resources=[opened])  # closing it commits a recording
    audit_file = gateway.audit_file or settings.home_dir / "logs" / "audit.jsonl"
    attach_audit_file(audit_file)  # for the process's life: `kopa tui` tails it
    via = "" if opened.mode == "live" else f", {opened.mode} {recorder.bundle}"
    if opened.recording is not None and opened.recording.resumed:
        log(f"resuming the interrupted recording of {recorder.bundle!r}: {opened.recording.resumed:,} interaction(s) "
            f"already journaled")
    log(f"MCP gateway ({opened.upstream} upstream{via}, {gateway.profile} profile, {len(opened.catalog):,} tools) "
        f"on http://{gateway.host}:{gateway.port}/mcp; audit lines to {audit_file}")
    uvicorn.run(app, host=gateway.host, port=gateway.port, log_level="warning", lifespan="on")


async def _stdio(opened) -> None:
    try:
        await run_stdio(opened.runtime, ToolSet.everything())
    finally:
        await opened.aclose()


def _stats_file(settings: KopaSettings, recorder: RecorderSettings) -> Path | None:
    """Where a replay run's hits and misses go: ``<home>/runs/replay-<bundle>-<UTC time>.json``."""
    if recorder.mode not in ("replay", "replay-or-record") or not recorder.bundle:
        return None
    from bench.options import stamped_name

    return settings.home_dir / "runs" / f"{stamped_name('replay-' + recorder.bundle.replace('@', '-'))}.json"
