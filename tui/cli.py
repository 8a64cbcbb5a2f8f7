"""What `kopa tui` does: attach to the gateway at URL if it answers; if it does not, say so and do what the
operator chose, then run the app.

    nothing answers at URL   --start             --no-start           neither
    --url URL given          in-process gateway  keep retrying URL    ask (a dialog: start / continue / quit)
    no --url (the default)   in-process gateway  keep retrying URL    in-process gateway

Whatever happens is said on screen (which URL, what error). The token comes from ``--token`` /
``KOPA_TUI_TOKEN`` or the appliance's configured gateway tokens; it is kept in a ``SecretStr`` and shown
masked. Without one the console still attaches (``/healthz`` and ``/metrics`` need none) and a tool call
says that the gateway refused it.
"""

from __future__ import annotations

import httpx
from pydantic import SecretStr

from appliance.config import KopaSettings

from .app import KopaConsole, Unanswered, run_app
from .sources import ApplianceSource, GatewayEndpoint
from .sources.gateway_http import PROBE_TIMEOUT_S


def probe(url: str) -> str | None:
    """Why nothing gateway-like answers ``/healthz`` at ``url``, or None when it does (plain, synchronous HTTP:
    it runs before the app, inside or outside an event loop)."""
    where = url.rstrip("/") + "/healthz"
    try:
        response = httpx.get(where, timeout=PROBE_TIMEOUT_S)
        if response.status_code != 200:
            return f"{where}: HTTP {response.status_code}"
        response.json()
    except httpx.HTTPError as exc:
        return f"{where}: {type(exc).__name__}"
    except ValueError:
        return f"{where}: the answer is not a gateway's (not JSON)"
    return None


def make_console(settings: KopaSettings, *, url: str | None, token: str | None, start: bool | None,
                 poll_s: float | None = 1.0) -> KopaConsole:
    """The console ``kopa tui`` runs (``start``: None when neither --start nor --no-start was given)."""
    target = url or f"http://{settings.gateway.host}:{settings.gateway.port}"
    secret = SecretStr(token) if token else (settings.gateway.tokens[0] if settings.gateway.tokens else SecretStr(""))
    endpoint = GatewayEndpoint(target, secret)
    error = probe(target)
    if error is None:
        return KopaConsole(ApplianceSource.from_settings(settings, endpoint), poll_s=poll_s)
    ask = start is None and url is not None
    start_local = not ask and start is not False
    # Retrying (or asking) keeps the URL attached, so the console connects when it comes up.
    source = ApplianceSource.from_settings(settings, None if start_local else endpoint)
    return KopaConsole(source, start_local=start_local, poll_s=poll_s, unanswered=Unanswered(target, error, ask))


def run_console(settings: KopaSettings, *, url: str | None, token: str | None, start: bool | None) -> None:
    run_app(make_console(settings, url=url, token=token, start=start))
