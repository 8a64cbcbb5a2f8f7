"""Per-session state: the workspace (watchlists, reports, notes) and episode key tokens.

Each MCP session, benchmark episode or GRPO rollout has its own ``Session``; nothing is shared.
The workspace's state hash is SHA-256 over a canonical JSON serialization (sorted keys, no
whitespace, UTF-8), so the ENVIRONMENT scorer can compare a final state with a golden hash.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@dataclass
class Workspace:
    """What workspace tools write. Plain data, so it serializes canonically."""

    watchlists: dict[str, dict[str, str]] = field(default_factory=dict)  # list -> item -> note
    reports: dict[str, str] = field(default_factory=dict)  # title -> content
    notes: dict[str, str] = field(default_factory=dict)  # key -> text

    def snapshot(self) -> dict[str, Any]:
        return {"watchlists": self.watchlists, "reports": self.reports, "notes": self.notes}

    def state_hash(self) -> str:
        return hashlib.sha256(canonical_json(self.snapshot()).encode()).hexdigest()


@dataclass
class Session:
    """One isolated conversation or episode."""

    id: str
    workspace: Workspace = field(default_factory=Workspace)
    key_tokens: dict[str, str] = field(default_factory=dict)  # episode token -> platform id

    def issue_key_token(self, platform: str) -> str:
        """An episode-scoped stand-in for the platform key; the runtime maps it back."""
        for token, owner in self.key_tokens.items():
            if owner == platform:
                return token
        token = f"kopa-{platform}-{secrets.token_hex(8)}"
        self.key_tokens[token] = platform
        return token


DEFAULT_IDLE_SECONDS = 3600.0  # the MCP SDK drops idle HTTP sessions after 30 min; keep state a while longer


class SessionStore:
    """Sessions by id, created on first use, forgotten after ``idle_seconds`` unused; thread-safe."""

    def __init__(self, idle_seconds: float = DEFAULT_IDLE_SECONDS, clock: Callable[[], float] = time.monotonic):
        self._sessions: dict[str, Session] = {}
        self._last_used: dict[str, float] = {}
        self._lock = threading.Lock()
        self.idle_seconds, self._clock = idle_seconds, clock

    def get(self, session_id: str) -> Session:
        with self._lock:
            now = self._clock()
            self._expire(now)
            session = self._sessions.get(session_id)
            if session is None:
                session = self._sessions[session_id] = Session(session_id)
            self._last_used[session_id] = now
            return session

    def reset(self, session_id: str) -> Session:
        with self._lock:
            session = self._sessions[session_id] = Session(session_id)
            self._last_used[session_id] = self._clock()
            return session

    def drop(self, session_id: str) -> None:
        with self._lock:
            self._sessions.pop(session_id, None)
            self._last_used.pop(session_id, None)

    def __len__(self) -> int:
        return len(self._sessions)

    def _expire(self, now: float) -> None:
        for session_id in [s for s, used in self._last_used.items() if now - used > self.idle_seconds]:
            del self._sessions[session_id], self._last_used[session_id]
