"""The console's data layer on its own: /metrics parsing, the audit tail and its filters, the try-it form's
argument typing, the masked token, and `kopa tui` loading Textual only when it runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr

from mcp_gateway.runtime.result import Outcome
from mcp_gateway.server import Telemetry
from mcp_gateway.server.telemetry import CallRecord
from tui.screens.try_tool import parse_arguments
from tui.sources import AuditFilter, GatewayEndpoint, attach_audit_file, calls_per_s, detach_audit_file, parse_metrics
from tui.sources.audit import read_audit_tail

REPO = Path(__file__).resolve().parents[2]


def _record(telemetry: Telemetry, tool: str, platform: str, outcome: Outcome, latency_s: float) -> None:
    telemetry.record(CallRecord(correlation_id="c" * 32, session_id="s-1", toolset="all", tool=tool,
                                platform=platform, outcome=outcome, upstream_code=None, latency_s=latency_s,
                                request_id=1))


def test_metrics_give_calls_error_classes_and_latency_percentiles(tmp_path: Path):
    telemetry = Telemetry()
    handler = attach_audit_file(tmp_path / "audit.jsonl")
    try:
        for _ in range(9):
            _record(telemetry, "search_laws", "law", Outcome.SEMANTIC_SUCCESS, 0.004)  # bucket (0, 5 ms]
        _record(telemetry, "list_tollbooths", "ex", Outcome.RATE_LIMIT, 2.0)  # bucket (1, 2.5 s]
    finally:
        detach_audit_file(handler)
    earlier = parse_metrics("", at=10.0)
    snapshot = parse_metrics(telemetry.exposition().decode(), at=12.0)
    assert snapshot.calls_total == 10 and snapshot.calls_by_platform == {"law": 9, "ex": 1}
    assert snapshot.errors_by_class == {Outcome.RATE_LIMIT.group.value: 1}
    assert snapshot.percentile(0.5) == pytest.approx(0.005 * 5 / 9)  # rank 5 of the 9 in the first bucket
    assert 1.0 < snapshot.percentile(0.99) <= 2.5
    assert calls_per_s(earlier, snapshot) == 5.0 and calls_per_s(None, snapshot) == 0.0
    # the same calls as audit lines, read back with their platforms and filtered
    lines = read_audit_tail(tmp_path / "audit.jsonl", 100, {"search_laws": "law", "list_tollbooths": "ex"})
    assert len(lines) == 10 and lines[-1].tool == "list_tollbooths" and lines[-1].platform == "ex"
    assert [l.tool for l in lines if AuditFilter(outcome="error").matches(l)] == ["list_tollbooths"]
    assert len([l for l in lines if AuditFilter(platform="law", tool="laws").matches(l)]) == 9


def test_an_audit_tail_skips_a_half_written_line_and_a_missing_file(tmp_path: Path):
    path = tmp_path / "audit.jsonl"
    path.write_text('{"tool": "search_laws", "outcome": "semantic_success", "latency_ms": 3}\n{"tool": "se',
                    encoding="utf-8")
    assert [l.tool for l in read_audit_tail(path, 10, {})] == ["search_laws"]
    assert read_audit_tail(tmp_path / "none.jsonl", 10, {}) == []


def test_try_it_arguments_are_typed_by_the_schema():
    schema = {"properties": {"n": {"type": "integer"}, "x": {"type": "number"}, "b": {"type": "boolean"},
                             "q": {"type": "string"}}}
    assert parse_arguments(schema, {"n": "5", "x": "0.5", "b": "True", "q": " 서울역 ", "empty": ""}) == {
        "n": 5, "x": 0.5, "b": True, "q": "서울역"}
    with pytest.raises(ValueError, match="n: 'five' is not a integer"):
        parse_arguments(schema, {"n": "five"})


def test_the_token_is_masked():
    endpoint = GatewayEndpoint("http://127.0.0.1:1", SecretStr("tok-abcdefghijklmnop"))
    assert endpoint.masked_token == "tok…op" and "abcdefghijklmnop" not in repr(endpoint)
    assert GatewayEndpoint("http://x", SecretStr("short")).masked_token == "••••••"


def test_kopa_starts_without_loading_textual():
    code = "import sys, appliance.cli; print('textual' in sys.modules, 'tui' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_the_package_exports_exist():
    import tui
    import tui.sources

    for module in (tui, tui.sources):
        assert [name for name in module.__all__ if not hasattr(module, name)] == []
