"""What the clients read from replayed bodies, kept per immutable bundle version.

    cache = ReadingCache(max_bytes=256 * 2**20)
    reading = cache.get_or_read(key, lambda: client._classify(endpoint, response))

A bundle version is content-addressed and never changes, so what a family client reads from one of
its recorded bodies (envelope, result code, records, total) is the same on every replay. The
recorder stamps each replayed response with (bundle version, body offset, body length)
(``recorder.transport.REPLAY_BODY_EXTENSION``); the key adds the HTTP status, the content type, the
client family and the endpoint fields a reader looks at. So a second bundle version (another
content hash) never gets the first one's readings, identical bodies within a version are read
once, and record, live and replay-or-record's recorded answers carry no stamp: they are never
looked up nor stored.

A ``CachedReading`` is shared by every call that hits it: its records are never mutated here, and
``PlatformClient._page`` hands each caller shallow copies of the records it returns. Local filters
(``corp_name`` over the corpCode.xml list) run on a per-field index built once per reading: a
substring search over one case-folded string, or a value → rows map for exact matches.

Memory is bounded by an LRU over the estimated size of the parsed data (``estimate_bytes``: the
record list plus the deep size of up to 32 sampled records times the count, plus the indexes
built). Measured on the shipped bundle (tracemalloc after parsing): parsed JSON takes 2.2–5.1× its
body (a 1,000-record Seoul page of 270 KB: 0.92 MB), the 140 KB corpCode.xml ZIP of 8,513
companies 3.6 MB (25.6×); the tests hold the estimate within ±25% of tracemalloc's figure. Default bound
256 MiB and 4,096 entries, process-wide (``SHARED``), so gateways that replay the same version share it; a reading
estimated above the whole bound is returned but not kept.
"""

from __future__ import annotations

import sys
import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from .envelope import Reading, Record

DEFAULT_MAX_BYTES = 256 * 2**20
DEFAULT_MAX_ENTRIES = 4096
SAMPLE = 32  # records sized to estimate a reading's footprint
SEPARATOR = "\x00"  # between case-folded values in a substring index


@dataclass
class CachedReading(Reading):
    """A reading served from the cache: shared, never mutated; filters run on lazily built indexes."""

    def __post_init__(self) -> None:
        self._like: dict[str, tuple[str, list[int]]] = {}
        self._exact: dict[str, dict[str, list[int]]] = {}
        self._grown: Callable[[int], None] | None = None  # tells the cache what an index added

    def filtered(self, params: Mapping[str, Any], filters: Mapping[str, str]) -> list[Record]:
        """The records passing ``filters`` (as ``base.filter_records`` decides), in their order."""
        rows: list[int] | None = None
        for name, how in filters.items():
            wanted = params.get(name)
            if wanted is None or wanted == "":
                continue
            hits = self._rows_like(name, str(wanted).casefold()) if how == "like" else self._rows_exact(name, str(wanted))
            rows = hits if rows is None else sorted(set(rows).intersection(hits))
        return list(self.records) if rows is None else [self.records[i] for i in rows]

    def _rows_like(self, name: str, wanted: str) -> list[int]:
        if name not in self._like:
            folded = [("" if r.get(name) is None else str(r[name])).casefold() for r in self.records]
            starts = [0, *accumulate(len(v) + 1 for v in folded)][:-1] if folded else []
            self._like[name] = (SEPARATOR.join(folded), starts)
            self._grow(sys.getsizeof(self._like[name][0]) + sys.getsizeof(starts) + 28 * len(starts))
        text, starts = self._like[name]
        if SEPARATOR in wanted:  # could match across two values: no record holds it anyway unless one does
            return [i for i, r in enumerate(self.records)
                    if wanted in ("" if r.get(name) is None else str(r[name])).casefold()]
        rows, at = [], text.find(wanted)
        while at != -1:
            row = bisect_right(starts, at) - 1
            rows.append(row)
            at = text.find(wanted, starts[row + 1]) if row + 1 < len(starts) else -1
        return rows

    def _rows_exact(self, name: str, wanted: str) -> list[int]:
        if name not in self._exact:
            index: dict[str, list[int]] = {}
            for i, r in enumerate(self.records):
                index.setdefault("" if r.get(name) is None else str(r[name]), []).append(i)
            self._exact[name] = index
            self._grow(sys.getsizeof(index) + sum(sys.getsizeof(k) + 64 for k in index) + 8 * len(self.records))
        return self._exact[name].get(wanted, [])

    def _grow(self, nbytes: int) -> None:
        if self._grown is not None:
            self._grown(nbytes)


