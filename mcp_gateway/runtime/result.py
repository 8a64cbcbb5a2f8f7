"""ToolResult and the outcome taxonomy of the paper's Table 7.

Every call ends in exactly one ``Outcome``. Structural failures implicate the call itself
(wrong parameter, wrong type, missing field); environmental ones come from the upstream's
state (rate limits, timeouts, server errors, auth, endpoints down) and are the only ones
worth retrying.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr


class OutcomeGroup(StrEnum):
    SUCCESS = "success"
    STRUCTURAL = "structural"
    ENVIRONMENTAL = "environmental"
    OTHER = "other"


class Outcome(StrEnum):
    SEMANTIC_SUCCESS = "semantic_success"  # a non-generic input carried a value
    GENERIC_SUCCESS = "generic_success"  # only key/paging/format were set
    SCHEMA_MISMATCH = "schema_mismatch"  # wrong type / unknown parameter / bad value
    MISSING_FIELD = "missing_field"  # a required input was absent
    RATE_LIMIT = "rate_limit"
    TIMEOUT = "timeout"
    SERVER_ERROR = "server_error"
    AUTH_ERROR = "auth_error"
    ENDPOINT_UNAVAILABLE = "endpoint_unavailable"
    UNCATEGORIZED = "uncategorized"
    REPLAY_MISS = "replay_miss"  # strict replay: the cassette bundle holds no answer for this request

    @property
    def group(self) -> OutcomeGroup:
        return _GROUPS[self]

    @property
    def ok(self) -> bool:
        return self.group is OutcomeGroup.SUCCESS

    @property
    def retryable(self) -> bool:
        """Environmental faults that a later attempt may not meet (auth errors will not go away)."""
        return self in (Outcome.RATE_LIMIT, Outcome.TIMEOUT, Outcome.SERVER_ERROR, Outcome.ENDPOINT_UNAVAILABLE)


_GROUPS = {
    Outcome.SEMANTIC_SUCCESS: OutcomeGroup.SUCCESS, Outcome.GENERIC_SUCCESS: OutcomeGroup.SUCCESS,
    Outcome.SCHEMA_MISMATCH: OutcomeGroup.STRUCTURAL, Outcome.MISSING_FIELD: OutcomeGroup.STRUCTURAL,
    Outcome.RATE_LIMIT: OutcomeGroup.ENVIRONMENTAL, Outcome.TIMEOUT: OutcomeGroup.ENVIRONMENTAL,
    Outcome.SERVER_ERROR: OutcomeGroup.ENVIRONMENTAL, Outcome.AUTH_ERROR: OutcomeGroup.ENVIRONMENTAL,
    Outcome.ENDPOINT_UNAVAILABLE: OutcomeGroup.ENVIRONMENTAL, Outcome.UNCATEGORIZED: OutcomeGroup.OTHER,
    Outcome.REPLAY_MISS: OutcomeGroup.OTHER,
}


class ToolResult(BaseModel):
    """What one tool call returns, to the model (structured content) and to the harness."""

    tool: str
    outcome: Outcome
    records: list[dict[str, Any]] = Field(default_factory=list)
    total_count: int | None = Field(None, description="records matching the query across all pages")
    page_no: int | None = None
    page_size: int | None = None
    upstream_code: str | None = Field(None, description="the platform's own result code (INFO-000, 00, 013, ...)")
    message: str | None = Field(None, description="for failures: what was wrong and how to fix it")
    correlation_id: str | None = None
    upstream: dict[str, Any] | None = Field(None, description="the upstream exchange for the audit log: redacted URL, "
                                                              "HTTP status, attempts (never shown to the model)")

    # A replayed result: what its structured content is a function of (tool, page key of the replayed reading);
    # None otherwise. The server keeps replayed results' encodings under it (``replay_cache.ResultCache``).
    _replay_key: tuple[Any, ...] | None = PrivateAttr(default=None)

    @property
    def replay_key(self) -> tuple[Any, ...] | None:
        return self._replay_key

    @property
    def is_error(self) -> bool:
        return not self.outcome.ok

    def structured(self) -> dict[str, Any]:
        """The MCP structuredContent / JSON the model sees."""
        out = self.model_dump(exclude={"tool", "correlation_id", "upstream"}, exclude_none=True)
        out["outcome"] = self.outcome.value
        return out
