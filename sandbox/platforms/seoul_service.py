"""``SeoulService``: one Seoul Open Data Plaza list service, declared as data.

Its own module so that the Seoul app (``seoul.py``) and the two places that declare services
(``seoul_services.py``, ``datasets.py``) all import it without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SeoulService:
    """One Seoul list service backed by one world table."""

    name: str
    table: str
    order_by: str
    path_params: tuple[tuple[str, str], ...] = ()  # positional (param name, column) after END_INDEX
    required: int = 0  # how many leading path params are mandatory (ERROR-300 otherwise)
    wrapper: str | None = None  # JSON/XML root when it differs from the service name
    where: str = ""
    where_params: tuple[Any, ...] = ()
    columns: tuple[str, ...] | None = None
    like_params: frozenset[str] = frozenset()  # path params matched as substrings
    format_row: Callable[[dict[str, Any]], dict[str, Any]] | None = None
