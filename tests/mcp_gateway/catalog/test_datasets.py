"""The long-tail dataset tools: generated once from the world, each backed by a real dataset."""

from __future__ import annotations

import gzip
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mcp_gateway.catalog import (
    Catalog,
    ToolSpec,
    dataset_tool_name,
    export_dataset_specs,
    load_catalog,
)
from mcp_gateway.catalog.datasets import DATA_FILE

from .sandbox_calls import call_tool_endpoint


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def dataset_tools(catalog: Catalog) -> list[ToolSpec]:
    return [s for s in catalog if catalog.source(s.name) == str(DATA_FILE)]


def test_committed_data_file_is_what_the_world_generates(world, tmp_path: Path) -> None:
    if world.scale != 1.0:
        pytest.skip("the committed file is generated from the full-scale world")
    regenerated = tmp_path / "datasets.json.gz"
    count = export_dataset_specs(world, regenerated)
    assert count == world.scalar("SELECT count(*) FROM district_datasets")
    assert regenerated.read_bytes() == DATA_FILE.read_bytes(), (
        "mcp_gateway/catalog/data/datasets.json.gz is stale: regenerate it with export_dataset_specs(world, DATA_FILE)")


def test_export_is_byte_for_byte_deterministic(world, tmp_path: Path) -> None:
    first, second = tmp_path / "a.json.gz", tmp_path / "b.json.gz"
    export_dataset_specs(world, first)
    export_dataset_specs(world, second)
    assert first.read_bytes() == second.read_bytes()
    with gzip.open(first, "rt", encoding="utf-8") as fh:
        specs = json.load(fh)
    assert [s["name"] for s in specs] == sorted(s["name"] for s in specs)


@pytest.mark.parametrize(("platform", "service", "name"), [
    ("gg", "FireOccurrenceStat2022", "gg_fire_occurrence_stat_2022"),
    ("gg", "GENRESTRT", "gg_genrestrt"),
    ("gg", "Tbggibllbrm", "gg_tbggibllbrm"),
    ("seoul", "LOCALDATA_072404_GD", "seoul_localdata_072404_gd"),
])
def test_dataset_tool_names_are_snake_case_of_the_service(platform: str, service: str, name: str) -> None:
    assert dataset_tool_name(platform, service) == name


def test_every_dataset_of_the_world_has_exactly_one_tool(world, catalog: Catalog) -> None:
    services = {(r["platform"], r["service"]) for r in world.rows("SELECT platform, service FROM district_datasets")}
    tools = [(s.platform, s.endpoint.path) for s in dataset_tools(catalog)]  # type: ignore[union-attr]
    assert len(tools) == len(set(tools))
    assert set(tools) == services


def test_seoul_dataset_filters_are_path_params_in_declared_order(world, catalog: Catalog) -> None:
    entry = world.rows("SELECT service, filters FROM district_datasets WHERE platform = 'seoul' "
                       "AND len(filters) > 2 ORDER BY service LIMIT 1")[0]
    declared = [f["param"] for f in sorted(json.loads(entry["filters"]), key=lambda f: f["position"])]
    spec = catalog.get(dataset_tool_name("seoul", entry["service"]))
    assert list(spec.endpoint.path_params) == declared  # type: ignore[union-attr]
    assert spec.endpoint.family == "seoul" and spec.platform == "seoul"  # type: ignore[union-attr]


def _total(body: dict, platform: str, service: str) -> int:
    if body.get("RESULT", {}).get("CODE") == "INFO-200":
        return 0
    if platform == "gg":
        return body[service][0]["head"][0]["list_total_count"]
    return body[service]["list_total_count"]


def test_every_dataset_tool_reaches_its_dataset_with_its_row_count(world, catalog: Catalog, keys, http) -> None:
    """None points at nothing: each tool's endpoint answers with the dataset's full row count."""
    expected = {(r["platform"], r["service"]): r["row_count"]
                for r in world.rows("SELECT platform, service, row_count FROM district_datasets")}

    def check(spec: ToolSpec) -> tuple[str, int | None, int] | None:
        service = spec.endpoint.path  # type: ignore[union-attr]
        answer = call_tool_endpoint(http, spec, {}, keys.first(spec.platform))
        total = _total(answer.body, spec.platform, service) if answer.status == 200 and answer.body else None
        want = expected[(spec.platform, service)]
        return None if total == want else (spec.name, total, want)

    with ThreadPoolExecutor(max_workers=8) as pool:  # 2,339 calls; the loopback server is concurrent
        wrong = [w for w in pool.map(check, dataset_tools(catalog)) if w is not None]
    assert not wrong, wrong[:10]


def test_a_dataset_filter_narrows_the_answer(world, catalog: Catalog, keys, http) -> None:
    """Filter parameters carry the real names: a filtered call returns fewer rows than the whole dataset."""
    spec = catalog.get("gg_martial_arts_gym")
    code = world.scalar("SELECT SIGUN_CD FROM gg_dataset_rows WHERE _ds = "
                        "(SELECT dataset_id FROM district_datasets WHERE service = 'MartialArtsGym') LIMIT 1")
    whole = call_tool_endpoint(http, spec, {}, keys.first("gg"))
    narrowed = call_tool_endpoint(http, spec, {"SIGUN_CD": code}, keys.first("gg"))
    assert 0 < _total(narrowed.body, "gg", "MartialArtsGym") < _total(whole.body, "gg", "MartialArtsGym")
