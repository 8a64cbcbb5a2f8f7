"""Table 7: how one execution of an edge moves its Beta posterior.

Successes add to α (a semantic success, where a non-generic input carried a value, more than a generic-only
one); failures add to β, structural faults (the binding is wrong) far more than environmental ones (rate
limits, timeouts, server errors strike any edge at random). The outcome classes are the gateway's own
(``mcp_gateway.runtime.result.Outcome``), so an edge trial is classified exactly as any other tool call.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcp_gateway.runtime.result import Outcome, OutcomeGroup


@dataclass(frozen=True)
class Update:
    alpha: float = 0.0
    beta: float = 0.0


# Table 7's weights. A replay miss is no evidence about the binding at all (the bundle simply lacks that
# request): it moves nothing, and the trial is recorded as such.
TABLE_7: dict[Outcome, Update] = {
    Outcome.SEMANTIC_SUCCESS: Update(alpha=1.0),
    Outcome.GENERIC_SUCCESS: Update(alpha=0.3),
    Outcome.SCHEMA_MISMATCH: Update(beta=1.5),
    Outcome.MISSING_FIELD: Update(beta=1.0),
    Outcome.RATE_LIMIT: Update(beta=0.1),
    Outcome.TIMEOUT: Update(beta=0.3),
    Outcome.SERVER_ERROR: Update(beta=0.3),
    Outcome.AUTH_ERROR: Update(beta=0.5),
    Outcome.ENDPOINT_UNAVAILABLE: Update(beta=0.8),
    Outcome.UNCATEGORIZED: Update(beta=0.5),
    Outcome.REPLAY_MISS: Update(),
}



def update_for(outcome: Outcome | str) -> Update:
    return TABLE_7[Outcome(outcome)]


def is_structural(outcome: Outcome | str) -> bool:
    return Outcome(outcome).group is OutcomeGroup.STRUCTURAL


def is_environmental(outcome: Outcome | str) -> bool:
    return Outcome(outcome).group is OutcomeGroup.ENVIRONMENTAL
