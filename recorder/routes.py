"""Which platform a request URL belongs to, and the path below that platform's base URL.

Fingerprints name a request by platform and relative path, never by host: a bundle recorded
against the sandbox replays for a gateway configured with the live hosts, and the other way
round. ``Routes`` is built from base URLs (the gateway passes its configured ones) or from the
platform specs (live hosts, or a sandbox origin).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import httpx

from public_apis import MAIN, live_bases, sandbox_bases


@dataclass(frozen=True)
class Route:
    platform: str  # platform id ("dart", "seoul", ...)
    base: str  # which base of the platform ("main", or "schoolinfo" for 학교알리미)
    url: str  # the base URL, no trailing slash

    @property
    def label(self) -> str:
        """Name of the base in canonical URLs: the platform id, plus the base name for a second base."""
        return self.platform if self.base == MAIN else f"{self.platform}.{self.base}"


class UnknownRouteError(ValueError):
    """A request URL under none of the configured platform base URLs."""


class Routes:
    """Longest-prefix match of request URLs against platform base URLs."""

    def __init__(self, routes: Iterable[Route]):
        self.routes = sorted(routes, key=lambda r: len(r.url), reverse=True)
        if not self.routes:
            raise ValueError("no platform base URLs configured")

    @classmethod
    def from_bases(cls, bases: Mapping[tuple[str, str], str]) -> Routes:
        """From ``{(platform, base name): base URL}`` (the gateway's ``PlatformURLs.bases``)."""
        return cls(Route(p, b, url.rstrip("/")) for (p, b), url in bases.items())

    @classmethod
    def live(cls) -> Routes:
        return cls.from_bases(live_bases())

    @classmethod
    def sandbox(cls, origin: str) -> Routes:
        return cls.from_bases(sandbox_bases(origin))

    @classmethod
    def everywhere(cls, origins: Iterable[str] = ()) -> Routes:
        """Live hosts plus sandboxes at ``origins`` (for reading cassettes of unknown origin)."""
        routes = list(cls.live().routes)
        for origin in origins:
            routes += cls.sandbox(origin).routes
        return cls(routes)

    def match(self, url: httpx.URL | str) -> tuple[Route, str]:
        """(route, path below the base, starting with '/'); the query is not part of it."""
        if not isinstance(url, httpx.URL):
            url = httpx.URL(url)  # a request's URL is already parsed: re-parsing it costs more than the lookup
        bare = f"{url.scheme}://{url.netloc.decode('ascii')}{url.raw_path.decode('ascii').split('?', 1)[0]}"
        for route in self.routes:
            if bare == route.url or bare.startswith(route.url + "/"):
                return route, bare[len(route.url):] or "/"
        raise UnknownRouteError(f"{bare} is under no configured platform base URL")

    def url_of(self, label: str) -> str:
        """Base URL for a canonical URL's label (``edu.schoolinfo`` → 학교알리미's base)."""
        for route in self.routes:
            if route.label == label:
                return route.url
        raise UnknownRouteError(f"no base URL configured for {label!r}")
