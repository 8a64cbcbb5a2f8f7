"""The report's two plots as inline SVG: per-domain pass@1 with seed CIs, and Action against pass@1.

    from bench.report.plots import domain_pass_at_1_svg, action_vs_pass_svg
    svg = domain_pass_at_1_svg(report)     # "<svg ...>...</svg>", ready to paste into an HTML page

Figures are made as ``matplotlib.figure.Figure`` objects and written by the SVG backend, never through
pyplot, so no GUI backend is touched and nothing global changes (the same as drawing on Agg). The output is
byte-stable: a fixed ``svg.hashsalt``, no date in the metadata, text kept as text (``svg.fonttype: none``),
and every id prefixed per plot so that two plots on one page never share an id. The XML prolog, the DTD URL
and the namespace declarations are dropped: HTML5 parses inline SVG without them.
"""

from __future__ import annotations

import io
import re

import matplotlib
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .model import RunReport

__all__ = ["action_vs_pass_svg", "domain_pass_at_1_svg"]

_RC = {"svg.hashsalt": "kopa-bench-report", "svg.fonttype": "none", "font.size": 9.0,
       "axes.spines.top": False, "axes.spines.right": False}
_METADATA = {"Date": None, "Creator": None, "Format": None, "Type": None}
_BAR, _ALL = "#4c72b0", "#dd8452"
_SIZE = (6.4, 3.6)


def domain_pass_at_1_svg(report: RunReport) -> str:
    """Bars of pass@1 (%) per domain and overall, with the 95 % seed interval (drawn within 0–100) from two seeds."""
    labels = [d.domain for d in report.domains] + ["all"]
    values = [100 * d.pass_at[1] for d in report.domains] + [100 * report.summary.pass_at[1]]
    cis = [d.ci for d in report.domains] + [report.summary.seed_ci]
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=_SIZE)
        ax = fig.subplots()
        xs = list(range(len(labels)))
        ax.bar(xs, values, color=[_BAR] * (len(labels) - 1) + [_ALL], width=0.6)
        for x, value, ci in zip(xs, values, cis):
            if ci is not None:
                low, high = max(100 * ci.low, 0.0), min(100 * ci.high, 100.0)  # the tables give it unclipped
                ax.errorbar([x], [value], yerr=[[max(value - low, 0.0)], [max(high - value, 0.0)]], fmt="none",
                            ecolor="#222222", capsize=5, linewidth=1.2)
            ax.annotate(f"{value:.1f}", (x, value), textcoords="offset points", xytext=(8, 3), fontsize=8)
        ax.set_xticks(xs, labels)
        ax.set_ylim(0, 105)
        ax.set_ylabel("pass@1 (%)")
        ax.set_title(f"pass@1 per domain · {report.agent}"
                     + (f" · 95% CI over {len(report.seeds)} seeds" if report.summary.seed_ci else " · one seed"))
        fig.tight_layout()
        return _svg(fig, "plot-domains")


def action_vs_pass_svg(report: RunReport) -> str:
    """One point per domain (and one for the whole run): pass@1 (%) across, Action (%) up; unsolved domains left out."""
    points = [(d.domain, d.pass_at[1], d.action) for d in report.domains]
    left_out = [name for name, _, action in points if action is None]
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=_SIZE)
        ax = fig.subplots()
        for name, passed, action in points:
            if action is not None:
                ax.scatter([100 * passed], [100 * action], color=_BAR, s=36, zorder=3)
                _label(ax, name, 100 * passed, 100 * action, dy=4)
        if report.summary.action is not None:
            x, y = 100 * report.summary.pass_at[1], 100 * report.summary.action
            ax.scatter([x], [y], color=_ALL, marker="D", s=44, zorder=4)
            _label(ax, "all", x, y, dy=-11, fontweight="bold")
        ax.set_xlim(-5, 105)
        ax.set_ylim(-5, 105)
        ax.set_xlabel("pass@1 (%)")
        ax.set_ylabel("Action (%, solved tasks)")
        title = f"Action vs pass@1 · {report.agent}"
        if left_out:
            title += f" · no solved task: {', '.join(left_out)}"
        ax.set_title(title)
        ax.grid(True, linewidth=0.4, alpha=0.5)
        fig.tight_layout()
        return _svg(fig, "plot-action")


def _label(ax: Axes, text: str, x: float, y: float, dy: float, **style: str) -> None:
    """A point's label beside it, on its left near the right edge so that it stays inside the axes."""
    right = x > 80
    ax.annotate(text, (x, y), textcoords="offset points", xytext=(-5 if right else 5, dy),
                ha="right" if right else "left", **style)


def _svg(fig: Figure, prefix: str) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata=_METADATA)
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r'\s+xmlns(:xlink)?="[^"]*"', "", text, count=2)
    text = text.replace("xlink:href=", "href=")
    text = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}-\1"', text)
    text = re.sub(r'url\(#([^)]+)\)', rf'url(#{prefix}-\1)', text)
    text = re.sub(r'href="#([^"]+)"', rf'href="#{prefix}-\1"', text)
    return text.replace("<svg ", f'<svg role="img" aria-label="{prefix}" ', 1).strip()
