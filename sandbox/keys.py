"""Keys the sandbox accepts, in the formats the real platforms issue.

Only configured keys are accepted; anything else gets the platform's real authorization error.
The defaults are derived from a fixed label so that a fresh install works with no set-up, and
``kopa sandbox info`` prints them. data.go.kr keys contain ``+``, ``/`` and ``=`` so that the
raw and URL-encoded forms differ, as the portal's "decoding" and "encoding" keys do.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from public_apis import DATAGO_PLATFORMS, PLATFORM_IDS


def _digest(label: str) -> bytes:
    return hashlib.sha256(f"kopa-sandbox:{label}".encode()).digest()


def default_keys() -> dict[str, str]:
    """One sandbox key per platform, shaped like the real issued keys."""
    datago = base64.b64encode(_digest("datago") + _digest("datago-2")[:30]).decode()  # 88 chars, has +/=
    if "+" not in datago and "/" not in datago:  # keep the encoded form different from the raw one
        datago = datago[:10] + "+/" + datago[12:]
    keys = {
        "ex": str(int.from_bytes(_digest("ex")[:8], "big"))[-10:].rjust(10, "7"),
        "seoul": _digest("seoul").hex()[:30],
        "dart": _digest("dart").hex()[:40],
        "edu": _digest("edu").hex()[:32],
        "law": "kopa" + _digest("law").hex()[:6],  # law.go.kr OC: the e-mail id of the account
        "assembly": _digest("assembly").hex()[:32],
        "gg": _digest("gg").hex()[:32],
    }
    for platform in DATAGO_PLATFORMS:
        keys[platform] = datago
    return keys


@dataclass(frozen=True)
class KeyStore:
    """Accepted keys per platform id."""

    keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, str | Iterable[str]]) -> KeyStore:
        unknown = set(mapping) - set(PLATFORM_IDS)
        if unknown:
            raise ValueError(f"unknown platform id(s) in sandbox keys: {sorted(unknown)}; "
                             f"valid ids: {', '.join(PLATFORM_IDS)}")
        return cls({p: (v,) if isinstance(v, str) else tuple(v) for p, v in mapping.items()})

    @classmethod
    def default(cls) -> KeyStore:
        return cls.from_mapping(default_keys())

    def accepts(self, platform: str, key: str) -> bool:
        return key in self.keys.get(platform, ())

    def first(self, platform: str) -> str:
        return self.keys[platform][0]

    def all_values(self) -> set[str]:
        return {k for ks in self.keys.values() for k in ks}

    def __repr__(self) -> str:  # keys never appear in logs or tracebacks
        return f"KeyStore(platforms={sorted(self.keys)})"
