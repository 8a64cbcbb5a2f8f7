"""Test helper: a recorder process that dies by SIGKILL at a named point, and a disk-full scenario.

    python -m tests.recorder.crash_child ROOT NAME POINT N [--stamp S] [--fresh] [--resume]

records N requests (queries ``q-0`` … ``q-{N-1}``) through the recorder transport on the tiny
counting upstream into bundle NAME under ROOT, then commits. POINT says where the process kills
itself with SIGKILL (a real kill: no handler, no clean-up runs):

* ``none``: never (with ``--slow``, it pauses between requests so the test can kill it from outside)
* ``before-first-write``: as the first interaction is about to be journaled
* ``mid-journal``: after N//2 interactions are journaled
* ``torn-frame``: half-way through writing frame N//2 (a torn last record)
* ``parts-written``: during the seal, every part of the new version written, before its rename
* ``after-rename``: during the seal, the new version renamed into place, before the journal is removed

``python -m tests.recorder.crash_child disk-full ROOT`` runs the disk-full scenario in ROOT (a small
tmpfs the caller mounted) and prints what happened as JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from recorder import CassetteStore, Mode, RecorderTransport
from recorder.cassette import DiskFullError, Interaction, journal, store
from tests.recorder.tiny_upstream import KEY, ORIGIN, ROUTES, counting_app


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def arm(point: str, n: int) -> None:
    """Patch the recorder's own functions so that the process dies at ``point``."""
    if point == "before-first-write":
        journal.JournalWriter.create = classmethod(lambda cls, *a, **k: die())  # type: ignore[method-assign]
    elif point == "mid-journal":
        append = journal.JournalWriter.append

        def append_then_die(self, item):
            append(self, item)
            if self.count >= n // 2:
                die()
        journal.JournalWriter.append = append_then_die  # type: ignore[method-assign]
    elif point == "torn-frame":
        append, write = journal.JournalWriter.append, os.write

        def append_torn(self, item):
            if self.count == n // 2:
                frame = journal.encode(item)
                write(self._fd, frame[:len(frame) // 2])
                die()
            append(self, item)
        journal.JournalWriter.append = append_torn  # type: ignore[method-assign]
    elif point == "parts-written":
        store.seal = lambda tmp, final: die()
    elif point == "after-rename":
        store.journal.remove_journal = lambda folder: die()  # type: ignore[attr-defined]


async def record(root: Path, name: str, n: int, *, stamp: str | None, inherit: bool, resume: bool,
                 slow: bool, start: int) -> None:
    recording = CassetteStore(root).recording(name, keys={"dart": KEY}, stamp=stamp, inherit=inherit, resume=resume)
    print(json.dumps({"resumed": recording.resumed}), flush=True)
    transport = RecorderTransport(Mode.RECORD, routes=ROUTES, inner=httpx.ASGITransport(counting_app()),
                                  recording=recording, source="sandbox@test")
    async with httpx.AsyncClient(transport=transport) as http:
        for i in range(start, start + n):
            await http.get(f"{ORIGIN}/dart/api/list.json", params={"crtfc_key": KEY, "q": f"q-{i}"})
            if slow:
                time.sleep(0.01)
    recording.commit()


def disk_full(root: Path) -> dict[str, object]:
    """Fill a small filesystem by journaling, then try to seal, then grow it and recover."""
    cassettes = CassetteStore(root / "cassettes")
    small = [Interaction(fingerprint=f"fp{i}", method="GET", url=f"dart:/list.json?q={i}", platform="dart",
                         status=200, body=b'{"status": "000"}') for i in range(3)]
    earlier = cassettes.write("b", small, parent=None)
    out: dict[str, object] = {"earlier": earlier.version}
    recording = cassettes.recording("b")
    try:
        for i in range(10_000):
            recording.add(Interaction(fingerprint=f"big{i}", method="GET", url=f"dart:/big?i={i}", platform="dart",
                                      status=200, body=os.urandom(48 * 1024)))
    except DiskFullError as exc:
        out["journal_error"] = str(exc)
    out["journaled"] = len(recording)
    try:
        recording.commit()
    except DiskFullError as exc:
        out["seal_error"] = str(exc)
    recording.close()
    out["earlier_verifies"] = cassettes.open(f"b@{earlier.version}").version == earlier.version
    out["head"] = cassettes.head("b")
    out["leftovers"] = sorted(p.name for p in (root / "cassettes" / "b").iterdir() if p.name.startswith(".tmp-"))
    out["unsealed"] = [(j.state, j.interactions) for j in cassettes.unsealed("b")]
    subprocess.run(["mount", "-o", "remount,size=64m", str(root)], check=True)  # the operator frees space
    (recovered,) = cassettes.recover("b")
    out["recovered"] = [recovered.action, recovered.interactions]
    head = cassettes.open("b")
    out["after"] = {"interactions": len(head), "parent": head.manifest.parent}
    return out


if __name__ == "__main__":
    if sys.argv[1] == "disk-full":
        print(json.dumps(disk_full(Path(sys.argv[2]))), flush=True)
        sys.exit(0)
    root, name, point, n = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
    flags = sys.argv[5:]
    stamp = flags[flags.index("--stamp") + 1] if "--stamp" in flags else None
    start = int(flags[flags.index("--start") + 1]) if "--start" in flags else 0
    arm(point, n)
    asyncio.run(record(root, name, n, stamp=stamp, inherit="--fresh" not in flags, resume="--resume" in flags,
                       slow="--slow" in flags, start=start))
