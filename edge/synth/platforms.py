"""Held-out platforms (paper Table 14): platforms synthesis keeps out of the training corpus.

    held_out = held_out_platforms(["ex", "law"])     # ('ex', 'law'); an unknown id raises, naming the known ones
    graph = LiveGraph.from_store(store, catalog, exclude_platforms=held_out)

A tool's platform is the catalog's (``ToolSpec.platform``); the ids are the gateway's (``mcp_gateway.catalog.PLATFORMS``).
Synthesis drops every tool of a held-out platform from G* before it walks, so no item calls one, and the
contamination audit reports the KOPA-Bench tasks on those platforms as unseen in training.
"""

from __future__ import annotations

from collections.abc import Iterable

from mcp_gateway.catalog import PLATFORMS

__all__ = ["held_out_platforms", "known_platforms"]


def known_platforms() -> list[str]:
    return sorted(PLATFORMS)


def held_out_platforms(ids: Iterable[str]) -> tuple[str, ...]:
    """``ids`` sorted and deduplicated.

    Raises:
        ValueError: an id that is no platform's, naming the known ones.
    """
    wanted = sorted({str(i).strip() for i in ids})
    if unknown := [i for i in wanted if i not in PLATFORMS]:
        raise ValueError(f"unknown platform id(s) {', '.join(map(repr, unknown))}; "
                         f"known: {', '.join(known_platforms())}")
    return tuple(wanted)
