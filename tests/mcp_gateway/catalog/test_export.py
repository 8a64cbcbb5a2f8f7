"""Exported schemas are valid JSON Schema (Draft 2020-12) per profile; contract hashes track schema changes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from mcp_gateway.catalog import (
    Catalog,
    FieldSpec,
    load_catalog,
    to_mcp_tool,
    to_openai_function,
)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def _shape(schema: Any) -> Any:
    """The schema with every description text blanked: tools that differ only in wording share a shape."""
    if isinstance(schema, dict):
        return {k: ("" if k == "description" and isinstance(v, str) else _shape(v)) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_shape(v) for v in schema]
    return schema


@pytest.mark.parametrize("profile", ["chat", "bench"])
def test_every_exported_schema_is_valid_json_schema(catalog: Catalog, profile: str) -> None:
    shapes: dict[str, Any] = {}  # meta-validating 7,000 schemas takes a minute; their distinct shapes, a second
    for spec in catalog:
        tool = to_mcp_tool(spec, profile)
        assert set(tool) == {"name", "description", "inputSchema", "outputSchema", "annotations"}
        assert isinstance(tool["description"], str) and tool["description"]
        function = to_openai_function(spec, profile)
        assert function["type"] == "function" and function["function"]["name"] == spec.name
        for schema in (tool["inputSchema"], tool["outputSchema"], function["function"]["parameters"]):
            shape = _shape(schema)
            shapes.setdefault(json.dumps(shape, sort_keys=True), shape)
            descriptions = [p.get("description") for p in schema["properties"].values()]
            assert all(isinstance(d, str) for d in descriptions if d is not None), spec.name
    for shape in shapes.values():
        Draft202012Validator.check_schema(shape)


def test_an_invalid_schema_is_caught() -> None:
    """The check above can fail: blanking descriptions keeps what makes a schema invalid."""
    bad = {"type": "object", "properties": {"x": {"type": "strnig", "description": "잘못된 타입"}}}
    with pytest.raises(SchemaError):
        Draft202012Validator.check_schema(_shape(bad))


def test_chat_hides_the_key_and_bench_requires_it(catalog: Catalog) -> None:
    spec = catalog.get("get_stock_price_trend")
    chat, bench = to_mcp_tool(spec, "chat")["inputSchema"], to_mcp_tool(spec, "bench")["inputSchema"]
    assert "KEY" not in chat["properties"] and "KEY" not in chat.get("required", [])
    assert "KEY" in bench["properties"] and "KEY" in bench["required"]
    assert {"pageNo", "numOfRows"} <= set(chat["properties"]) & set(bench["properties"])
    assert chat["additionalProperties"] is False


def test_arguments_validate_against_the_exported_schema(catalog: Catalog) -> None:
    schema = to_mcp_tool(catalog.get("get_dart_single_company_key_accounts"), "chat")["inputSchema"]
    validator = Draft202012Validator(schema)
    assert validator.is_valid({"corp_code": "00126380", "bsns_year": "2025", "reprt_code": "11011"})
    assert not validator.is_valid({"corp_code": "00126380", "bsns_year": "2025", "reprt_code": "99999"})
    assert not validator.is_valid({"corp_code": "00126380"})  # missing required inputs
    assert not validator.is_valid({"corp_code": "00126380", "bsns_year": "2025", "reprt_code": "11011", "x": 1})


def test_records_validate_against_the_output_schema(catalog: Catalog) -> None:
    schema = to_mcp_tool(catalog.get("get_open_exam_question"), "chat")["outputSchema"]
    record = {"artlSeq": "4479825", "title": "2025년 가스기능장 실기 공개문제", "fileList": [{"fileNm": "a.pdf"}]}
    Draft202012Validator(schema).validate({"records": [record], "outcome": "semantic_success", "total_count": 1})


def test_openai_description_names_the_record_fields(catalog: Catalog) -> None:
    description = to_openai_function(catalog.get("find_dart_corp_code"), "chat")["function"]["description"]
    assert "corp_code" in description and "stock_code" in description


def test_unknown_profile_is_refused(catalog: Catalog) -> None:
    with pytest.raises(ValueError, match="unknown profile"):
        to_mcp_tool(catalog.get("evaluate_expression"), "admin")  # type: ignore[arg-type]


def test_read_only_and_writing_tools_are_annotated(catalog: Catalog) -> None:
    assert to_mcp_tool(catalog.get("search_laws"), "chat")["annotations"]["readOnlyHint"] is True
    assert to_mcp_tool(catalog.get("save_report"), "chat")["annotations"]["readOnlyHint"] is False


def test_contract_hash_changes_when_a_schema_changes(catalog: Catalog) -> None:
    spec = catalog.get("search_school_info")
    same = spec.model_copy()
    renamed_param = spec.model_copy(update={"params": tuple(
        p.model_copy(update={"name": "SCHUL_NAME"}) if p.name == "SCHUL_NM" else p for p in spec.params)})
    retyped_output = spec.model_copy(update={"output": (*spec.output[:-1], FieldSpec(
        name=spec.output[-1].name, type="integer", description_ko=spec.output[-1].description_ko))})
    writing = spec.model_copy(update={"writes_state": True})
    assert same.contract_hash() == spec.contract_hash()
    hashes = {spec.contract_hash(), renamed_param.contract_hash(), retyped_output.contract_hash(),
              writing.contract_hash()}
    assert len(hashes) == 4
