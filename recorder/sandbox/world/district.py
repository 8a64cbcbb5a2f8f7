"""World generator for the district domain (stub: filled in by its owner)."""

from __future__ import annotations

from .context import BuildContext


def build(ctx: BuildContext) -> None:
    """Add the district tables to the world."""
