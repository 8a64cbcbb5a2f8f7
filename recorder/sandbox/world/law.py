"""World generator for the law domain (stub: filled in by its owner)."""

from __future__ import annotations

from .context import BuildContext


def build(ctx: BuildContext) -> None:
    """Add the law tables to the world."""
