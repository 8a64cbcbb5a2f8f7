"""World v2: how v1 drifts (stub)."""

from __future__ import annotations

from .context import BuildContext


def apply_v2(ctx: BuildContext) -> list[dict]:
    return []
