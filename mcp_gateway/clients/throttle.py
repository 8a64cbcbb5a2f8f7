"""Per-platform politeness: a concurrency cap and a token-bucket rate limit.

The portals meter each key per platform (daily quotas, per-second caps at the data.go.kr
gateway), so the gateway limits itself per platform id, shared by every client of a
``ClientSet`` (NEIS and 학교알리미 are both ``edu``; FSC, KDIC and HRD are separate ids).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from .config import Limits


class TokenBucket:
    """``rate`` tokens per second, at most ``burst`` saved up; ``take`` waits for one."""

    def __init__(self, rate: float, burst: int):
        self.rate, self.burst = rate, float(burst)
        self._tokens = float(burst)
        self._stamp = time.monotonic()
        self._lock = asyncio.Lock()

    async def take(self) -> None:
        async with self._lock:  # one waiter at a time keeps the order fair
            while True:
                now = time.monotonic()
                self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate)
                self._stamp = now
                if self._tokens >= 1:
                    self._tokens -= 1
                    return
                await asyncio.sleep((1 - self._tokens) / self.rate)


class PlatformGates:
    """One semaphore and one bucket per platform, created on first use."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self._gates: dict[str, tuple[asyncio.Semaphore, TokenBucket]] = {}

    @asynccontextmanager
    async def slot(self, platform: str) -> AsyncIterator[None]:
        """Hold a concurrency slot and spend one rate token for one request."""
        gate = self._gates.get(platform)
        if gate is None:
            gate = self._gates[platform] = (asyncio.Semaphore(self.limits.concurrency),
                                            TokenBucket(self.limits.rate(platform), self.limits.burst))
        semaphore, bucket = gate
        async with semaphore:
            await bucket.take()
            yield
