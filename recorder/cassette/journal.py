"""The write-ahead journal of a recording: what a crash leaves behind, and how it is read back.

    cassettes/NAME/.unsealed-ID/
        recording.json   what the recording was asked for (inherit, note, stamp), when and by which pid
        journal.bin      append-only frames, one per interaction:
                         length (u32, big-endian) | CRC-32 of the payload (u32) | payload
                         payload = header length (u32) | header JSON | response body
        SEALING          the version about to be renamed into place, and its parent (written just before)
        refused.jsonl    interactions refused because a key was found in them: fingerprint and reason, no bytes

A journal folder appears by one rename, with its ``recording.json`` already inside, so it is
either absent or readable. Every interaction is in ``journal.bin`` (one ``write`` per frame)
before the call that made it returns: a ``kill -9`` loses at most the calls in flight, which no
client saw answered. Frames are fsync'd every ``SYNC_EVERY`` interactions and before a seal,
so a power cut loses at most that many. A torn or damaged last frame (the crash came in the
middle of a write) fails its length or CRC check and is dropped, with everything after it.

The live recorder holds an exclusive ``flock`` on ``journal.bin``; the kernel releases it when
the process dies, however it dies. A journal whose lock can be taken is therefore interrupted,
never in use, and ``kopa cassettes recover`` may seal or discard it.
"""

from __future__ import annotations

import base64
import errno
import fcntl
import json
import os
import shutil
import struct
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .interaction import Interaction, Origin, utc_now

JOURNAL_FORMAT = "kopa-journal/1"
PREFIX = ".unsealed-"
NEW_PREFIX = ".new-"  # a journal folder being made (no data in it yet): removed by recover
META = "recording.json"
LOG = "journal.bin"
SEALING = "SEALING"
REFUSED = "refused.jsonl"  # interactions refused for holding a key (fingerprint and reason only)
SYNC_EVERY = 32  # interactions between fsyncs (a crash of the process loses none; a power cut at most these)
FRAME = struct.Struct(">II")  # payload length, CRC-32 of the payload
HEADER_LEN = struct.Struct(">I")
MAX_FRAME = 1 << 31  # a length beyond this is a damaged frame, not a body


class JournalError(OSError):
    """A journal could not be written or read; the message says which and what to do."""


class DiskFullError(JournalError):
    """No space left while journaling or sealing: nothing sealed was touched, the journal so far is kept."""

    def __init__(self, message: str):
        super().__init__(errno.ENOSPC, message)

    def __str__(self) -> str:
        return str(self.strerror)


class JournalInUseError(JournalError):
    """Another recorder (alive) holds the journal: it is not interrupted, so it is not recovered."""


def encode(item: Interaction) -> bytes:
    """One frame: the interaction's fields as JSON, then its body as raw bytes, behind a length and a CRC."""
    header = {
        "fingerprint": item.fingerprint, "method": item.method, "url": item.url, "platform": item.platform,
        "status": item.status, "headers": [list(h) for h in item.headers],
        "query_fingerprint": item.query_fingerprint, "page": item.page, "size": item.size, "tool": item.tool,
        "request_body": None if item.request_body is None else base64.b64encode(item.request_body).decode("ascii"),
        "recorded_at": item.recorded_at, "source": item.source, "recorder_version": item.recorder_version,
        "origin": str(item.origin), "duration_ms": item.duration_ms,
    }
    head = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    payload = HEADER_LEN.pack(len(head)) + head + item.body
    return FRAME.pack(len(payload), zlib.crc32(payload)) + payload


