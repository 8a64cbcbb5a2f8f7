"""What the gateway records per tool call: Prometheus metrics and one JSON audit line.

The audit line links the MCP request (session, JSON-RPC id) to the runtime's upstream
exchange by the call's correlation id. It carries outcome, upstream code and latency, never
argument values: arguments may hold API keys (bench profile) or personal data.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from ..runtime.result import Outcome

AUDIT_LOGGER = "kopa.audit"
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


@dataclass(frozen=True)
class CallRecord:
    """One finished tool call, as telemetry sees it."""

    correlation_id: str
    session_id: str
    toolset: str
    tool: str
    platform: str
    outcome: Outcome
    upstream_code: str | None
    latency_s: float
    request_id: str | int | None
    upstream: dict[str, Any] | None = None  # redacted URL, HTTP status, attempts of the upstream exchange


class Telemetry:
    """Metrics in their own registry (one per gateway, so tests and apps never share counts) and the audit log."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.calls = Counter("kopa_tool_calls", "Tool calls by tool platform and outcome",
                             ["platform", "outcome"], registry=self.registry)
        self.errors = Counter("kopa_tool_errors", "Failed tool calls by outcome class (Table 7 group) and outcome",
                              ["outcome_class", "outcome"], registry=self.registry)
        self.latency = Histogram("kopa_tool_call_latency_seconds", "Tool call latency through the runtime",
                                 ["platform"], buckets=LATENCY_BUCKETS, registry=self.registry)
        self.audit = logging.getLogger(AUDIT_LOGGER)

    def record(self, call: CallRecord) -> None:
        self.calls.labels(call.platform, call.outcome.value).inc()
        if not call.outcome.ok:
            self.errors.labels(call.outcome.group.value, call.outcome.value).inc()
        self.latency.labels(call.platform).observe(call.latency_s)
        self.audit.info(json.dumps({
            "correlation_id": call.correlation_id, "session_id": call.session_id, "toolset": call.toolset,
            "tool": call.tool, "outcome": call.outcome.value, "upstream_code": call.upstream_code,
            "latency_ms": round(call.latency_s * 1000, 3), "request_id": call.request_id, "upstream": call.upstream,
        }, ensure_ascii=False, separators=(",", ":")))

    def exposition(self) -> bytes:
        """The Prometheus text format of every metric."""
        return generate_latest(self.registry)


class _JsonLineHandler(logging.FileHandler):
    def format(self, record: logging.LogRecord) -> str:
        return record.getMessage()  # the audit message is already one JSON object


def attach_audit_file(path: Path) -> logging.Handler:
    """Append every audit line (``AUDIT_LOGGER``) to ``path``, one JSON object per line; ``detach_audit_file``
    stops it. The operator console tails this file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = _JsonLineHandler(path, encoding="utf-8")
    logger = logging.getLogger(AUDIT_LOGGER)
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    return handler


def detach_audit_file(handler: logging.Handler) -> None:
    logging.getLogger(AUDIT_LOGGER).removeHandler(handler)
    handler.close()
