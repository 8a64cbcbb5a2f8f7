"""Request fingerprints: what makes two requests "the same" for replay.

A fingerprint is SHA-256 over the canonical request: method, the platform's label and the path
below its base URL (never the host: sandbox and live recordings are interchangeable), the query
sorted by name and value with every secret parameter removed, and the body's hash. Secrets
are removed by name — the Korean platforms' own names (``serviceKey``, ``crtfc_key``, ``KEY``,
``OC``, ``key``, ``apiKey``) and Seoul's key-in-path segment — so a recording made with one key
replays for any other.

The paging-free fingerprint also drops the paging parameters (per platform: ``pageNo``/
``numOfRows``, ``pIndex``/``pSize``, ``page_no``/``page_count``, ``page``/``display``, Seoul's
START/END path segments). It names the *query*; its recorded pages serve any page number and
size on replay.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote

import httpx

from .routes import Route

MASK = "***"  # what a secret's value becomes in every stored byte (the gateway masks keys the same way)
SECRET_PARAMS = frozenset(n.casefold() for n in ("serviceKey", "crtfc_key", "KEY", "OC", "apiKey", "authKey"))
SECRET_HEADERS = frozenset(("authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"))

# Paging parameters by platform: (page number, page size). Seoul pages in the path instead.
QUERY_PAGING: dict[str, tuple[str, str]] = {
    "ex": ("pageNo", "numOfRows"), "krx": ("pageNo", "numOfRows"), "kdic": ("pageNo", "numOfRows"),
    "hrdk": ("pageNo", "numOfRows"), "dart": ("page_no", "page_count"), "edu": ("pIndex", "pSize"),
    "assembly": ("pIndex", "pSize"), "gg": ("pIndex", "pSize"), "law": ("page", "display"),
}
SEOUL = "seoul"  # /{KEY}/{type}/{SERVICE}/{START}/{END}[/{optional}...]


def is_secret_param(name: str) -> bool:
    return name.casefold() in SECRET_PARAMS


@dataclass(frozen=True)
class RequestKey:
    """A request as the recorder names it."""

    route: Route
    method: str
    path: str  # below the base URL, secrets masked (Seoul's key segment)
    query: tuple[tuple[str, str], ...]  # sorted; secret values masked, paging kept
    body_sha256: str | None
    page: int | None  # 1-based page and its size, when the request pages
    size: int | None

    @property
    def url(self) -> str:
        """Canonical URL with masked secrets: ``label:/path?a=1&b=2`` (what is stored and shown)."""
        return _url(self.route.label, self.path, self.query)

    @property
    def canonical(self) -> str:
        """What the fingerprint hashes: the URL without secret parameters, plus the body hash."""
        query = tuple((k, v) for k, v in self.query if not is_secret_param(k))
        return self._with_body(_url(self.route.label, self.path, query))

    @property
    def query_canonical(self) -> str | None:
        """The canonical form without paging; None when the request does not page."""
        if self.page is None:
            return None
        paging = QUERY_PAGING.get(self.route.platform, ())
        query = tuple((k, v) for k, v in self.query if not is_secret_param(k) and k not in paging)
        path = self.path
        if self.route.platform == SEOUL:
            parts = path.split("/")
            parts[4:6] = ["{START}", "{END}"]
            path = "/".join(parts)
        return self._with_body(_url(self.route.label, path, query))

    @property
    def fingerprint(self) -> str:
        return sha256_text(self.canonical)

    @property
    def query_fingerprint(self) -> str | None:
        canonical = self.query_canonical
        return None if canonical is None else sha256_text(canonical)

    def _with_body(self, url: str) -> str:
        return f"{self.method} {url}" + (f" body:{self.body_sha256}" if self.body_sha256 else "")


def request_key(request: httpx.Request, route: Route, rel_path: str) -> RequestKey:
    """Name ``request`` (whose URL lies below ``route``; ``rel_path`` is the part after the base)."""
    query = tuple(sorted((k, MASK if is_secret_param(k) else v) for k, v in request.url.params.multi_items()))
    path, page, size = rel_path, None, None
    if route.platform == SEOUL:
        path, page, size = _seoul(rel_path)
    elif route.platform in QUERY_PAGING:
        page, size = _query_paging(dict(query), QUERY_PAGING[route.platform])
    body = request.content
    return RequestKey(route, request.method.upper(), path, query,
                      hashlib.sha256(body).hexdigest() if body else None, page, size)


def mask_seoul_key(rel_path: str) -> str:
    """A Seoul path below its base with the key segment masked: /KEY/type/SERVICE/... → /***/type/SERVICE/..."""
    parts = rel_path.split("/")
    if len(parts) > 1 and parts[1]:
        parts[1] = MASK
    return "/".join(parts)


def _seoul(rel_path: str) -> tuple[str, int | None, int | None]:
    """Mask the key segment; read START/END as a page when they align to one."""
    parts = mask_seoul_key(rel_path).split("/")  # ['', ***, type, SERVICE, START, END, ...]
    page = size = None
    if len(parts) >= 6 and parts[4].isdigit() and parts[5].isdigit():
        start, end = int(parts[4]), int(parts[5])
        if 1 <= start <= end and (start - 1) % (end - start + 1) == 0:
            size = end - start + 1
            page = (start - 1) // size + 1
    return "/".join(parts), page, size


def _query_paging(query: dict[str, str], names: tuple[str, str]) -> tuple[int | None, int | None]:
    page, size = query.get(names[0]), query.get(names[1])
    if page and size and page.isdigit() and size.isdigit() and int(page) >= 1 and int(size) >= 1:
        return int(page), int(size)
    return None, None


def query_text(query: Iterable[tuple[str, str]]) -> str:
    """A query as canonical URLs (and exported vcrpy URIs) spell it: every byte encoded but the mask's ``*``."""
    return "&".join(f"{quote(k, safe='')}={quote(v, safe='*')}" for k, v in query)


def _url(label: str, path: str, query: tuple[tuple[str, str], ...]) -> str:
    text = query_text(query)
    return f"{label}:{path}" + (f"?{text}" if text else "")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
