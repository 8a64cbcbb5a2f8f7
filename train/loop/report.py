"""The loop's comparison: each evaluated model (and baseline) over the eval split, with 95 % t-intervals over seeds.

    summary = summarize_model("tuned (SFT)", episodes)       # episodes: train.loop.evaluate.EpisodeFigures
    report = LoopReport(models=[...], sft_steps=[...], grpo_steps=[...], probes=[...], settings={...})
    report.table()          # the text table the CLI prints
    report.to_json()        # report.json
    report.html()           # report.html

Per model, each figure is computed per seed over the split's tasks, then averaged over seeds with a Student-t
interval (``bench.stats.mean_ci``; with one seed there is no interval):

* **pass@1**: the share of episodes that pass (RESPONSE and ENVIRONMENT as each task's basis lists them);
* **Corr** (Appendix B.4): the share of golden actions matched, averaged over all episodes, solved or not;
* **ACTION** as the paper defines it: (Corr + Eff) / 2 averaged over solved episodes only (None when none is solved,
  so a model that never solves cannot show ACTION; an episode with few calls has Eff 1 and Corr 0: that is why Corr,
  not ACTION, is the loop's goal);
* **well-formed**: the share of the model's tool calls that were readable and named an offered tool;
* **key**: the share of episodes on keyed tasks that called a keyed tool with the episode's key token every time;
* **answered**: the share of episodes that ended with an answer.

Per domain: pass@1 and Corr over all seeds' episodes of that domain.
"""

from __future__ import annotations

import html
import json
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from bench.stats import mean_ci

from .evaluate import EpisodeFigures

__all__ = ["FIGURES", "Interval", "LoopReport", "ModelSummary", "summarize_model"]


@dataclass(frozen=True)
class Interval:
    mean: float | None
    low: float | None = None
    high: float | None = None
    seeds: int = 0

    def text(self) -> str:
        if self.mean is None:
            return "—"
        if self.low is None or self.high is None:
            return f"{self.mean:.3f}"
        return f"{self.mean:.3f} [{self.low:.3f}, {self.high:.3f}]"


