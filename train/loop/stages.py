"""A loop run folder's stages: each writes under its own folder and is done when ``done.json`` says so and checks.

    stage = Stage(run, "sft")
    if stage.finished() is None:          # not done yet (a folder left by a killed run is cleared first)
        stage.begin()
        ...write into stage.dir...
        stage.finish(["checkpoint", "metrics.jsonl"], figures={...})

``done.json`` lists every output file with its size and SHA-256. A stage whose ``done.json`` is there but whose
files are missing, changed or unreadable is **refused** (``LoopError`` naming the stage and the file), never reused
and never silently redone: what it holds may be the only copy of hours of training, so the operator decides
(``rm -r`` the stage folder to redo it). A stage folder without ``done.json`` is the remains of a killed run:
``begin`` clears it, except for the files a stage keeps to continue from (an evaluation's episodes, SFT's latest
trainer checkpoint, metrics and probes).
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from recorder.cassette.bundle import file_sha256

__all__ = ["DONE_FILE", "LoopError", "Stage"]

DONE_FILE = "done.json"


class LoopError(ValueError):
    """The loop cannot go on: bad settings, a corrupt stage, a contaminated split; the message says which."""


def _files(folder: Path, names: Iterable[str]) -> list[Path]:
    out = []
    for name in names:
        path = folder / name
        if path.is_dir():
            out += sorted(p for p in path.rglob("*") if p.is_file())
        elif path.is_file():
            out.append(path)
        else:
            raise LoopError(f"stage {folder.name}: its output {name} was not written")
    return out


class Stage:
    """One stage of a loop run (module doc)."""

    def __init__(self, run: Path, name: str):
        self.run, self.name = run, name
        self.dir = run / name
        self.started = 0.0

    def finished(self) -> dict[str, Any] | None:
        """The stage's ``done.json`` when it is complete and its files check; None when it has not finished.

        Raises:
            LoopError: it finished but its record or an output is corrupt, missing or changed.
        """
        done = self.dir / DONE_FILE
        if not done.is_file():
            return None
        redo = f"remove {self.dir} to run the stage again"
        try:
            record = json.loads(done.read_text(encoding="utf-8"))
            files = record["files"]
        except (json.JSONDecodeError, KeyError, TypeError, UnicodeDecodeError) as exc:
            raise LoopError(f"stage {self.name}: {done} is not a stage record ({exc}); {redo}") from None
        for rel, expected in files.items():
            path = self.dir / rel
            if not path.is_file():
                raise LoopError(f"stage {self.name}: its output {rel} is missing; {redo}")
            if path.stat().st_size != expected["bytes"] or file_sha256(path) != expected["sha256"]:
                raise LoopError(f"stage {self.name}: its output {rel} changed since the stage finished; {redo}")
        return record

    def begin(self, keep: Iterable[str] = ()) -> None:
        """Start the stage: its folder made, anything a killed run left there removed but ``keep`` (names or
        ``fnmatch`` patterns, such as ``checkpoint-*``)."""
        kept = tuple(keep)
        if self.dir.exists():
            for child in self.dir.iterdir():
                if any(fnmatch.fnmatchcase(child.name, pattern) for pattern in kept):
                    continue
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        self.dir.mkdir(parents=True, exist_ok=True)
        self.started = time.monotonic()

    def finish(self, outputs: Iterable[str], figures: dict[str, Any] | None = None) -> dict[str, Any]:
        """Record the stage as done: its outputs (files or folders under the stage folder) hashed, and its figures."""
        files = {str(p.relative_to(self.dir)): {"bytes": p.stat().st_size, "sha256": file_sha256(p)}
                 for p in _files(self.dir, outputs)}
        record = {"stage": self.name, "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
                  "seconds": round(time.monotonic() - self.started, 1) if self.started else None,
                  "files": files, "figures": figures or {}}
        tmp = self.dir / (DONE_FILE + ".tmp")
        tmp.write_text(json.dumps(record, indent=1, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, self.dir / DONE_FILE)
        return record
