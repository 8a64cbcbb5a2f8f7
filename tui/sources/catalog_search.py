"""Tool search over the catalog in Korean, the same way the gateway's search mode ranks tools.

    search = ToolSearch(load_catalog())
    search.find("전환사채 발행")      # [ToolHit(name, platform, score, description), ...]
    search.schema("search_laws")      # the MCP input schema the gateway lists (chat profile)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp_gateway.catalog import Catalog
from mcp_gateway.catalog.export import input_schema
from mcp_gateway.server import NgramIndex

DEFAULT_LIMIT = 20


@dataclass(frozen=True)
class ToolHit:
    name: str
    platform: str
    domain: str
    score: float
    description: str


class ToolSearch:
    def __init__(self, catalog: Catalog, profile: str = "chat") -> None:
        self.catalog, self.profile = catalog, profile
        self._specs = list(catalog)
        self._index = NgramIndex([f"{s.name} {s.description_ko}" for s in self._specs])
        self.platform_of = {s.name: s.platform for s in self._specs}

    def find(self, query: str, limit: int = DEFAULT_LIMIT) -> list[ToolHit]:
        if not query.strip():
            return []
        return [ToolHit(s.name, s.platform, s.domain, score, s.description_ko)
                for i, score in self._index.search(query, limit) for s in (self._specs[i],)]

    def schema(self, tool: str) -> dict[str, Any]:
        """The tool's input schema as the gateway lists it to chat clients.

        Raises:
            mcp_gateway.catalog.catalog.UnknownToolError: no such tool (with the nearest names).
        """
        return input_schema(self.catalog.get(tool), self.profile)  # type: ignore[arg-type]
