"""Named tool sets: what one (virtual) MCP server offers, and how it lists it.

No model holds 2,300 schemas in context and many MCP clients read only the first page of
``tools/list``, so the gateway serves named subsets at their own paths (per platform, per
domain, per task set), and a search mode that lists only ``search_tools``, ``call_tool``
and a few pinned tools while every tool of the set stays callable through ``call_tool``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

from ..catalog.spec import ToolSpec

Mode = Literal["full", "search"]


class CatalogLike(Protocol):
    """The part of ``mcp_gateway.catalog.Catalog`` the server reads."""

    tools: Mapping[str, ToolSpec]


@dataclass(frozen=True)
class ToolSet:
    """A named set of catalog tools; ``tools=None`` means the whole catalog."""

    name: str
    tools: tuple[str, ...] | None = None
    mode: Mode = "full"
    pinned: tuple[str, ...] = ()

    @classmethod
    def everything(cls, name: str = "all", *, mode: Mode = "full", pinned: Iterable[str] = ()) -> ToolSet:
        return cls(name, None, mode, tuple(pinned))

    @classmethod
    def where(cls, name: str, specs: Iterable[ToolSpec], *, mode: Mode = "full",
              pinned: Iterable[str] = ()) -> ToolSet:
        """The set of the given specs (e.g. a filter over ``catalog.tools.values()``), in that order."""
        return cls(name, tuple(s.name for s in specs), mode, tuple(pinned))

    def resolve(self, catalog: CatalogLike) -> list[ToolSpec]:
        """The set's specs, pinned tools included; names the catalog lacks are an error, not a gap."""
        names = list(catalog.tools) if self.tools is None else list(self.tools)
        listed = set(names)
        names += [p for p in self.pinned if p not in listed]
        missing = [n for n in names if n not in catalog.tools]
        if missing:
            raise ValueError(f"tool set {self.name!r} names tools the catalog lacks: {', '.join(missing[:10])}")
        return [catalog.tools[n] for n in names]


def default_toolsets(catalog: CatalogLike, *, pinned: Iterable[str] = ()) -> dict[str, ToolSet]:
    """``all``, ``search`` (search mode over everything), ``platform/<id>`` and ``domain/<d>`` sets."""
    pins = tuple(pinned)
    specs = list(catalog.tools.values())
    sets = {"all": ToolSet.everything(), "search": ToolSet.everything("search", mode="search", pinned=pins)}
    for attr, prefix in (("platform", "platform"), ("domain", "domain")):
        for value in sorted({getattr(s, attr) for s in specs}):
            name = f"{prefix}/{value}"
            sets[name] = ToolSet.where(name, (s for s in specs if getattr(s, attr) == value))
    return sets
