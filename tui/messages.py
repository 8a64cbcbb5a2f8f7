"""Messages the console's parts send each other."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from .sources import Health, MetricsSnapshot


@dataclass
class GatewayPolled(Message):
    """One poll of the gateway: its health and metrics, or the reason it did not answer."""

    health: Health | None
    metrics: MetricsSnapshot | None
    error: str | None = None


@dataclass
class BenchProgress(Message):
    done: int
    total: int
    passed: int


@dataclass
class BenchFinished(Message):
    """A console-started run ended: complete, cancelled or failed (``note`` says which)."""

    run_dir: str
    note: str
