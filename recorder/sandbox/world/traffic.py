"""World generator for the traffic domain (stub: filled in by its owner)."""

from __future__ import annotations

from .context import BuildContext


def build(ctx: BuildContext) -> None:
    """Add the traffic tables to the world."""
