"""What `kopa tui` does: attach to the gateway at URL if it answers, else start one in-process, then run the app.

The token comes from ``--token`` / ``KOPA_TUI_TOKEN`` or the appliance's configured gateway tokens; it is
kept in a ``SecretStr`` and shown masked.
"""

from __future__ import annotations

import asyncio

from pydantic import SecretStr

from appliance.config import KopaSettings

from .app import KopaConsole, run_app
from .sources import ApplianceSource, GatewayDown, GatewayEndpoint


def _answers(endpoint: GatewayEndpoint) -> bool:
    from .sources import GatewayClient

    try:
        asyncio.run(GatewayClient(endpoint).health())
    except GatewayDown:
        return False
    return True


def run_console(settings: KopaSettings, *, url: str | None, token: str | None, start: bool) -> None:
    url = url or f"http://{settings.gateway.host}:{settings.gateway.port}"
    secret = SecretStr(token) if token else (settings.gateway.tokens[0] if settings.gateway.tokens else None)
    endpoint = GatewayEndpoint(url, secret) if secret is not None else None
    attach = endpoint is not None and _answers(endpoint)
    source = ApplianceSource.from_settings(settings, endpoint if attach or not start else None)
    run_app(KopaConsole(source, start_local=start and not attach))
