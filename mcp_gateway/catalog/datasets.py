"""The long tail: one tool per uniform dataset service of Gyeonggi Data Dream and Seoul Open Data Plaza.

The sandbox world's ``district_datasets`` table lists every dataset (service id, Korean title
and description, fields, filters). ``export_dataset_specs`` turns it into tool spec dicts once
and writes them to a committed, deterministic gzip file; at run time the catalog loads that
file, so it needs no world (the live upstream has none). A Gyeonggi dataset is a hub-family
service (filters are query parameters); a Seoul dataset is a Seoul path service (filters are
positional path segments, in the order the dataset declares them).
"""

from __future__ import annotations

import gzip
import io
import json
import re
from pathlib import Path
from typing import Any, Protocol

DATA_FILE = Path(__file__).parent / "data" / "datasets.json.gz"
CATALOG_TABLE = "district_datasets"
MAX_PAGE_SIZE = 1000  # both portals serve at most 1,000 rows per call
FAMILY = {"gg": "hub", "seoul": "seoul"}
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=[0-9])")
_NON_WORD = re.compile(r"[^a-z0-9]+")


class WorldRows(Protocol):
    """The one World method the exporter needs (``sandbox.World`` has it)."""

    def rows(self, sql: str, params: Any = ...) -> list[dict[str, Any]]: ...


def dataset_tool_name(platform: str, service: str) -> str:
    """``gg`` + ``FireOccurrenceStat2022`` → ``gg_fire_occurrence_stat_2022``; Seoul ids keep their parts."""
    words = _NON_WORD.sub("_", _CAMEL.sub("_", service).lower()).strip("_")
    return f"{platform}_{words}"[:128]


def _dataset_spec(entry: dict[str, Any]) -> dict[str, Any]:
    platform = entry["platform"]
    fields = json.loads(entry["fields"])
    described = {f["name"]: f["description_ko"] for f in fields}
    filters = sorted(json.loads(entry["filters"]), key=lambda f: (f.get("position", 0), f["param"]))
    params = [{"name": f["param"],
               "description_ko": described.get(f["field"], f["field"]) + (", 부분일치" if f["match"] == "like" else "")}
              for f in filters]
    endpoint: dict[str, Any] = {"platform": platform, "family": FAMILY[platform], "path": entry["service"],
                                "max_page_size": MAX_PAGE_SIZE}
    if platform == "seoul" and filters:
        endpoint["path_params"] = [f["param"] for f in filters]
    return {
        "name": dataset_tool_name(platform, entry["service"]), "platform": platform, "domain": "district",
        "description_ko": f"{entry['title_ko']}. {entry['description_ko']}",
        "params": params,
        # Both portals print every value as a string; the Korean description carries the meaning.
        "output": [{"name": f["name"], "description_ko": f["description_ko"]} for f in fields],
        "endpoint": endpoint,
    }


def dataset_specs_from_world(world: WorldRows) -> list[dict[str, Any]]:
    """Spec dicts (own parameters only; the loader adds KEY and paging) of every dataset, sorted by name."""
    entries = world.rows(f'SELECT platform, service, title_ko, description_ko, fields, filters FROM "{CATALOG_TABLE}" '
                         "ORDER BY platform, service")
    specs = [_dataset_spec(e) for e in entries]
    names: dict[str, str] = {}
    for spec in specs:
        other = names.setdefault(spec["name"], spec["endpoint"]["path"])
        if other != spec["endpoint"]["path"]:
            raise ValueError(f"datasets {other!r} and {spec['endpoint']['path']!r} both map to tool {spec['name']!r}")
    return sorted(specs, key=lambda s: s["name"])


def dataset_specs_bytes(specs: list[dict[str, Any]]) -> bytes:
    """Deterministic gzip of the spec list: sorted keys, no timestamp, no file name."""
    body = json.dumps(specs, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as gz:
        gz.write(body)
    return buffer.getvalue()


def export_dataset_specs(world: WorldRows, path: Path | str = DATA_FILE) -> int:
    """Write the dataset tool specs of ``world`` to ``path``; returns how many."""
    specs = dataset_specs_from_world(world)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(dataset_specs_bytes(specs))
    return len(specs)


def load_dataset_specs(path: Path | str = DATA_FILE) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return json.load(fh)
