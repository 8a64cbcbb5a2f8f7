"""Reading recorded bodies as the gateway reads live ones: for drift reports and coverage.

    reader = cassette_reader()                 # Interaction → recorder.drift.Parsed
    report = compare(old_bundle, new_bundle, reader)

A recorded interaction names the tool that made it; the catalog gives that tool's endpoint and
the endpoint's family client reads and classifies the body exactly as a live call would be
(``PlatformClient._classify``: envelope, result codes, HTTP status, malformed bodies). The
clients are built once over the live base URLs and never send anything. Interactions without a
known tool are classified by HTTP status alone.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx

from recorder import Interaction
from recorder.drift import Parsed, status_reader

from .catalog import Catalog, Endpoint, UnknownToolError, load_catalog
from .clients import ClientSet, PlatformURLs
from .runtime.result import Outcome


class CassetteReader:
    """Callable ``Interaction`` → ``Parsed`` using the gateway's own platform parsers."""

    def __init__(self, catalog: Catalog | None = None):
        self.catalog = catalog or load_catalog()
        self.clients = ClientSet(PlatformURLs.live())  # parsers only: nothing is ever sent through it

    def __call__(self, interaction: Interaction) -> Parsed:
        endpoint = self._endpoint(interaction.tool)
        client = self.clients.clients.get(endpoint.family) if endpoint is not None else None
        if endpoint is None or client is None:
            return status_reader(interaction)
        response = httpx.Response(interaction.status, headers=list(interaction.headers), content=interaction.body,
                                  request=httpx.Request(interaction.method, "http://cassette.invalid/"))
        reading = client._classify(endpoint, response)
        ok = reading.failure is None
        return Parsed(
            status=interaction.status, ok=ok, outcome="success" if ok else str(reading.failure),
            code=reading.code, message=reading.message, records=reading.records if ok else [],
            total=reading.total if ok else None,
            # "no such service" (ERROR-310, data.go.kr's 12, HTTP 404/410), not an overloaded 503
            unavailable=reading.failure is Outcome.ENDPOINT_UNAVAILABLE and interaction.status < 500)

    def _endpoint(self, tool: str | None) -> Endpoint | None:
        if not tool:
            return None
        try:
            return self.catalog.get(tool).endpoint
        except UnknownToolError:
            return None


def cassette_reader(catalog: Catalog | None = None) -> Callable[[Interaction], Parsed]:
    """A reader for ``recorder.drift.compare`` and ``recorder.query.coverage``."""
    return CassetteReader(catalog)


__all__ = ["CassetteReader", "cassette_reader"]