def estimate_bytes(reading: Reading) -> int:
    """The parsed data's footprint: list + sampled records' deep size scaled to all (±25% measured)."""
    records = reading.records
    size = sys.getsizeof(records) + sum(sys.getsizeof(v) for v in (reading.code, reading.message) if v)
    if records:
        step = max(1, len(records) // SAMPLE)
        sample = records[::step][:SAMPLE]
        size += int(sum(_deep(r) for r in sample) * len(records) / len(sample))
    return size


def _deep(value: Any) -> int:
    if isinstance(value, dict):  # keys are shared between records (json's key memo, ElementTree tags)
        return sys.getsizeof(value) + sum(_deep(v) for v in value.values())
    if isinstance(value, list):
        return sys.getsizeof(value) + sum(_deep(v) for v in value)
    return sys.getsizeof(value)


class _BoundedLRU:
    """An LRU bounded by estimated bytes and by entries; thread-safe. A value larger than the whole bound is served,
    not kept. What the two caches below share."""

    def __init__(self, *, max_bytes: int, max_entries: int):
        if max_bytes < 0 or max_entries < 0:
            raise ValueError(f"bounds must be >= 0 (max_bytes={max_bytes}, max_entries={max_entries})")
        self.max_bytes, self.max_entries = max_bytes, max_entries
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.bytes = 0
        self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def _found(self, key: Hashable) -> Any | None:
        """The value kept under ``key`` (now the most recent), counted as a hit; None, counted as a miss."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return found[0]
            self.misses += 1
            return None

    def _put(self, key: Hashable, value: Any, cost: int, on_kept: Callable[[], None] | None = None) -> None:
        """Keep ``value`` (unless a concurrent miss kept one first, or it exceeds the bound); ``on_kept`` runs under
        the lock once it is kept, before any other thread can find it."""
        if cost > self.max_bytes or self.max_entries == 0:
            return
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = (value, cost)
            self.bytes += cost
            if on_kept is not None:
                on_kept()
            self._evict(keep=key)

    def _add(self, key: Hashable, nbytes: int) -> None:
        """An entry grew by ``nbytes`` after it was kept."""
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return  # evicted meanwhile: what grew goes with it
            self._entries[key] = (found[0], found[1] + nbytes)
            self.bytes += nbytes
            self._evict(keep=key)

    def _evict(self, keep: Hashable | None = None) -> None:
        while self._entries and (self.bytes > self.max_bytes or len(self._entries) > self.max_entries):
            oldest = next(iter(self._entries))
            if oldest == keep and len(self._entries) == 1:
                break
            if oldest == keep:
                self._entries.move_to_end(oldest)
                continue
            _, cost = self._entries.pop(oldest)
            self.bytes -= cost

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.bytes = 0


class ReadingCache(_BoundedLRU):
    """LRU of ``CachedReading`` by key, bounded by estimated bytes and by entries; thread-safe."""

    def __init__(self, *, max_bytes: int = DEFAULT_MAX_BYTES, max_entries: int = DEFAULT_MAX_ENTRIES):
        super().__init__(max_bytes=max_bytes, max_entries=max_entries)

    def get_or_read(self, key: Hashable, read: Callable[[], Reading]) -> CachedReading:
        found = self._found(key)
        if found is not None:
            return found
        parsed = read()  # outside the lock: two concurrent misses read twice, and store once
        reading = CachedReading(parsed.failure, parsed.records, parsed.total, parsed.code, parsed.message)

        def count_its_indexes() -> None:  # the indexes a reading builds later count against the bound
            reading._grown = lambda n: self._add(key, n)

        self._put(key, reading, estimate_bytes(reading), on_kept=count_its_indexes)
        return reading


SHARED = ReadingCache()  # the process's cache: every ClientContext uses it unless given its own


# ---- replayed results, encoded ------------------------------------------------------------------------------------

RESULTS_MAX_BYTES = 64 * 2**20
RESULTS_MAX_ENTRIES = 4096


@dataclass(frozen=True)
class EncodedResult:
    """A replayed call's MCP result less its per-call ``_meta``: the structured content and its JSON text.

    Shared by every call that hits it; never mutated (the SDK serializes it into fresh objects per response)."""

    structured: dict[str, Any]
    text: str
    is_error: bool


def estimate_result_bytes(result: EncodedResult) -> int:
    """The text plus the structured content (its records sampled as ``estimate_bytes`` samples a reading's)."""
    size = sys.getsizeof(result.text) + _deep({k: v for k, v in result.structured.items() if k != "records"})
    records = result.structured.get("records") or []
    if records:
        step = max(1, len(records) // SAMPLE)
        sample = records[::step][:SAMPLE]
        size += sys.getsizeof(records) + int(sum(_deep(r) for r in sample) * len(records) / len(sample))
    return size


class ResultCache(_BoundedLRU):
    """LRU of ``EncodedResult`` by a result's replay key (``ToolResult.replay_key``: the tool and the page key of the
    replayed reading, so the bundle version and the recorded bytes; never a key or a secret), bounded by estimated
    bytes and entries; thread-safe. In memory only: nothing of it is written anywhere.

    The key holds everything a replayed result's structured content is a function of within one runtime (its
    catalog, its secrets and the key it fills in stay fixed): one cache per runtime, never shared between runtimes.
    """

    def __init__(self, *, max_bytes: int = RESULTS_MAX_BYTES, max_entries: int = RESULTS_MAX_ENTRIES):
        super().__init__(max_bytes=max_bytes, max_entries=max_entries)

    def get_or_encode(self, key: Hashable, encode: Callable[[], EncodedResult]) -> EncodedResult:
        found = self._found(key)
        if found is not None:
            return found
        encoded = encode()
        self._put(key, encoded, estimate_result_bytes(encoded))
        return encoded


__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_MAX_ENTRIES", "RESULTS_MAX_BYTES", "RESULTS_MAX_ENTRIES", "SHARED",
           "CachedReading", "EncodedResult", "ReadingCache", "ResultCache", "estimate_bytes",
           "estimate_result_bytes"]
