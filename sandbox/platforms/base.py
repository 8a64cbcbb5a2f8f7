"""What every emulated platform shares: its spec, its request context and request helpers.

A platform module (one per platform, e.g. ``neis.py``) defines::

    SPEC: PlatformSpec                                   # public_apis.platform_spec(id): real base URL, auth
    def create_app(pctx: PlatformContext) -> Starlette   # routes relative to SPEC.mount
    def fault_response(kind: FaultKind, request: Request) -> Response   # the real fault answers

``sandbox.app.create_sandbox_app`` mounts every platform under ``SPEC.mount`` and wraps it in
the fault-injection middleware. Handlers must never raise: bad input gets the platform's own
error answer (HTTP 200 with an error code, as the real services do).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.datastructures import QueryParams

from public_apis import PlatformSpec

if TYPE_CHECKING:
    from ..keys import KeyStore
    from ..world.runtime import World


@dataclass
class PlatformContext:
    """What a platform's handlers need: the world, the accepted keys and the world's drift."""

    spec: PlatformSpec
    world: World
    keys: KeyStore
    removed_services: frozenset[str] = frozenset()

    def key_ok(self, key: str | None) -> bool:
        return key is not None and self.keys.accepts(self.spec.id, key)

    def is_removed(self, service: str) -> bool:
        return service in self.removed_services


class CIParams:
    """Case-insensitive view of query parameters (the hub portals accept `KEY` and `key`)."""

    def __init__(self, params: QueryParams | Mapping[str, str]):
        self._params = {k.lower(): v for k, v in params.items()}

    def get(self, name: str, default: str | None = None) -> str | None:
        return self._params.get(name.lower(), default)

    def __contains__(self, name: str) -> bool:
        return name.lower() in self._params


MAX_INT = 2**31 - 1  # the portals' paging fields are Java ints


def parse_positive_int(value: str | None, default: int) -> int | None:
    """Parse a paging number; ``None`` means the value was present but not an int in 1..MAX_INT."""
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        return None
    return number if 1 <= number <= MAX_INT else None


def wants_xml(fmt: str | None, default_xml: bool) -> bool:
    if fmt is None or fmt == "":
        return default_xml
    return fmt.lower() == "xml"
