"""EDGE Phase A: the execution-grounded dynamic tool graph (paper §3.2, Appendix E, Tables 7 and 9).

    skeleton = build_skeleton(catalog)                        # similar (output of u, input of v) pairs
    store = GraphStore.create(path, meta={...})
    await build_graph(runtime, catalog, store, PhaseASettings(), proposer=RuleProposer(),
                      candidates=lambda: skeleton)            # T rounds: sample, execute, update, prune

Modules: ``skeleton`` (character n-gram retrieval with hnswlib), ``proposer`` (rule-based bindings and
source plans), ``llm_proposer`` (the same from an OpenAI-compatible endpoint, rule fallback), ``posterior`` and ``outcomes`` (Beta updates by Table 7, pruning by Eq. 5), ``sampler``
(Thompson sampling), ``executor`` (paths run through ``ToolRuntime``), ``pool`` (where a round's paths run:
this event loop, local worker processes or Ray tasks), ``store`` (one DuckDB file per
run), ``build`` (the loop), ``stats`` (Figure 4's held-out comparison, Figures 6 and 7's series), ``plots`` (the three as SVG).
"""

from .build import RoundSummary, build_graph
from .executor import PathRunner
from .llm_proposer import LLMProposer
from .pool import InProcessPaths, ProcessPaths, RayPaths
from .posterior import EdgePosterior
from .proposer import BindingProposal, RuleProposer
from edge.settings import PhaseASettings
from .skeleton import CandidateEdge, build_skeleton
from .store import GraphStore, GraphStoreError

__all__ = ["BindingProposal", "CandidateEdge", "EdgePosterior", "GraphStore", "GraphStoreError", "InProcessPaths",
           "LLMProposer", "PathRunner", "PhaseASettings", "ProcessPaths", "RayPaths",
           "RoundSummary", "RuleProposer", "build_graph", "build_skeleton"]
