"""ToolRuntime, per-session state and the tool-result model (import the runtime lazily: clients import results)."""

from .expression import ExpressionError, evaluate_expression
from .result import Outcome, OutcomeGroup, ToolResult
from .session import Session, SessionStore, Workspace, canonical_json

__all__ = ["ExpressionError", "Outcome", "OutcomeGroup", "Session", "SessionStore", "ToolResult", "Workspace",
           "canonical_json", "evaluate_expression"]
