"""`kopa record`: run a list of tool calls through the gateway in record mode and commit a bundle.

Calls come from a calls file (JSON list or JSONL of ``{"tool": ..., "args": {...}}``) or from a
task set (JSON list or JSONL of tasks whose ``golden_actions`` hold ``{"tool"|"name", "args"|
"arguments"}``). Filters keep only some platforms or tools. Every call is made once, as an agent
would make it; the gateway's clients add the pages a whole-result replay needs.

Each exchange is journaled as it is recorded (``recorder.cassette.journal``): a run that is
killed leaves its exchanges on disk, and the next ``kopa record`` into the same bundle resumes
them (or ``kopa cassettes recover`` seals them) before the new version is sealed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_gateway.catalog import Catalog
from mcp_gateway.gateway import open_gateway
from recorder import BundleRef

from .config import KopaSettings
from .sandbox_service import in_process_sandbox


class CallsFileError(ValueError):
    """A calls or task file that cannot be read; the message names the file, the line and the field."""


@dataclass(frozen=True)
class Call:
    tool: str
    args: dict[str, Any]
    where: str  # file:line, for messages


def _documents(path: Path) -> list[tuple[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CallsFileError(f"{path}: {exc.strerror}") from None
    try:
        data = json.loads(text)
        return [(f"{path}[{i}]", d) for i, d in enumerate(data if isinstance(data, list) else [data])]
    except json.JSONDecodeError:
        pass
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                out.append((f"{path}:{n}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise CallsFileError(f"{path}:{n}: not JSON ({exc.msg})") from None
    return out


def _call(where: str, item: Any) -> Call:
    if not isinstance(item, dict):
        raise CallsFileError(f"{where}: expected an object with 'tool' and 'args'")
    tool = item.get("tool", item.get("name"))
    args = item.get("args", item.get("arguments", {}))
    if not isinstance(tool, str) or not tool:
        raise CallsFileError(f"{where}: missing 'tool' (the tool's name)")
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            raise CallsFileError(f"{where}: 'args' is a string that is not a JSON object") from None
    if not isinstance(args, dict):
        raise CallsFileError(f"{where}: 'args' must be an object")
    return Call(tool, args, where)


def load_calls(path: Path) -> list[Call]:
    return [_call(where, item) for where, item in _documents(path)]


def load_task_calls(path: Path) -> list[Call]:
    calls = []
    for where, task in _documents(path):
        actions = task.get("golden_actions", task.get("actions")) if isinstance(task, dict) else None
        if not isinstance(actions, list):
            raise CallsFileError(f"{where}: a task needs a 'golden_actions' list")
        calls += [_call(f"{where}.golden_actions[{i}]", a) for i, a in enumerate(actions)]
    return calls


def select(calls: Iterable[Call], catalog: Catalog, platforms: set[str], tools: set[str]) -> list[Call]:
    """Calls of known upstream tools that pass the filters (an unknown tool is an error, not skipped)."""
    chosen = []
    for call in calls:
        if call.tool not in catalog:
            raise CallsFileError(f"{call.where}: unknown tool {call.tool!r}")
        spec = catalog.get(call.tool)
        if spec.endpoint is None:
            continue  # built-in tools have nothing to record
        if (platforms and spec.endpoint.platform not in platforms) or (tools and call.tool not in tools):
            continue
        chosen.append(call)
    return chosen


@dataclass
class RecordRun:
    ref: BundleRef | None
    results: list[tuple[Call, str, int | None]]  # call, outcome, total count
    recorded: int
    resumed: int = 0  # exchanges taken over from an interrupted recording of the same bundle


async def record_calls(settings: KopaSettings, calls: list[Call], *, bundle: str, upstream: str, inherit: bool,
                       progress: Callable[[Call, str], None] = lambda c, o: None) -> RecordRun:
    gateway = open_gateway(upstream=upstream, sandbox=in_process_sandbox(settings) if upstream == "sandbox" else None,
                           home=settings.home_dir, key_file=settings.gateway.key_file, mode="record", cassettes=settings.cassettes_dir,
                           bundle=bundle, inherit=inherit, resume_recording=True)
    results = []
    resumed = gateway.recording.resumed if gateway.recording is not None else 0
    try:
        for call in calls:
            result = await gateway.runtime.call(call.tool, call.args, "record")
            results.append((call, str(result.outcome), result.total_count))
            progress(call, str(result.outcome))
        recorded = len(gateway.recording or [])
    finally:
        await gateway.aclose()  # commits
    return RecordRun(gateway.committed, results, recorded, resumed)
