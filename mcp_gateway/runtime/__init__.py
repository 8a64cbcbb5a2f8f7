"""ToolRuntime, per-session state and the tool-result model (import the runtime lazily: clients import results)."""

from .result import Outcome, OutcomeGroup, ToolResult
from .session import Session, SessionStore, Workspace, canonical_json

__all__ = ["Outcome", "OutcomeGroup", "Session", "SessionStore", "ToolResult", "Workspace", "canonical_json"]