def _ratio(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def _pass(rows: Sequence[EpisodeFigures]) -> float | None:
    return _ratio(sum(r.passed for r in rows), len(rows))


def _corr(rows: Sequence[EpisodeFigures]) -> float | None:
    return _ratio(sum(r.corr for r in rows), len(rows))


def _action(rows: Sequence[EpisodeFigures]) -> float | None:
    solved = [r.action for r in rows if r.passed]
    return statistics.fmean(solved) if solved else None


def _well_formed(rows: Sequence[EpisodeFigures]) -> float | None:
    return _ratio(sum(r.well_formed for r in rows), sum(r.calls for r in rows)) if rows else None


def _key(rows: Sequence[EpisodeFigures]) -> float | None:
    keyed = [r for r in rows if r.key_ok is not None]
    return _ratio(sum(bool(r.key_ok) for r in keyed), len(keyed))


def _answered(rows: Sequence[EpisodeFigures]) -> float | None:
    return _ratio(sum(r.answered for r in rows), len(rows))


FIGURES: dict[str, Callable[[Sequence[EpisodeFigures]], float | None]] = {
    "pass@1": _pass, "Corr": _corr, "ACTION": _action, "well-formed": _well_formed, "key": _key,
    "answered": _answered}


def _over_seeds(rows: Sequence[EpisodeFigures], figure: Callable[[Sequence[EpisodeFigures]], float | None]) -> Interval:
    by_seed: dict[int, list[EpisodeFigures]] = defaultdict(list)
    for row in rows:
        by_seed[row.seed].append(row)
    values = [v for v in (figure(seed_rows) for _, seed_rows in sorted(by_seed.items())) if v is not None]
    if not values:
        return Interval(None)
    if len(values) < 2:
        return Interval(values[0], seeds=1)
    ci = mean_ci(values)
    return Interval(ci.mean, max(0.0, ci.low), min(1.0, ci.high), seeds=len(values))


@dataclass(frozen=True)
class ModelSummary:
    name: str
    episodes: int
    figures: dict[str, Interval]
    by_domain: dict[str, dict[str, float | None]]


def summarize_model(name: str, rows: Sequence[EpisodeFigures]) -> ModelSummary:
    """The figures of one model's evaluated episodes (module doc)."""
    domains: dict[str, list[EpisodeFigures]] = defaultdict(list)
    for row in rows:
        domains[row.domain].append(row)
    return ModelSummary(name=name, episodes=len(rows),
                        figures={label: _over_seeds(rows, figure) for label, figure in FIGURES.items()},
                        by_domain={d: {"pass@1": _pass(r), "Corr": _corr(r), "episodes": len(r)}
                                   for d, r in sorted(domains.items())})


@dataclass
class LoopReport:
    """Everything ``kopa train loop`` reports (module doc): written as report.json, report.md and report.html."""

    models: list[ModelSummary]
    settings: dict[str, Any] = field(default_factory=dict)
    sft_steps: list[dict[str, Any]] = field(default_factory=list)
    grpo_steps: list[dict[str, Any]] = field(default_factory=list)
    probes: list[dict[str, Any]] = field(default_factory=list)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    tool_coverage: dict[str, Any] = field(default_factory=dict)  # split_audit.ToolCoverage.figures()

    def to_json(self) -> dict[str, Any]:
        return {"settings": self.settings, "models": [asdict(m) for m in self.models], "sft_steps": self.sft_steps,
                "grpo_steps": self.grpo_steps, "sft_probes": self.probes, "stage_seconds": self.stage_seconds,
                "tool_coverage": self.tool_coverage}

    def _rows(self) -> tuple[list[str], list[list[str]]]:
        head = ["model", "episodes", *FIGURES]
        return head, [[m.name, str(m.episodes), *(m.figures[f].text() for f in FIGURES)] for m in self.models]

    def table(self) -> str:
        """A Markdown table of the models, then per domain Corr, the probes and the training steps."""
        head, rows = self._rows()
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        domains = sorted({d for m in self.models for d in m.by_domain})
        if domains:
            lines += ["", "| Corr / pass@1 by domain | " + " | ".join(domains) + " |", "|" + "---|" * (len(domains) + 1)]
            for m in self.models:
                cells = []
                for d in domains:
                    fig = m.by_domain.get(d)
                    cells.append("—" if not fig else f"{fig['Corr']:.2f} / {fig['pass@1']:.2f}")
                lines.append(f"| {m.name} | " + " | ".join(cells) + " |")
        if c := self.tool_coverage:
            lines += ["", f"training data: {c['golden_actions_covered']} of {c['golden_actions']} golden actions of "
                          f"the eval split call a tool some training item calls ({c['tools_covered']} of {c['tools']} "
                          "tools); never called in training: "
                          + (", ".join(f"{t} ({n})" for t, n in c["missing"].items()) or "none")]
        if self.probes:
            lines += ["", "| SFT probe: examples seen | well-formed | Corr |", "|---|---|---|"]
            lines += [f"| {p['examples_seen']} | {_fmt(p.get('well-formed'))} | {_fmt(p.get('Corr'))} |"
                      for p in self.probes]
        for label, steps in (("SFT", self.sft_steps), ("GRPO", self.grpo_steps)):
            if steps:
                keys = [k for k in ("step", "loss", "reward_mean", "pass_rate", "tokens_per_s", "step_time_s")
                        if any(k in s for s in steps)]
                lines += ["", f"| {label} " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
                lines += ["| " + " | ".join(_fmt(s.get(k)) for k in keys) + " |" for s in steps]
        if self.stage_seconds:
            lines += ["", "stage times (s): " + ", ".join(f"{k} {v:.0f}" for k, v in self.stage_seconds.items())]
        return "\n".join(lines)

    def html(self) -> str:
        """A self-contained HTML page with the comparison table and the text tables below it."""
        head, rows = self._rows()
        table = "<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"
        table += "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
        table += "</table>"
        settings = html.escape(json.dumps(self.settings, indent=1, ensure_ascii=False))
        return ("<!doctype html><meta charset='utf-8'><title>kopa train loop</title>"
                "<style>body{font-family:sans-serif}td,th{border:1px solid #ccc;padding:4px 8px}"
                "table{border-collapse:collapse}</style>"
                "<h1>Base against tuned on the eval split</h1>"
                "<p>Means over seeds with 95 % Student-t intervals; ACTION over solved episodes only.</p>"
                f"{table}<h2>All figures</h2><pre>{html.escape(self.table())}</pre>"
                f"<h2>Settings</h2><pre>{settings}</pre>")


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)
