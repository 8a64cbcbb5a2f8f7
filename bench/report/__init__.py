"""bench.report: a run directory as a report (Markdown and self-contained HTML with plots), and two runs compared.

    from bench.report import compare_runs, comparison_markdown, load_run, write_report
    report = load_run(Path("runs/x"))          # run.json + episodes.jsonl; the summary recomputed from the episodes
    md_path, html_path = write_report(report, Path("runs/x"))
    print(comparison_markdown(compare_runs(load_run(Path("runs/a")), load_run(Path("runs/b")))))

Like ``bench.stats``, this package reads only result files. Errors are ``ValueError`` with the path and the
fix (a missing directory, no ``run.json``, no episodes yet, two runs without a common task).
"""

from .compare import Comparison, DomainComparison, MetricRow, TaskChange, compare_runs, comparison_markdown
from .errors import ErrorGroup, error_groups, error_kind, errors_line, run_error_groups
from .model import (
    DomainReport,
    FailedEpisode,
    RunFiles,
    RunReport,
    TaskRow,
    build_report,
    episode_result,
    load_run,
    read_run_dir,
)
from .plots import action_vs_pass_svg, domain_pass_at_1_svg
from .render import REPORT_HTML, REPORT_MD, report_html, report_markdown, write_report

__all__ = [
    "REPORT_HTML", "REPORT_MD",
    "Comparison", "DomainComparison", "DomainReport", "ErrorGroup", "FailedEpisode", "MetricRow", "RunFiles", "RunReport",
    "TaskChange", "TaskRow",
    "action_vs_pass_svg", "build_report", "compare_runs", "comparison_markdown", "domain_pass_at_1_svg",
    "episode_result", "error_groups", "error_kind", "errors_line", "run_error_groups", "load_run", "read_run_dir", "report_html", "report_markdown", "write_report",
]
