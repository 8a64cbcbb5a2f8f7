"""tui: the Textual operator console (`kopa tui`).

    from tui import KopaConsole, ApplianceSource
    KopaConsole(ApplianceSource.from_settings(), start_local=True).run()
"""

from .app import KopaConsole
from .sources import ApplianceSource, GatewayEndpoint, LocalGateway

__all__ = ["ApplianceSource", "GatewayEndpoint", "KopaConsole", "LocalGateway"]
