"""The catalog: every tool the gateway offers, loaded from data and checked once.

    catalog = load_catalog()
    spec = catalog.get("find_dart_corp_code")
    catalog.stats()   # {"total": ..., "by_platform": {...}, "by_domain": {...}}

Three sources, in this order: the core specs (``specs/<platform>.json``, one tool per
endpoint the platforms offer), the long-tail dataset specs (``data/datasets.json.gz``) and
the built-ins (expression, key tools, workspace). Each spec dict gets the generic parameters
added, is validated, and must have a name no other source uses; a duplicate is refused with
both sources named.
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import ValidationError

from recorder import CatalogPin

from .builtins import builtin_specs
from .datasets import DATA_FILE, load_dataset_specs
from .generic import SpecDataError, with_generic_params
from .spec import ToolSpec
from .validate import spec_problems

SPECS_DIR = Path(__file__).parent / "specs"
BUILTIN_SOURCE = "mcp_gateway.catalog.builtins"


class UnknownToolError(KeyError):
    """No tool by that name; the message suggests the nearest names."""

    def __init__(self, name: str, suggestions: list[str]):
        hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"unknown tool {name!r}{hint}")
        self.name, self.suggestions = name, suggestions

    def __str__(self) -> str:
        return str(self.args[0])


class DuplicateToolError(SpecDataError):
    """Two spec sources define the same tool name."""


def build_spec(raw: dict[str, Any], source: str) -> ToolSpec:
    """One spec dict of a data source → a validated ToolSpec (generic params added)."""
    try:
        spec = ToolSpec.model_validate(with_generic_params(raw, source))
    except ValidationError as exc:
        raise SpecDataError(f"{source}: tool {raw.get('name', '?')!r} is invalid: {exc}") from None
    if problems := spec_problems(spec):
        raise SpecDataError(f"{source}: tool {spec.name!r}: " + "; ".join(problems))
    return spec


class Catalog:
    """Tools by name, with where each came from. Immutable once built."""

    def __init__(self, entries: Iterable[tuple[ToolSpec, str]]):
        self._specs: dict[str, ToolSpec] = {}
        self._sources: dict[str, str] = {}
        for spec, source in entries:
            if spec.name in self._specs:
                raise DuplicateToolError(f"tool {spec.name!r} is defined twice: in {self._sources[spec.name]} "
                                         f"and in {source}")
            self._specs[spec.name] = spec
            self._sources[spec.name] = source
        self._pin: CatalogPin | None = None

    def __len__(self) -> int:
        return len(self._specs)

    def __iter__(self) -> Iterator[ToolSpec]:
        return iter(self._specs.values())

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def names(self) -> list[str]:
        return list(self._specs)

    @property
    def tools(self) -> Mapping[str, ToolSpec]:
        """Read-only name → spec view, in catalog order."""
        return MappingProxyType(self._specs)

    def get(self, name: str) -> ToolSpec:
        spec = self._specs.get(name)
        if spec is None:
            raise UnknownToolError(name, difflib.get_close_matches(name, self._specs, n=3, cutoff=0.0))
        return spec

    def source(self, name: str) -> str:
        """The file (or module) the tool was defined in."""
        self.get(name)
        return self._sources[name]

    def by_platform(self, platform: str) -> list[ToolSpec]:
        return [s for s in self._specs.values() if s.platform == platform]

    def by_domain(self, domain: str) -> list[ToolSpec]:
        return [s for s in self._specs.values() if s.domain == domain]

    def stats(self) -> dict[str, Any]:
        """Counts per platform and per domain, and the total (what `kopa tools stats` prints)."""
        return {"total": len(self._specs),
                "by_platform": dict(sorted(Counter(s.platform for s in self).items())),
                "by_domain": dict(sorted(Counter(s.domain for s in self).items()))}

    def contract_hashes(self) -> dict[str, str]:
        """Tool name → contract hash (SHA-256 over name, schemas and annotations), sorted by name."""
        return {name: self._specs[name].contract_hash() for name in sorted(self._specs)}


    def pin(self) -> CatalogPin:
        """The catalog as a model sees it (per tool: description, input and output schema) and its version: what a
        recording pins in its bundle and a replay compares with (made once; the catalog is immutable)."""
        if self._pin is None:
            self._pin = CatalogPin.build({spec.name: {"description": spec.description_ko,
                                                      "input_schema": spec.input_schema(),
                                                      "output_schema": spec.output_schema()} for spec in self})
        return self._pin

    @property
    def version(self) -> str:
        """The catalog's own version: SHA-256 (first 20 hex digits) over every tool's description and schemas."""
        return self.pin().version


def _core_entries(specs_dir: Path) -> Iterator[tuple[ToolSpec, str]]:
    for path in sorted(specs_dir.glob("*.json")):
        try:
            raws = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise SpecDataError(f"{path}: not valid JSON: {exc}") from None
        if not isinstance(raws, list):
            raise SpecDataError(f"{path}: must hold a JSON list of tool specs")
        for raw in raws:
            yield build_spec(raw, str(path)), str(path)


def load_catalog(specs_dir: Path | str = SPECS_DIR, datasets_file: Path | str = DATA_FILE) -> Catalog:
    """Built-ins + core specs + dataset specs, validated; needs no world.

    The order is the listing order: built-ins and the core tools fill the first ``tools/list``
    page, because many MCP clients read only that page (and the SDK client re-lists when it
    meets a tool it has not seen, to validate its result).
    """
    datasets = str(datasets_file)
    entries = [*((build_spec(raw, BUILTIN_SOURCE), BUILTIN_SOURCE) for raw in builtin_specs()),
               *_core_entries(Path(specs_dir)),
               *((build_spec(raw, datasets), datasets) for raw in load_dataset_specs(datasets_file))]
    return Catalog(entries)
