"""Number and Markdown formatting shared by the report and the comparison (percent with one decimal, as the CLI)."""

from __future__ import annotations

from collections.abc import Sequence

from bench.stats import MeanCI

__all__ = ["ci_text", "md_cell", "md_table", "pct", "shorten", "signed"]

MISSING = "–"
MAX_TEXT = 300  # characters of an answer or error shown; the episode files hold the rest


def pct(value: float | None) -> str:
    """0.8333 → '83.3'; None → '–'."""
    return MISSING if value is None else f"{100 * value:.1f}"


def signed(value: float | None) -> str:
    """A difference of fractions in percentage points: 0.05 → '+5.0', None → '–'."""
    return MISSING if value is None else f"{100 * value:+.1f}"


def ci_text(ci: MeanCI | None) -> str:
    """'± 2.1 [81.2, 85.4]' in percent, or '–' when there is no interval (one seed)."""
    return MISSING if ci is None else f"± {pct(ci.half_width)} [{pct(ci.low)}, {pct(ci.high)}]"


def shorten(text: str | None, limit: int = MAX_TEXT) -> str:
    """One line of at most ``limit`` characters (an ellipsis marks a cut)."""
    if text is None:
        return ""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def md_cell(text: object) -> str:
    """A value safe inside a Markdown table cell: one line, pipes and backslashes escaped."""
    return shorten(str(text)).replace("\\", "\\\\").replace("|", "\\|")


def md_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub-flavoured Markdown table; numbers and text go through ``md_cell``."""
    lines = ["| " + " | ".join(md_cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(md_cell(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)
