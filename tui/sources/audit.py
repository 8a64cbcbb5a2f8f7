"""The gateway's audit log as the console reads it: one JSON object per line (``mcp_gateway`` telemetry).

    handler = attach_audit_file(path)        # the console's own gateway writes its audit lines here
    lines = read_audit_tail(path, 200)       # the newest last; a half-written last line is skipped
    [l for l in lines if AuditFilter(platform="dart", outcome="error").matches(l)]

``kopa serve`` appends its audit lines to ``<home>/logs/audit.jsonl`` (``KOPA_GATEWAY__AUDIT_FILE``), the file
the console reads by default; ``attach_audit_file`` is the gateway telemetry's.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TAIL_BYTES = 256 * 1024  # enough for ~1,000 lines; the file may be large
ERROR_OUTCOMES = "error"  # filter word for "any failed outcome"
SUCCESS_OUTCOMES = ("semantic_success", "generic_success")


@dataclass(frozen=True)
class AuditLine:
    session_id: str
    tool: str
    platform: str
    outcome: str
    upstream_code: str | None
    latency_ms: float
    toolset: str

    @property
    def ok(self) -> bool:
        return self.outcome in SUCCESS_OUTCOMES

    @classmethod
    def from_json(cls, data: dict[str, Any], platform_of: dict[str, str]) -> AuditLine:
        tool = str(data.get("tool", "?"))
        return cls(session_id=str(data.get("session_id", "")), tool=tool, platform=platform_of.get(tool, "?"),
                   outcome=str(data.get("outcome", "?")), upstream_code=data.get("upstream_code"),
                   latency_ms=float(data.get("latency_ms") or 0.0), toolset=str(data.get("toolset", "")))


@dataclass(frozen=True)
class AuditFilter:
    """Empty fields match everything; ``outcome="error"`` matches every failed outcome."""

    platform: str = ""
    tool: str = ""
    outcome: str = ""

    def matches(self, line: AuditLine) -> bool:
        if self.platform and line.platform != self.platform:
            return False
        if self.tool and self.tool not in line.tool:
            return False
        if self.outcome == ERROR_OUTCOMES:
            return not line.ok
        return not self.outcome or line.outcome == self.outcome


def read_audit_tail(path: Path, limit: int, platform_of: dict[str, str]) -> list[AuditLine]:
    """The last ``limit`` lines of ``path`` (none when it does not exist yet)."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(size - TAIL_BYTES, 0))
            chunk = f.read()
    except FileNotFoundError:
        return []
    lines = chunk.splitlines()
    if len(chunk) >= TAIL_BYTES and lines:
        lines = lines[1:]  # the first line of a cut-off chunk is partial
    out = []
    for raw in lines[-limit:]:
        try:
            out.append(AuditLine.from_json(json.loads(raw), platform_of))
        except (ValueError, TypeError):
            continue  # a line being written right now
    return out
