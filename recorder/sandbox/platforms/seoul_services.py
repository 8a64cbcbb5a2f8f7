"""Seoul transport services (subway, bus, bike) declared as SeoulService (stub)."""

from __future__ import annotations

from ..world.runtime import World
from .seoul import SeoulService


def transport_services(world: World) -> list[SeoulService]:
    return []
