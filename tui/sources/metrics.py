"""The gateway's ``/metrics`` text read into what the console shows: calls, error classes, latency percentiles.

    snapshot = parse_metrics(text, at=time.monotonic())
    snapshot.calls_total, snapshot.errors_by_class, snapshot.percentile(0.95)
    calls_per_s(earlier, later)

Percentiles come from the latency histogram's cumulative buckets, summed over platforms, interpolated
linearly inside the bucket the rank falls in (as Prometheus' ``histogram_quantile`` does).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from prometheus_client.parser import text_string_to_metric_families

CALLS = "kopa_tool_calls"
ERRORS = "kopa_tool_errors"
LATENCY = "kopa_tool_call_latency_seconds"


@dataclass(frozen=True)
class MetricsSnapshot:
    at: float  # monotonic seconds when it was read
    calls_by_outcome: dict[str, float] = field(default_factory=dict)
    calls_by_platform: dict[str, float] = field(default_factory=dict)
    errors_by_class: dict[str, float] = field(default_factory=dict)
    buckets: tuple[tuple[float, float], ...] = ()  # (upper bound, cumulative count), +Inf last

    @property
    def calls_total(self) -> float:
        return sum(self.calls_by_outcome.values())

    def percentile(self, q: float) -> float | None:
        """Latency in seconds at quantile ``q`` (None before any call)."""
        if not self.buckets or self.buckets[-1][1] <= 0:
            return None
        rank = q * self.buckets[-1][1]
        lower_bound, lower_count = 0.0, 0.0
        for bound, count in self.buckets:
            if count >= rank:
                if math.isinf(bound):
                    return lower_bound  # beyond the last finite bucket: its bound is all we know
                width = count - lower_count
                return lower_bound + (bound - lower_bound) * ((rank - lower_count) / width if width else 1.0)
            lower_bound, lower_count = bound, count
        return lower_bound


def parse_metrics(text: str, *, at: float) -> MetricsSnapshot:
    """Read the exposition text of ``mcp_gateway.server.Telemetry``; other metrics are ignored."""
    outcomes: dict[str, float] = defaultdict(float)
    platforms: dict[str, float] = defaultdict(float)
    errors: dict[str, float] = defaultdict(float)
    buckets: dict[float, float] = defaultdict(float)
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == f"{CALLS}_total":
                outcomes[sample.labels["outcome"]] += sample.value
                platforms[sample.labels["platform"]] += sample.value
            elif sample.name == f"{ERRORS}_total":
                errors[sample.labels["outcome_class"]] += sample.value
            elif sample.name == f"{LATENCY}_bucket":
                buckets[float(sample.labels["le"])] += sample.value
    return MetricsSnapshot(at, dict(outcomes), dict(platforms), dict(errors), tuple(sorted(buckets.items())))


def calls_per_s(earlier: MetricsSnapshot | None, later: MetricsSnapshot) -> float:
    """The call rate between two snapshots (0 without an earlier one, or after a gateway restart)."""
    if earlier is None or later.at <= earlier.at:
        return 0.0
    return max(later.calls_total - earlier.calls_total, 0.0) / (later.at - earlier.at)
