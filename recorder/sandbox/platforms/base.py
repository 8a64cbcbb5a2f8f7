"""What every emulated platform shares: its spec, its request context and request helpers.

A platform module (one per platform, e.g. ``neis.py``) defines::

    SPEC: PlatformSpec                                   # identity, real base URL, auth
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

if TYPE_CHECKING:
    from ..keys import KeyStore
    from ..world.runtime import World


@dataclass(frozen=True)
class PlatformSpec:
    """Identity of one emulated platform and where it lives, live and in the sandbox."""

    id: str  # short id used in config and cassettes, e.g. "dart"
    title: str  # Korean display name
    domain: str  # traffic | finance | education | law | politics | district
    live_base_url: str  # the real service's base URL, e.g. "https://opendart.fss.or.kr/api"
    host: str  # the real host name, used for Host-header dispatch
    host_prefix: str  # sandbox path prefix standing for the host, e.g. "/dart"
    key_param: str  # name of the auth parameter ("crtfc_key", "KEY", ...) or "path" for Seoul
    formats: tuple[str, ...] = ("json",)

    @property
    def mount(self) -> str:
        """Sandbox path under which this platform's routes live (host prefix + real path)."""
        from urllib.parse import urlsplit

        return self.host_prefix + urlsplit(self.live_base_url).path.rstrip("/")

    def sandbox_base_url(self, origin: str) -> str:
        """Base URL of this platform on a sandbox reached at ``origin`` (e.g. http://127.0.0.1:8088)."""
        return origin.rstrip("/") + self.mount


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
