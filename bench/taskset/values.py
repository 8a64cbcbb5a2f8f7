"""Reading values out of upstream records the way a careful agent would ("1,690원" → 1690)."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["number"]

_NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?")


def number(value: Any) -> float:
    """The number written in ``value`` (thousands separators, units and spaces ignored).

    Raises:
        ValueError: no number in it.
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    match = _NUMBER.search(str(value).replace(",", ""))
    if match is None:
        raise ValueError(f"no number in {value!r}")
    return float(match.group())
