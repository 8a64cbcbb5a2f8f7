"""The appliance's API keys: where they come from, and how they are kept out of every text.

Keys live in memory only. They come from ``KOPA_KEY_<PLATFORM>`` environment variables or
from a JSON/TOML file that only its owner may read (a key file readable by the group or by
others is refused, not silently used). ``redact`` replaces every configured key — raw and in
both URL-encoded forms, since a data.go.kr key with ``+/=`` appears encoded in request URLs —
with ``***``; clients pass URLs, messages and records through it before anything leaves them.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import tomllib
from collections.abc import Mapping
from pathlib import Path

from recorder.redaction import redact_values  # one masking for recordings and the gateway

ENV_PREFIX = "KOPA_KEY_"


class SecretError(RuntimeError):
    """A key is missing or the key file cannot be used."""


class SecretStore:
    """Platform id → API key; never shows a key in its repr."""

    def __init__(self, keys: Mapping[str, str], source: str = "memory"):
        self._keys = {p.lower(): k for p, k in keys.items() if k}
        self.source = source

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> SecretStore:
        """``KOPA_KEY_DART=…`` → key of platform ``dart``."""
        env = os.environ if environ is None else environ
        return cls({name[len(ENV_PREFIX):]: value for name, value in env.items() if name.startswith(ENV_PREFIX)},
                   source="environment")

    @classmethod
    def from_file(cls, path: str | Path) -> SecretStore:
        """A JSON or TOML (by suffix ``.toml``) table of platform → key, readable by its owner only."""
        path = Path(path)
        try:
            mode = path.stat().st_mode
        except OSError as exc:
            raise SecretError(f"key file {path}: {exc.strerror}") from exc
        if mode & 0o077:
            raise SecretError(f"key file {path} is readable or writable by group or others "
                              f"(mode {stat.filemode(mode)}); restrict it with: chmod 600 {path}")
        text = path.read_text(encoding="utf-8")
        try:
            data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
        except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
            raise SecretError(f"key file {path} is not valid {'TOML' if path.suffix == '.toml' else 'JSON'}: "
                              f"{exc}") from None
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise SecretError(f"key file {path} must map platform ids to key strings")
        return cls(data, source=str(path))

    def key(self, platform: str) -> str:
        try:
            return self._keys[platform.lower()]
        except KeyError:
            raise SecretError(f"no API key configured for platform {platform!r}; set "
                              f"{ENV_PREFIX}{platform.upper()} or add it to the key file") from None

    def platforms(self) -> list[str]:
        return sorted(self._keys)

    def redact(self, text: str) -> str:
        return redact_values(text, self._keys.values())

    def values(self) -> frozenset[str]:
        """Every configured key (for scrubbers that must find them, never for display)."""
        return frozenset(self._keys.values())

    def __repr__(self) -> str:
        return f"SecretStore(source={self.source!r}, platforms={self.platforms()})"


# Third-party loggers that print request URLs (httpx logs every request line at INFO).
HTTP_LOGGERS = ("httpx", "httpx2", "httpcore.connection", "httpcore.http11", "httpcore.http2")


class RedactingFilter(logging.Filter):
    """Scrubs every registered store's keys from log records before any handler sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.stores: list[SecretStore] = []

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = message
        for store in self.stores:
            redacted = store.redact(redacted)
        if redacted != message:
            record.msg, record.args = redacted, ()
        return True


_FILTER = RedactingFilter()


def guard_http_logs(store: SecretStore) -> None:
    """Make the HTTP libraries' loggers scrub ``store``'s keys (idempotent)."""
    if store not in _FILTER.stores:
        _FILTER.stores.append(store)
    for name in HTTP_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
