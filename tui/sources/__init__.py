"""The console's data access: one ``ApplianceSource`` over the gateway (HTTP), the home and the metadata DB."""

from mcp_gateway.server import attach_audit_file, detach_audit_file

from .audit import AuditFilter, AuditLine, read_audit_tail
from .bench_job import AGENTS, BenchJob, JobCancelled
from .cassettes import DRIFT_GROUPS, BundleRow, Cassettes, DriftView
from .catalog_search import ToolHit, ToolSearch
from .edge_jobs import DatasetRun, EdgeJobs, GraphRun
from .gateway_http import (CallOutcome, GatewayClient, GatewayDown, GatewayEndpoint, GatewayError, GatewayRefused,
                           Health)
from .local_gateway import LocalGateway
from .metrics import MetricsSnapshot, calls_per_s, parse_metrics
from .records import DomainRow, Records
from .source import AUDIT_FILE, ApplianceSource

__all__ = ["AGENTS", "AUDIT_FILE", "ApplianceSource", "AuditFilter", "AuditLine", "BenchJob",
           "BundleRow", "CallOutcome", "Cassettes", "DRIFT_GROUPS", "DatasetRun", "DomainRow", "DriftView",
           "EdgeJobs", "GatewayClient", "GatewayDown", "GatewayEndpoint", "GatewayError", "GatewayRefused", "GraphRun",
           "Health", "JobCancelled",
           "LocalGateway", "MetricsSnapshot", "Records", "ToolHit", "ToolSearch", "attach_audit_file",
           "calls_per_s", "detach_audit_file", "parse_metrics", "read_audit_tail"]
