"""The run's own Figures 4, 6 and 7 (paper §4, Appendix E.3–E.4) as SVG files, from ``edge.graph.stats.figures``.

    from edge.graph.plots import write_figures
    data = figures(store)                                     # edge.graph.stats: the JSON data
    write_figures(folder, data, edge_evidence(store), name="graph-…")   # figure-4.svg, figure-6.svg, figure-7.svg

Figure 4: (a) execution success of the skeleton, G* and the pruned set (in-loop, edges tried at least once and at
least ten times; held-out when measured), the paper's value as a black tick; (b) the share of tested edges that
never succeeded. Figure 6: trajectory pass rate and step success per round, faint, with their moving average bold.
Figure 7: every edge probed at least once, its prior s_e across and its posterior mean θ̄_e up, kept and pruned
apart, with the diagonal and τ.

Each file carries the numbers it draws: the figure's JSON data (the same as ``kopa edge graph stats --json``
prints under ``figure_N``) is its ``<dc:description>``, the values are written as text labels, and Figure 7's two
point sets are the groups ``figure-7-kept`` and ``figure-7-pruned`` (one marker each). Figures are made as
``matplotlib.figure.Figure`` objects and written by the SVG backend, never through pyplot (as
``bench.report.plots``); the files are byte-stable: a fixed ``svg.hashsalt``, no date in the metadata, text kept
as text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib
from matplotlib.figure import Figure

from .stats import EDGE_SETS, EdgeEvidence

__all__ = ["FIGURE_FILES", "figure_4_figure", "figure_6_figure", "figure_7_figure", "write_figures"]

FIGURE_FILES = {"figure_4": "figure-4.svg", "figure_6": "figure-6.svg", "figure_7": "figure-7.svg"}
_RC = {"svg.hashsalt": "kopa-edge-graph", "svg.fonttype": "none", "font.size": 9.0,
       "axes.spines.top": False, "axes.spines.right": False}
_LIGHT, _DARK, _HELD, _PASS, _STEP, _KEPT, _PRUNED = ("#a6c8e8", "#2f6ea8", "#8fbc8f", "#4c72b0", "#dd8452",
                                                      "#4c72b0", "#c44e52")
_LABELS = {"skeleton": "Skeleton", "refined": "G*", "pruned": "Pruned"}


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def figure_4_figure(data: Mapping[str, Any], *, name: str = "") -> Figure:
    """(a) success per edge set, in-loop (tₑ ≥ 1, tₑ ≥ 10) and held-out, beside the paper; (b) zero-success share."""
    success, zero = data["success"], data["zero_success"]
    bars = [("tested", "in-loop, tₑ ≥ 1", _LIGHT), ("high_evidence", f"in-loop, tₑ ≥ {data['high_evidence']}", _DARK)]
    held = any(success[s]["heldout"] is not None for s in EDGE_SETS)
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(9.6, 4.0))
        ax, bx = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
        columns = bars + ([("heldout", "held-out", _HELD)] if held else [])
        width = 0.8 / len(columns)
        for i, (key, label, color) in enumerate(columns):
            xs = [j + (i - (len(columns) - 1) / 2) * width for j in range(len(EDGE_SETS))]
            values = [success[s][key] if key == "heldout" else success[s][key]["rate"] for s in EDGE_SETS]
            drawn = ax.bar(xs, [100 * (v or 0.0) for v in values], width=width, color=color, label=label)
            for patch, s in zip(drawn.patches, EDGE_SETS):
                patch.set_gid(f"figure-4a-{key}-{s}")
            for x, v in zip(xs, values):
                ax.annotate(_pct(v), (x, 100 * (v or 0.0)), textcoords="offset points", xytext=(0, 2), ha="center",
                            fontsize=7)
        ax.scatter(range(len(EDGE_SETS)), [100 * success[s]["paper"] for s in EDGE_SETS], marker="_", s=700,
                   color="black", linewidths=1.6, zorder=4, label="paper", gid="figure-4a-paper")
        ax.set_xticks(range(len(EDGE_SETS)), [_LABELS[s] for s in EDGE_SETS])
        ax.set_ylim(0, 105)
        ax.set_ylabel("edge execution success (%)")
        ax.set_title("(a) execution success by edge set")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=4, frameon=False)
        values = [zero[s]["share"] for s in EDGE_SETS]
        drawn = bx.bar(range(len(EDGE_SETS)), [100 * (v or 0.0) for v in values], width=0.55, color=_DARK,
                       label="this run")
        for patch, s in zip(drawn.patches, EDGE_SETS):
            patch.set_gid(f"figure-4b-zero-success-{s}")
        for j, s in enumerate(EDGE_SETS):
            bx.annotate(f"{_pct(values[j])}\n({zero[s]['zero']}/{zero[s]['tested']})", (j, 100 * (values[j] or 0.0)),
                        textcoords="offset points", xytext=(0, 2), ha="center", fontsize=7)
        papers = [(j, zero[s]["paper"]) for j, s in enumerate(EDGE_SETS) if zero[s]["paper"] is not None]
        bx.scatter([j for j, _ in papers], [100 * p for _, p in papers], marker="_", s=500, color="black",
                   linewidths=1.6, zorder=4, label="paper", gid="figure-4b-paper")
        bx.set_xticks(range(len(EDGE_SETS)), [_LABELS[s] for s in EDGE_SETS])
        bx.set_ylim(0, 112)
        bx.set_ylabel("tested edges never succeeding (%)")
        bx.set_title("(b) zero-success edges")
        bx.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2, frameon=False)
        fig.suptitle(f"Figure 4 · execution-grounded refinement{f' · {name}' if name else ''}", fontsize=10)
        fig.tight_layout()
    return fig


def figure_6_figure(data: Mapping[str, Any], *, name: str = "") -> Figure:
    """Trajectory pass rate and step success per round (faint) and their moving average (bold)."""
    rounds = data["round"]
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(6.4, 3.8))
        ax = fig.subplots()
        for key, label, color in (("pass_rate", "trajectory pass rate", _PASS),
                                  ("step_success", "step success rate", _STEP)):
            raw = [float("nan") if v is None else 100 * v for v in data[key]]
            smooth = [float("nan") if v is None else 100 * v for v in data[f"{key}_ma"]]
            ax.plot(rounds, raw, color=color, alpha=0.35, linewidth=0.9, gid=f"figure-6-{key}")
            rise = data["rise"][key]
            ax.plot(rounds, smooth, color=color, linewidth=2.2, gid=f"figure-6-{key}-ma",
                    label=f"{label} ({'–' if rise is None else f'{100 * rise:+.1f}'} pp; paper "
                          f"{100 * data['paper_rise'][key]:+.0f} pp)")
            last = next((i for i in reversed(range(len(smooth))) if smooth[i] == smooth[i]), None)
            if last is not None:
                ax.annotate(f"{smooth[last]:.1f}", (rounds[last], smooth[last]), textcoords="offset points",
                            xytext=(4, 0), va="center", fontsize=7, color=color)
        ax.set_ylim(0, 105)
        ax.set_xlabel("Phase A round")
        ax.set_ylabel("success (%)")
        if rounds:
            ax.set_xlim(rounds[0] - 0.5, rounds[-1] + max(1.0, 0.08 * len(rounds)))
        ax.set_title(f"Figure 6 · sampled paths per round{f' · {name}' if name else ''}\n"
                     f"faint: per round; bold: moving average over {data['window']} rounds", fontsize=9)
        ax.legend(fontsize=7, loc="lower right", frameon=False)
        ax.grid(True, linewidth=0.4, alpha=0.5)
        fig.tight_layout()
    return fig


def figure_7_figure(data: Mapping[str, Any], edges: Sequence[EdgeEvidence], *, name: str = "") -> Figure:
    """Prior feasibility against posterior mean for every edge probed at least once, kept and pruned apart."""
    tau = data["tau"]
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(5.2, 5.0))
        ax = fig.subplots()
        ax.plot([0, 1], [0, 1], color="#888888", linestyle="--", linewidth=0.8, label="θ̄ₑ = sₑ")
        ax.axhline(tau, color="black", linewidth=0.8, linestyle=":", label=f"τ = {tau:g}")
        for key, pruned, color, marker in (("kept", False, _KEPT, "o"), ("pruned", True, _PRUNED, "x")):
            points = [e for e in edges if e.trials and e.pruned is pruned]
            ax.scatter([e.feasibility for e in points], [e.mean for e in points], s=10, color=color, marker=marker,
                       alpha=0.6, linewidths=0.8, label=f"{key} ({data[key]['edges']:,})", gid=f"figure-7-{key}")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("feasibility prior sₑ")
        ax.set_ylabel("posterior mean θ̄ₑ")
        ax.set_title(f"Figure 7 · prior vs posterior, {data['probed']:,} probed edges"
                     f"{f' · {name}' if name else ''}", fontsize=9)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=4, frameon=False)
        ax.grid(True, linewidth=0.4, alpha=0.5)
        fig.tight_layout()
    return fig


def write_figures(folder: Path | str, figures: Mapping[str, Any], edges: Sequence[EdgeEvidence], *,
                  name: str = "") -> dict[str, Path]:
    """figure-4.svg, figure-6.svg and figure-7.svg in ``folder`` (made if missing); their paths by figure key."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    made = {"figure_4": figure_4_figure(figures["figure_4"], name=name),
            "figure_6": figure_6_figure(figures["figure_6"], name=name),
            "figure_7": figure_7_figure(figures["figure_7"], edges, name=name)}
    written = {}
    for key, fig in made.items():
        path = folder / FIGURE_FILES[key]
        metadata = {"Date": None, "Creator": None, "Format": None, "Type": None,
                    "Title": f"{key.replace('_', ' ').capitalize()}{f' · {name}' if name else ''}",
                    "Description": json.dumps(figures[key], ensure_ascii=False, sort_keys=True)}
        with matplotlib.rc_context(_RC):
            fig.savefig(path, format="svg", metadata=metadata)
        written[key] = path
    return written