def decode(payload: bytes) -> Interaction:
    (n,) = HEADER_LEN.unpack_from(payload)
    h = json.loads(payload[HEADER_LEN.size:HEADER_LEN.size + n].decode("utf-8"))
    body = payload[HEADER_LEN.size + n:]
    request_body = None if h["request_body"] is None else base64.b64decode(h["request_body"])
    return Interaction(
        fingerprint=h["fingerprint"], method=h["method"], url=h["url"], platform=h["platform"], status=h["status"],
        body=body, headers=tuple(tuple(x) for x in h["headers"]), query_fingerprint=h["query_fingerprint"],
        page=h["page"], size=h["size"], tool=h["tool"], request_body=request_body, recorded_at=h["recorded_at"],
        source=h["source"], recorder_version=h["recorder_version"], origin=Origin(h["origin"]),
        duration_ms=h["duration_ms"])


@dataclass(frozen=True)
class Replayed:
    """What a journal holds: its whole frames, where they end, and how many bytes after them were torn."""

    interactions: list[Interaction]
    good_bytes: int
    torn_bytes: int


def read_frames(path: Path) -> Replayed:
    """Every whole, CRC-valid frame from the start; the first bad one ends the journal (a torn tail)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Replayed([], 0, 0)
    items, at = [], 0
    while at + FRAME.size <= len(data):
        length, crc = FRAME.unpack_from(data, at)
        end = at + FRAME.size + length
        if length < HEADER_LEN.size or length > MAX_FRAME or end > len(data):
            break
        payload = data[at + FRAME.size:end]
        if zlib.crc32(payload) != crc:
            break
        try:
            items.append(decode(payload))
        except (ValueError, KeyError, TypeError, struct.error):
            break
        at = end
    return Replayed(items, at, len(data) - at)


@dataclass(frozen=True)
class JournalInfo:
    """An unsealed recording on disk, as ``kopa cassettes list`` and ``recover`` show it."""

    name: str
    id: str
    folder: Path
    state: str  # "recording" (a live recorder holds it), "interrupted", or "cleanup-pending" (sealed; only its
    #             removal was cut short)
    interactions: int
    torn_bytes: int
    refused: int  # interactions not journaled because they held a key
    started_at: str | None
    pid: int | None
    meta: dict[str, Any]
    sealing: dict[str, Any] | None


def new_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]


class JournalWriter:
    """Appends interactions to one journal folder, holding its lock until closed."""

    def __init__(self, folder: Path, fd: int, offset: int, count: int):
        self.folder, self._fd, self._offset, self.count = folder, fd, offset, count
        self._unsynced = 0

    @classmethod
    def create(cls, bundle_folder: Path, meta: dict[str, Any]) -> JournalWriter:
        """Make ``.unsealed-ID`` with its ``recording.json`` in one rename, and take its lock."""
        bundle_folder.mkdir(parents=True, exist_ok=True)
        jid = new_id()
        staging = bundle_folder / f"{NEW_PREFIX}{jid}"
        staging.mkdir()
        try:
            _write_synced(staging / META, json.dumps({"format": JOURNAL_FORMAT, "id": jid, "started_at": utc_now(),
                                                       "pid": os.getpid(), **meta}, ensure_ascii=False).encode())
            fd = os.open(staging / LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            final = bundle_folder / f"{PREFIX}{jid}"
            os.rename(staging, final)
            fsync_dir(bundle_folder)
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            if exc.errno == errno.ENOSPC:
                raise DiskFullError(f"no space left on device to start a recording journal in {bundle_folder}; "
                                    f"nothing was written and every sealed version is untouched") from exc
            raise
        return cls(final, fd, 0, 0)

    @classmethod
    def adopt(cls, folder: Path) -> tuple[JournalWriter, list[Interaction]]:
        """Continue an interrupted journal: take its lock, cut a torn tail, and return what it holds.

        Raises:
            JournalInUseError: a live recorder holds it.
        """
        fd = os.open(folder / LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise JournalInUseError(f"{folder}: a running recorder holds this journal") from None
        replayed = read_frames(folder / LOG)
        if replayed.torn_bytes:
            os.ftruncate(fd, replayed.good_bytes)
            os.fsync(fd)
        return cls(folder, fd, replayed.good_bytes, len(replayed.interactions)), replayed.interactions

    def append(self, item: Interaction) -> None:
        """One frame, written whole before this returns (or cut back off on failure).

        Raises:
            DiskFullError: the device is full; the journal keeps every earlier frame.
        """
        frame = encode(item)
        try:
            view = memoryview(frame)
            while view:
                view = view[os.write(self._fd, view):]
        except OSError as exc:
            try:  # a partial frame would be dropped on read anyway; cutting it keeps appends after it readable
                os.ftruncate(self._fd, self._offset)
            except OSError:
                pass
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise DiskFullError(
                    f"no space left on device while journaling into {self.folder}: the {self.count:,} interaction(s) "
                    f"journaled so far are kept and every sealed version is untouched; free space, then run "
                    f"`kopa cassettes recover {self.folder.parent.name} --seal`") from exc
            raise
        self._offset += len(frame)
        self.count += 1
        self._unsynced += 1
        if self._unsynced >= SYNC_EVERY:
            self.sync()

    def refuse(self, item: Interaction, reason: str) -> None:
        """Note an interaction refused for holding a key: its fingerprint and why, never its bytes."""
        line = json.dumps({"fingerprint": item.fingerprint, "platform": item.platform, "reason": reason,
                           "at": utc_now()}, ensure_ascii=False)
        with open(self.folder / REFUSED, "a", encoding="utf-8") as f:
            f.write(line + "\n")

    def sync(self) -> None:
        if self._fd >= 0 and self._unsynced:
            os.fsync(self._fd)
            self._unsynced = 0

    def mark_sealing(self, version: str, parent: str | None) -> None:
        """Name the version about to be renamed into place, so a crash between the rename and the clean-up
        is finished by ``recover`` instead of being sealed a second time."""
        _write_synced(self.folder / SEALING, json.dumps({"version": version, "parent": parent}).encode())

    def close(self) -> None:
        if self._fd >= 0:
            try:
                self.sync()
            finally:
                os.close(self._fd)
                self._fd = -1

    def remove(self) -> None:
        """Close and delete the journal (its interactions are sealed, or discarded on purpose)."""
        self.close()
        remove_journal(self.folder)


def remove_journal(folder: Path) -> None:
    # Renamed away first: a half-deleted journal must never be read as a shorter recording.
    doomed = folder.with_name(f"{NEW_PREFIX}{folder.name.removeprefix(PREFIX)}")
    os.rename(folder, doomed)
    shutil.rmtree(doomed, ignore_errors=True)


def journals(bundle_folder: Path) -> Iterator[Path]:
    if bundle_folder.is_dir():
        yield from sorted(p for p in bundle_folder.iterdir() if p.name.startswith(PREFIX) and p.is_dir())


def in_use(folder: Path) -> bool:
    """True when a live recorder holds the journal's lock (the lock dies with its process)."""
    try:
        fd = os.open(folder / LOG, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def inspect(folder: Path, name: str, sealed_versions: set[str]) -> JournalInfo:
    """Read a journal folder without touching it."""
    try:
        meta = json.loads((folder / META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        meta = {}
    try:
        sealing = json.loads((folder / SEALING).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        sealing = None
    replayed = read_frames(folder / LOG)
    try:
        refused = len((folder / REFUSED).read_text(encoding="utf-8").splitlines())
    except OSError:
        refused = 0
    if in_use(folder):
        state = "recording"
    elif sealing and sealing.get("version") in sealed_versions:
        state = "cleanup-pending"
    else:
        state = "interrupted"
    return JournalInfo(name=name, id=folder.name.removeprefix(PREFIX), folder=folder, state=state,
                       interactions=len(replayed.interactions), torn_bytes=replayed.torn_bytes, refused=refused,
                       started_at=meta.get("started_at"), pid=meta.get("pid"), meta=meta, sealing=sealing)


def _write_synced(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
