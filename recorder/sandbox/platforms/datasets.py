"""Uniform dataset services of the district long tail (stub)."""

from __future__ import annotations

from ..world.runtime import World
from .seoul import SeoulService


def seoul_dataset_services(world: World) -> list[SeoulService]:
    return []
