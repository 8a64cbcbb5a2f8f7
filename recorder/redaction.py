"""Keeping API keys out of every byte the recorder writes.

Two layers. First, redaction by name: secret query parameters and Seoul's key segment are
masked when a request is named (``fingerprint.request_key``), secret headers are dropped, and
key parameters echoed inside response bodies (law.go.kr's detail links carry ``OC=…``) are
masked. Second, a scan of every stored byte for each configured key value, raw and in both
URL-encoded forms (data.go.kr keys hold ``+/=`` and travel encoded): anything the names missed
makes the whole bundle refused — it is never written.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from urllib.parse import quote, quote_plus

from .fingerprint import MASK, SECRET_HEADERS, SECRET_PARAMS

# key=value inside a URL embedded in a body (after ? or &, also JSON-escaped \u0026)
_ECHOED = re.compile(
    r"((?:[?&]|\\u0026|&amp;)(?:%s)=)([^&\"'<>\s\\]+)" % "|".join(sorted(SECRET_PARAMS)), re.IGNORECASE)


_ECHOED_BYTES = re.compile(_ECHOED.pattern.encode("ascii"), re.IGNORECASE)
_MASK_BYTES = MASK.encode("ascii")


class SecretLeakError(ValueError):
    """A configured key is still present in data about to be written; nothing was written."""


def secret_forms(secret: str) -> set[str]:
    return set(_forms(secret))


@functools.lru_cache(maxsize=1024)
def _forms(secret: str) -> frozenset[str]:
    return frozenset({secret, quote(secret, safe=""), quote_plus(secret)} - {""})


@functools.lru_cache(maxsize=256)
def _longest_first(secrets: frozenset[str]) -> tuple[str, ...]:
    # cached: the gateway redacts every URL and message it returns with the same few keys
    return tuple(sorted({f for s in secrets for f in _forms(s)}, key=len, reverse=True))


def redact_values(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every form of every secret replaced by the mask (longest forms first: an
    encoded form may contain the raw one)."""
    for form in _longest_first(frozenset(s for s in secrets if s)):
        text = text.replace(form, MASK)
    return text


def mask_echoed_keys(body: bytes) -> bytes:
    """``body`` with the values of secret parameters in embedded URLs masked.

    Matched on the bytes, so a body that is not valid UTF-8 (a garbled page under faults, which the client
    still sees) is masked all the same; the pattern is ASCII, so a valid body is masked as its text would be.
    """
    if not body:
        return body
    return _ECHOED_BYTES.sub(lambda m: m.group(1) + _MASK_BYTES, body)


def safe_headers(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Headers worth keeping: secret ones dropped, hop-by-hop and length ones too (recomputed on replay)."""
    skip = SECRET_HEADERS | {"content-length", "transfer-encoding", "connection", "keep-alive", "date",
                             "content-encoding"}
    return [(k, v) for k, v in headers if k.lower() not in skip]


class KeyScanner:
    """Finds configured key values (every form) in bytes."""

    def __init__(self, keys: Mapping[str, str] | Iterable[str]):
        values = keys.items() if isinstance(keys, Mapping) else ((None, k) for k in keys)
        self._forms: list[tuple[bytes, str | None]] = sorted(
            {(form.encode("utf-8"), owner) for owner, key in values if key for form in secret_forms(key)},
            key=lambda item: -len(item[0]))

    def __bool__(self) -> bool:
        return bool(self._forms)

    def find(self, data: bytes | str) -> str | None:
        """Which platform's key (or "a configured key") ``data`` holds, else None. Never the key itself."""
        raw = data.encode("utf-8") if isinstance(data, str) else data
        for form, owner in self._forms:
            if form in raw:
                return f"platform {owner!r}'s key" if owner else "a configured key"
        return None
