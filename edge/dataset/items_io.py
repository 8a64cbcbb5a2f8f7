"""Synthesized items and rejections on disk: JSON Lines, one model per line, written once and atomically.

    write_items(folder / "items.jsonl", items)       # refuses to replace an existing file
    items = read_items(folder / "items.jsonl")       # a bad line is one error naming the file and line

A dataset folder (``kopa edge synth|filter|export``) holds ``items.jsonl`` (what synthesis produced),
``kept.jsonl`` and ``rejections.jsonl`` (what the funnel kept and why it dropped the rest), and the export.
Files are never overwritten: a run that wants other output writes to another folder.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from edge.synth.item import Rejection, SynthItem

__all__ = ["DatasetFileError", "read_items", "read_json", "read_rejections", "write_json", "write_lines"]

M = TypeVar("M", bound=BaseModel)


class DatasetFileError(ValueError):
    """A dataset file that is missing, already there, or holds a line that is not what it should be."""


def _write_once(path: Path, text: str) -> Path:
    if path.exists():
        raise DatasetFileError(f"{path} exists; dataset files are written once (choose another folder)")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


def write_lines(path: Path, models: Sequence[BaseModel]) -> Path:
    return _write_once(path, "".join(m.model_dump_json() + "\n" for m in models))


def write_json(path: Path, value: Any) -> Path:
    return _write_once(path, json.dumps(value, ensure_ascii=False, indent=1) + "\n")  # insertion order: stages


def read_json(path: Path) -> Any:
    if not path.is_file():
        raise DatasetFileError(f"{path} not found")
    return json.loads(path.read_text(encoding="utf-8"))


def _read(path: Path, model: type[M]) -> list[M]:
    if not path.is_file():
        raise DatasetFileError(f"{path} not found")
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(model.model_validate_json(line))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(line)"
            raise DatasetFileError(f"{path}:{number}: not a {model.__name__}: {where}: {first['msg']}") from exc
    return out


def read_items(path: Path) -> list[SynthItem]:
    return _read(path, SynthItem)


def read_rejections(path: Path) -> list[Rejection]:
    return _read(path, Rejection)
