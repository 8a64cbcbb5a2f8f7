"""World generator for the education domain (stub: filled in by its owner)."""

from __future__ import annotations

from .context import BuildContext


def build(ctx: BuildContext) -> None:
    """Add the education tables to the world."""
