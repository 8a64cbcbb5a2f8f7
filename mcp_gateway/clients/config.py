"""Client configuration: where each platform lives, and how hard the gateway may press it.

Base URLs are configuration, not code, so the same client talks to the live portals or to
the sandbox: ``PlatformURLs.live()`` takes the real hosts from ``public_apis``,
``PlatformURLs.sandbox(origin)`` the matching sandbox mounts. A platform may have a second
base (``edu`` → ``schoolinfo``, the 학교알리미 host next to NEIS), chosen by ``Endpoint.base``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from public_apis import MAIN, live_bases, sandbox_bases

from ..catalog.spec import Endpoint


@dataclass(frozen=True)
class PlatformURLs:
    """(platform id, base name) → base URL without a trailing slash."""

    bases: Mapping[tuple[str, str], str]

    @classmethod
    def live(cls) -> PlatformURLs:
        return cls(live_bases())

    @classmethod
    def sandbox(cls, origin: str) -> PlatformURLs:
        """The sandbox served at ``origin`` (``http://127.0.0.1:8088``, or ``http://sandbox`` over ASGI)."""
        return cls(sandbox_bases(origin))

    def base(self, platform: str, name: str = MAIN) -> str:
        try:
            return self.bases[(platform, name)]
        except KeyError:
            raise KeyError(f"no base URL configured for platform {platform!r} (base {name!r})") from None

    def url(self, endpoint: Endpoint) -> str:
        """Full URL of an endpoint's path (Seoul builds its own path below the base)."""
        return f"{self.base(endpoint.platform, endpoint.base)}/{endpoint.path.lstrip('/')}"


@dataclass(frozen=True)
class Limits:
    """Retry, timeout and politeness settings, the same for every platform unless overridden."""

    timeout_s: float = 60.0
    max_attempts: int = 3
    base_delay_s: float = 0.2  # first retry waits up to this; each further retry doubles the ceiling
    max_delay_s: float = 10.0
    concurrency: int = 8  # requests in flight per platform
    rate_per_s: float = 20.0  # sustained requests per second per platform (token bucket)
    burst: int = 10
    platform_rates: Mapping[str, float] = field(default_factory=dict)  # per-platform override of rate_per_s

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if self.timeout_s <= 0 or self.rate_per_s <= 0 or self.concurrency < 1 or self.burst < 1:
            raise ValueError("timeout_s and rate_per_s must be positive; concurrency and burst at least 1")

    def rate(self, platform: str) -> float:
        return self.platform_rates.get(platform, self.rate_per_s)
