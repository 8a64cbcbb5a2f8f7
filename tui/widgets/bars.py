"""Horizontal bars drawn with block characters: they read the same over SSH in 80 columns as anywhere."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

EIGHTHS = " ▏▎▍▌▋▊▉█"


def bar(fraction: float | None, width: int) -> str:
    """``fraction`` (0–1) of ``width`` cells in eighth-cell steps; blank for None."""
    if fraction is None:
        return " " * width
    eighths = round(max(0.0, min(1.0, fraction)) * width * 8)
    full, rest = divmod(eighths, 8)
    return ("█" * full + (EIGHTHS[rest] if rest else "")).ljust(width)


def pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


class BarChart(Static):
    """Rows of (label, one value per series) drawn as bars, series side by side, values as percentages."""

    DEFAULT_CSS = """
    BarChart { height: auto; }
    """

    def __init__(self, series: Sequence[str] = (), bar_width: int = 10, **kwargs) -> None:
        super().__init__(**kwargs)
        self.series, self.bar_width = tuple(series), bar_width

    def show(self, rows: Sequence[tuple[str, Sequence[float | None]]], title: str = "") -> None:
        table = Table(box=None, pad_edge=False, show_header=True, header_style="bold", title=title or None,
                      title_justify="left", expand=False)
        table.add_column("")
        for name in self.series:
            table.add_column(name, no_wrap=True)
        styles = ("green", "cyan", "magenta", "yellow")
        for label, values in rows:
            cells = [Text.assemble((bar(v, self.bar_width), styles[i % len(styles)]), f" {pct(v):>5}")
                     for i, v in enumerate(values)]
            table.add_row(label, *cells)
        self.update(table)
