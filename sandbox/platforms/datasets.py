"""Uniform dataset services of the district long tail, declared from the ``district_datasets`` catalog.

Every catalog entry becomes one service of its portal: a ``HubService`` on Gyeonggi Data
Dream, a ``SeoulService`` on Seoul Open Data Plaza. The rows of all datasets share one table
per portal; a service selects its own with ``_ds = dataset_id`` (the leading sort column,
so DuckDB reads only that dataset's row groups) and ``format_row`` renames the storage
columns to the dataset's real field names, printing every value as a string the way the
portals do. The catalog is read once per call; the apps call these once at start-up.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..world.runtime import World
from .hub import HubService, value_str
from .seoul_service import SeoulService

CATALOG_TABLE = "district_datasets"
ORDER = '"_ds", "_seq"'  # the tables' physical order: a dataset's page is a rowid range
WHERE = '"_ds" = ?'


def _catalog(world: World, platform: str) -> list[dict[str, Any]]:
    if not world.has_table(CATALOG_TABLE):
        return []
    return world.rows(f'SELECT service, dataset_id, filters, storage FROM "{CATALOG_TABLE}" '
                      "WHERE platform = ? ORDER BY dataset_id", [platform])


def _formatter(pairs: list[tuple[str, str]], empty: str | None) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Row formatter: storage column -> real field name, values as portal strings (null -> ``empty``)."""

    def fmt(row: dict[str, Any]) -> dict[str, Any]:
        out = {}
        for name, column in pairs:
            value = row[column]
            out[name] = empty if value is None else value_str(value)
        return out

    return fmt


def _layout(entry: dict[str, Any]) -> tuple[list[tuple[str, str]], dict[str, str], tuple[str, ...]]:
    """(field, column) pairs, field -> column, and the distinct columns to select."""
    pairs = [(f, c) for f, c in json.loads(entry["storage"])["columns"]]
    return pairs, dict(pairs), tuple(dict.fromkeys(c for _, c in pairs))


def gyeonggi_dataset_services(world: World) -> list[HubService]:
    services = []
    for entry in _catalog(world, "gg"):
        pairs, column_of, columns = _layout(entry)
        filters = json.loads(entry["filters"])
        services.append(HubService(
            name=entry["service"], table="gg_dataset_rows", order_by=ORDER,
            filters={f["param"]: column_of[f["field"]] for f in filters if f["match"] == "exact"},
            like_filters={f["param"]: column_of[f["field"]] for f in filters if f["match"] == "like"},
            columns=columns, where=WHERE, where_params=(entry["dataset_id"],), format_row=_formatter(pairs, None)))
    return services


def seoul_dataset_services(world: World) -> list[SeoulService]:
    services = []
    for entry in _catalog(world, "seoul"):
        pairs, column_of, columns = _layout(entry)
        filters = sorted(json.loads(entry["filters"]), key=lambda f: f["position"])
        services.append(SeoulService(
            name=entry["service"], table="seoul_dataset_rows", order_by=ORDER,
            path_params=tuple((f["param"], column_of[f["field"]]) for f in filters),
            like_params=frozenset(f["param"] for f in filters if f["match"] == "like"),
            columns=columns, where=WHERE, where_params=(entry["dataset_id"],), format_row=_formatter(pairs, "")))
    return services
