"""World generator for the politics domain (stub: filled in by its owner)."""

from __future__ import annotations

from .context import BuildContext


def build(ctx: BuildContext) -> None:
    """Add the politics tables to the world."""
