"""A run's report as Markdown (``report.md``) and as one self-contained HTML page (``report.html``).

    from bench.report import load_run, write_report
    md_path, html_path = write_report(load_run(run_dir), out_dir)

The HTML page loads nothing: its CSS is inline, its two plots are inline SVG (``plots.py``), and every text
that came from a task or an agent (ids, queries, answers, errors) is escaped by Jinja2's autoescape. Numbers
in its tables also carry their exact value in ``data-value``. Neither file holds the time it was written, so
two reports of the same run directory are byte-identical.
"""

from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from .format import ci_text, md_table, pct, shorten
from .model import RunReport
from .plots import action_vs_pass_svg, domain_pass_at_1_svg

__all__ = ["REPORT_HTML", "REPORT_MD", "report_html", "report_markdown", "write_report"]

REPORT_MD = "report.md"
REPORT_HTML = "report.html"
_TEMPLATES = Path(__file__).parent / "templates"


def report_markdown(report: RunReport) -> str:
    """The report as Markdown: run, overall, per domain, per task, errors by kind, failures (the plots are in the
    HTML)."""
    ks = report.ks
    parts = [f"# KOPA-Bench report: {report.agent}", "", _status_line(report), "",
             md_table(["run", ""], _run_rows(report)), "", "## Overall", "",
             md_table([*(f"pass@{k}" for k in ks), "Action", _ci_header(report)],
                      [[*(pct(report.summary.pass_at[k]) for k in ks), pct(report.summary.action),
                        ci_text(report.summary.seed_ci)]]),
             "", "## Per domain", "",
             md_table(["domain", "tasks", "episodes", "pass@1", _ci_header(report),
                       *(f"pass@{k}" for k in ks if k != 1), "Action"],
                      [[d.domain, d.n_tasks, d.n_episodes, pct(d.pass_at[1]), ci_text(d.ci),
                        *(pct(d.pass_at[k]) for k in ks if k != 1), pct(d.action)] for d in report.domains]),
             "", f"Plots (pass@1 per domain, Action vs pass@1): see {REPORT_HTML}.", "", "## Per task", "",
             md_table(["task", "domain", "episodes", "passed", "pass rate", "mean ACTION", "errors", "query"],
                      [[t.task_id, t.domain, t.n_episodes, t.n_passed, pct(t.pass_rate), pct(t.mean_action),
                        t.n_errors, t.query or ""] for t in report.tasks]),
             "", f"## Errors ({sum(g.count for g in report.errors)} of {report.n_done} episodes)", "",
             md_table(["kind", "episodes", "example"], [[g.kind, g.count, shorten(g.example, 200)]
                                                        for g in report.errors])
             if report.errors else "No episode ended with an error: every failure below is a wrong answer.",
             "", f"## Failures ({len(report.failures)} of {report.n_done} episodes)", ""]
    if report.failures:
        parts.append(md_table(["task", "episodes (seed/rollout)", "answer", "why"], _failure_rows(report)))
    else:
        parts.append("Every episode passed.")
    return "\n".join(parts) + "\n"


def report_html(report: RunReport) -> str:
    """The report as one HTML page with inline CSS and the two plots as inline SVG."""
    env = Environment(loader=FileSystemLoader(_TEMPLATES), autoescape=True, undefined=StrictUndefined,
                      keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(pct=pct, ci=ci_text, shorten=shorten)
    return env.get_template("report.html.j2").render(
        report=report, ks=report.ks, status=_status_line(report, markdown=False), run_rows=_run_rows(report),
        ci_header=_ci_header(report), failure_rows=_failure_rows(report), css=Markup((_TEMPLATES / "report.css").read_text(encoding="utf-8")),
        plot_domains=Markup(domain_pass_at_1_svg(report)), plot_action=Markup(action_vs_pass_svg(report)))


def write_report(report: RunReport, out_dir: Path) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` into ``out_dir`` (made if missing); returns both paths.

    Raises:
        OSError: ``out_dir`` cannot be made or written.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    md_path, html_path = out_dir / REPORT_MD, out_dir / REPORT_HTML
    md_path.write_text(report_markdown(report), encoding="utf-8")
    html_path.write_text(report_html(report), encoding="utf-8")
    return md_path, html_path


# ---------------------------------------------------------------------------------------------- helpers


def _status_line(report: RunReport, markdown: bool = True) -> str:
    """The line under the title; the HTML page shows the status itself as a badge before it."""
    if not markdown:
        return f"{report.n_done} episodes." if report.complete else "The numbers cover only the episodes done so far."
    if report.complete:
        return f"Run complete: {report.n_done} episodes."
    return f"Run **{report.status}**: the numbers cover only the episodes done so far."


def _ci_header(report: RunReport) -> str:
    return f"95% CI over {len(report.seeds)} seeds" if len(report.seeds) >= 2 else "95% CI (needs 2+ seeds)"


def _run_rows(report: RunReport) -> list[list[str]]:
    task_file = report.tasks_file or "–"
    if report.tasks_sha256:
        task_file += f" (sha256 {report.tasks_sha256[:12]})"
    return [["directory", str(report.run_dir)], ["agent", report.agent], ["bundle", report.bundle],
            ["upstream", f"{report.upstream} ({report.upstream_source})" if report.upstream_source
             else report.upstream],
            ["task file", task_file], ["seeds × rollouts", f"{list(report.seeds)} × {report.rollouts}"],
            ["tasks, episodes", f"{report.summary.n_tasks} tasks, {report.n_done} of {report.n_total} episodes"],
            ["status", report.status], ["started", report.started_at or "–"],
            ["finished", report.finished_at or "–"]]


def _failure_rows(report: RunReport) -> list[list[str]]:
    """[task, its failed episodes as seed/rollout, answer, why]: episodes that failed alike share one row."""
    groups: dict[tuple[str, str, tuple[str, ...]], list[str]] = {}
    for f in report.failures:
        groups.setdefault((f.task_id, shorten(f.answer), f.reasons), []).append(f"{f.seed}/{f.rollout}")
    return [[task, ", ".join(episodes), answer, "; ".join(reasons)]
            for (task, answer, reasons), episodes in groups.items()]
