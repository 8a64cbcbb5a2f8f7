"""Small reusable widgets of the console."""

from .bars import BarChart, bar

__all__ = ["BarChart", "bar"]
