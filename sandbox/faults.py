"""Seeded fault injection for the sandbox platforms.

A ``FaultProfile`` gives, per platform, the rate of each ``FaultKind``. The injector draws one
decision per request from a generator seeded with (profile seed, platform), so a given request
sequence always meets the same faults. The platform decides what each fault looks like on
the wire (``fault_response`` in its module): DART answers a rate limit with status 020,
data.go.kr with gateway code 22, the hub portals with ERROR-337, and so on.
"""

from __future__ import annotations

import hashlib
import json
import threading
from enum import StrEnum
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator


class FaultKind(StrEnum):
    RATE_LIMIT = "rate_limit"
    SERVER_ERROR = "server_error"
    HANG = "hang"  # no answer until the hang time has passed (clients time out)
    MALFORMED = "malformed"  # the real answer, cut short and garbled
    UNAVAILABLE = "unavailable"  # the endpoint is down / gone


class FaultRates(BaseModel):
    """Probability of each fault per request (their sum must not exceed 1)."""

    model_config = ConfigDict(extra="forbid")

    rate_limit: float = Field(0.0, ge=0, le=1)
    server_error: float = Field(0.0, ge=0, le=1)
    hang: float = Field(0.0, ge=0, le=1)
    malformed: float = Field(0.0, ge=0, le=1)
    unavailable: float = Field(0.0, ge=0, le=1)

    @model_validator(mode="after")
    def _sum_at_most_one(self) -> FaultRates:
        if self.total() > 1:
            raise ValueError(f"fault rates add up to {self.total():.3f}; they must not exceed 1")
        return self

    def total(self) -> float:
        return sum(getattr(self, k.value) for k in FaultKind)


class FaultProfile(BaseModel):
    """Fault rates for every platform (``default``) with per-platform overrides."""

    model_config = ConfigDict(extra="forbid")

    seed: int = 0
    hang_seconds: float = Field(30.0, gt=0, description="how long a hung request waits before answering")
    default: FaultRates = FaultRates()
    platforms: dict[str, FaultRates] = {}

    def rates(self, platform: str) -> FaultRates:
        return self.platforms.get(platform, self.default)

    def is_quiet(self) -> bool:
        return self.default.total() == 0 and all(r.total() == 0 for r in self.platforms.values())


BUILTIN_PROFILES: dict[str, FaultProfile] = {
    "none": FaultProfile(),
    # What a recording session against the live portals tends to meet.
    "flaky": FaultProfile(default=FaultRates(rate_limit=0.03, server_error=0.02, hang=0.005,
                                             malformed=0.01, unavailable=0.005), hang_seconds=20),
    # For retry/classification tests: every kind, often.
    "hostile": FaultProfile(default=FaultRates(rate_limit=0.1, server_error=0.1, hang=0.02,
                                               malformed=0.05, unavailable=0.05), hang_seconds=5),
}


class FaultProfileError(ValueError):
    """A fault profile name or file could not be used."""


def load_profile(spec: str | None) -> FaultProfile:
    """A built-in profile name, or the path of a JSON file holding a ``FaultProfile``."""
    if spec is None or spec == "":
        return BUILTIN_PROFILES["none"]
    if spec in BUILTIN_PROFILES:
        return BUILTIN_PROFILES[spec]
    path = Path(spec)
    if not path.exists():
        raise FaultProfileError(f"fault profile {spec!r} is neither a built-in profile "
                                f"({', '.join(BUILTIN_PROFILES)}) nor an existing JSON file")
    try:
        return FaultProfile.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, ValueError) as exc:
        raise FaultProfileError(f"fault profile file {path}: {exc}") from exc


class FaultInjector:
    """Thread-safe, per-platform seeded fault decisions."""

    def __init__(self, profile: FaultProfile):
        self.profile = profile
        self._lock = threading.Lock()
        self._rngs: dict[str, np.random.Generator] = {}
        self.counts: dict[str, dict[str, int]] = {}

    def _rng(self, platform: str) -> np.random.Generator:
        rng = self._rngs.get(platform)
        if rng is None:
            digest = hashlib.sha256(f"{self.profile.seed}:{platform}".encode()).digest()
            rng = self._rngs[platform] = np.random.default_rng(int.from_bytes(digest[:8], "little"))
        return rng

    def draw(self, platform: str) -> FaultKind | None:
        rates = self.profile.rates(platform)
        if rates.total() == 0:
            return None
        with self._lock:
            u = float(self._rng(platform).random())
            kind = None
            edge = 0.0
            for k in FaultKind:
                edge += getattr(rates, k.value)
                if u < edge:
                    kind = k
                    break
            bucket = self.counts.setdefault(platform, {})
            key = kind.value if kind else "ok"
            bucket[key] = bucket.get(key, 0) + 1
            return kind
