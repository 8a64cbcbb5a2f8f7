"""ENVIRONMENT: does the final workspace state hash to the golden one? (paper Appendix B.3)

    from bench.scoring.environment import golden_state_hash, score_environment
    golden = golden_state_hash({"notes": {"answer": "23"}})  # annotate a task
    score = score_environment(session.workspace, golden)      # at the end of an episode
    score.passed

The hash is the gateway's own, ``Workspace.state_hash`` (SHA-256 over ``canonical_json`` of the
snapshot), so a state the gateway reports and a state annotated here always hash alike. A golden
state given as a dict is first turned into a ``Workspace``: sections it leaves out are empty, as in a
fresh session, and a section the workspace does not have is refused.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp_gateway.runtime import Workspace

__all__ = ["EMPTY_WORKSPACE_HASH", "EnvironmentScore", "golden_state_hash", "score_environment"]

_SECTIONS = tuple(f.name for f in dataclasses.fields(Workspace))
_SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")


def golden_state_hash(state: Workspace | Mapping[str, Any]) -> str:
    """The hash a task stores as its golden state.

    Args:
        state: a workspace, or its sections as a dict (``watchlists``, ``reports``, ``notes``).

    Raises:
        ValueError: the dict names a section the workspace does not have.
    """
    return _workspace(state).state_hash()


EMPTY_WORKSPACE_HASH = Workspace().state_hash()  # tasks that write nothing end here


@dataclass(frozen=True)
class EnvironmentScore:
    passed: bool
    final_hash: str
    golden_hash: str


def score_environment(final: Workspace | Mapping[str, Any], golden_hash: str) -> EnvironmentScore:
    """Compare the episode's final workspace with the task's golden hash.

    Raises:
        ValueError: ``golden_hash`` is not a SHA-256 hex digest, or ``final`` names an unknown section.
    """
    expected = golden_hash.strip().lower()
    if not _SHA256_HEX.match(expected):
        raise ValueError(f"golden state hash {golden_hash!r} is not a SHA-256 hex digest (64 hex characters); "
                         "compute it with golden_state_hash()")
    actual = _workspace(final).state_hash()
    return EnvironmentScore(passed=actual == expected, final_hash=actual, golden_hash=expected)


def _workspace(state: Workspace | Mapping[str, Any]) -> Workspace:
    if isinstance(state, Workspace):
        return state
    unknown = sorted(set(state) - set(_SECTIONS))
    if unknown:
        raise ValueError(f"workspace state has unknown sections {unknown}; a workspace has {list(_SECTIONS)}")
    return Workspace(**{name: dict(state[name]) for name in _SECTIONS if name in state})
