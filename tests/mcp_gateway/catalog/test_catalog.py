"""The catalog loads at paper scale, with unique MCP-safe names, the generic-parameter convention and clear errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mcp_gateway.catalog import (
    PLATFORMS,
    Catalog,
    DuplicateToolError,
    ParamKind,
    SpecDataError,
    UnknownToolError,
    key_tool_name,
    load_catalog,
)
from mcp_gateway.catalog.catalog import SPECS_DIR
from mcp_gateway.catalog.spec import TOOL_NAME_RULE
from sandbox import PLATFORM_IDS, platform_specs

PAPER_TOOL_COUNT = 2318
DOMAINS = ("traffic", "finance", "education", "law", "politics", "district")


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def test_catalog_is_at_paper_scale_over_ten_platforms_and_six_domains(catalog: Catalog) -> None:
    stats = catalog.stats()
    assert stats["total"] == len(catalog) >= PAPER_TOOL_COUNT
    assert set(PLATFORM_IDS) <= set(stats["by_platform"])
    assert set(DOMAINS) <= set(stats["by_domain"])
    assert sum(stats["by_platform"].values()) == sum(stats["by_domain"].values()) == stats["total"]
    assert all(stats["by_platform"][p] >= 2 for p in PLATFORM_IDS)  # a key tool and at least one API tool each
    assert stats["by_domain"]["workspace"] == 7 and stats["by_domain"]["utility"] == 1


def test_by_platform_and_by_domain_agree_with_stats(catalog: Catalog) -> None:
    stats = catalog.stats()
    for platform, count in stats["by_platform"].items():
        assert len(catalog.by_platform(platform)) == count
    for domain, count in stats["by_domain"].items():
        assert {s.domain for s in catalog.by_domain(domain)} == {domain}
        assert len(catalog.by_domain(domain)) == count


def test_every_name_follows_the_mcp_rule_and_is_unique(catalog: Catalog) -> None:
    names = catalog.names()
    assert len(names) == len(set(names))
    assert all(TOOL_NAME_RULE.match(n) for n in names)


def test_paper_style_names_exist(catalog: Catalog) -> None:
    for name in ("find_dart_corp_code", "get_dart_convertible_bond_issuance_decision", "get_stock_price_trend",
                 "class_and_student_status", "search_school_info", "get_tollbooth_traffic_volume",
                 "evaluate_expression", *(key_tool_name(p) for p in PLATFORM_IDS)):
        assert name in catalog


def test_every_tool_has_korean_descriptions(catalog: Catalog) -> None:
    def korean(text: str) -> bool:
        return any("\uac00" <= ch <= "\ud7a3" for ch in text)

    for spec in catalog:
        assert korean(spec.description_ko), spec.name
        assert all(korean(p.description_ko) for p in spec.params), spec.name
        assert spec.endpoint is None or spec.output, f"{spec.name} has no output record schema"


def test_upstream_tools_share_the_generic_parameter_convention(catalog: Catalog) -> None:
    sandbox_keys = {(s.id, s.host_prefix == "/schoolinfo"): s.key_param for s in platform_specs()}
    for spec in (s for s in catalog if s.endpoint is not None):
        key = spec.param("KEY")
        assert key is not None and key.kind is ParamKind.API_KEY and key.required, spec.name
        real = sandbox_keys[(spec.platform, spec.endpoint.base == "schoolinfo")]
        assert (key.upstream or "KEY") == real or real == "path", spec.name
        if spec.paged:
            page_no, size = spec.param("pageNo"), spec.param("numOfRows")
            assert page_no.kind is ParamKind.PAGE_NO and page_no.type == "integer" and page_no.default == 1
            assert size.kind is ParamKind.PAGE_SIZE and size.type == "integer" and size.default == 10
        else:
            assert spec.param("pageNo") is None and spec.param("numOfRows") is None
        assert not any(p.kind is ParamKind.FORMAT for p in spec.params), spec.name


def test_realtime_and_builtin_flags(catalog: Catalog) -> None:
    realtime = {s.name for s in catalog if s.realtime}
    assert realtime == {"get_realtime_travel_time", "get_realtime_incidents", "get_realtime_section_traffic",
                        "get_bike_station_realtime_status"}
    workspace = catalog.by_domain("workspace")
    assert {s.name for s in workspace if s.writes_state} == {
        "add_to_watchlist", "remove_from_watchlist", "save_report", "write_note"}
    assert all(s.endpoint is None and not s.paged for s in workspace)
    for platform in PLATFORMS.values():
        key_tool = catalog.get(key_tool_name(platform.id))
        assert key_tool.endpoint is None and key_tool.domain == platform.domain and not key_tool.paged


def test_unknown_tool_lists_the_three_nearest_names(catalog: Catalog) -> None:
    with pytest.raises(UnknownToolError) as info:
        catalog.get("find_dart_corpcode")
    assert len(info.value.suggestions) == 3
    assert info.value.suggestions[0] == "find_dart_corp_code"
    assert "find_dart_corp_code" in str(info.value)
    assert isinstance(info.value, KeyError)  # callers that catch KeyError keep working


def _copy_specs(tmp_path: Path) -> Path:
    target = tmp_path / "specs"
    shutil.copytree(SPECS_DIR, target)
    return target


def test_duplicate_names_are_refused_naming_both_files(tmp_path: Path) -> None:
    specs = _copy_specs(tmp_path)
    tool = json.loads((specs / "dart.json").read_text())[0]
    (specs / "zz_extra.json").write_text(json.dumps([tool], ensure_ascii=False))
    with pytest.raises(DuplicateToolError) as info:
        load_catalog(specs)
    assert "dart.json" in str(info.value) and "zz_extra.json" in str(info.value)


@pytest.mark.parametrize(("change", "message"), [
    (lambda t: t.update(name="bad name!"), "MCP rule"),
    (lambda t: t["params"].append({"name": "KEY", "description_ko": "키"}), "generic parameter"),
    (lambda t: t["endpoint"].update(platform="nowhere"), "platform"),
    (lambda t: t["params"].append({"name": "corp_name", "description_ko": "중복"}), "duplicate parameter"),
])
def test_invalid_spec_data_is_refused_with_file_and_tool(tmp_path: Path, change, message: str) -> None:
    specs = _copy_specs(tmp_path)
    tools = json.loads((specs / "dart.json").read_text())
    change(tools[0])
    (specs / "dart.json").write_text(json.dumps(tools, ensure_ascii=False))
    with pytest.raises(SpecDataError) as info:
        load_catalog(specs)
    assert "dart.json" in str(info.value) and message in str(info.value)


def test_contract_hashes_cover_every_tool(catalog: Catalog) -> None:
    hashes = catalog.contract_hashes()
    assert list(hashes) == sorted(catalog.names())
    assert all(len(h) == 64 for h in hashes.values())
    assert hashes == load_catalog().contract_hashes()  # stable across loads
