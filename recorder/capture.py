"""Exchanges recorded into memory, for a ``Recording`` in another process to add.

    capture = Capture()
    gateway = open_gateway(upstream="sandbox", sandbox=box, profile="bench", mode="record", record_into=capture)
    ...                                   # calls: each exchange is kept here (keys masked, as recorded anywhere)
    exchanges = capture.drain()           # picklable; the recording gateway adds them: Gateway.add_recorded

EDGE's synthesis workers record the golden calls of what they make this way, so the process that keeps the items
only writes the exchanges of those it keeps instead of making every call again.
"""

from __future__ import annotations

import threading

from .cassette.interaction import Interaction

__all__ = ["Capture"]


class Capture:
    """A recording sink that keeps exchanges until they are drained (nothing is journaled or sealed)."""

    def __init__(self) -> None:
        self._items: list[Interaction] = []
        self._lock = threading.Lock()

    def add(self, interaction: Interaction) -> None:
        with self._lock:
            self._items.append(interaction)

    def __len__(self) -> int:
        return len(self._items)

    def drain(self) -> list[Interaction]:
        """The exchanges kept so far, in recorded order; the capture is empty after."""
        with self._lock:
            items, self._items = self._items, []
        return items
