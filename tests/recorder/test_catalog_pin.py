"""What a catalog change looks like: tools added, removed, changed, and how each changed."""

from __future__ import annotations

import pytest

from recorder import CatalogPin, diff_catalogs


def tool(params: dict, description: str = "설명", required: tuple[str, ...] = (), fields: dict | None = None) -> dict:
    schema = {"type": "object", "properties": params, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    records = {"type": "object", "properties": fields or {"a": {"type": ["string", "null"]}}}
    return {"description": description, "input_schema": schema,
            "output_schema": {"type": "object", "properties": {"records": {"type": "array", "items": records}}}}


S = {"type": "string", "description": "이름"}
I = {"type": "integer", "description": "쪽"}


def changes(old: dict, new: dict) -> list[str]:
    diff = diff_catalogs(CatalogPin.build({"t": old}), CatalogPin.build({"t": new}))
    return list(diff.changed[0].changes) if diff.changed else []


@pytest.mark.parametrize(("old", "new", "expected"), [
    (tool({"name": S}), tool({"title": S}), ["parameter 'name' renamed to 'title'"]),
    (tool({"name": S}, required=("name",)), tool({"title": S}, required=("title",)),
     ["parameter 'name' renamed to 'title'"]),
    (tool({"name": S}), tool({"name": S, "page": I}), ["parameter 'page' added"]),
    (tool({"name": S, "page": I}), tool({"name": S}), ["parameter 'page' removed"]),
    (tool({"page": I}), tool({"page": {**I, "type": "string"}}), ["parameter 'page' type integer → string"]),
    (tool({"page": I}), tool({"page": {**I, "description": "페이지"}}), ["parameter 'page' description changed"]),
    (tool({"page": I}), tool({"page": I}, description="새 설명"), ["description changed"]),
    (tool({"page": I}), tool({"page": I}, required=("page",)), ["required parameters none → page"]),
    (tool({}), tool({}, fields={"b": {"type": ["string", "null"]}}), ["output field 'a' renamed to 'b'"]),
    (tool({}), tool({}, fields={"a": {"type": ["integer", "null"]}}),
     ["output field 'a' type ['string', 'null'] → ['integer', 'null']"]),
])
def test_each_kind_of_tool_change_is_named(old, new, expected):
    assert changes(old, new) == expected


def test_tools_added_and_removed_are_listed_and_the_same_catalog_is_no_change():
    a = CatalogPin.build({"kept": tool({}), "gone": tool({})})
    b = CatalogPin.build({"kept": tool({}), "new": tool({})})
    diff = diff_catalogs(a, b)
    assert (diff.added, diff.removed, diff.changed) == (("new",), ("gone",), ())
    assert "1 tool(s) added: new; 1 tool(s) removed: gone" in diff.message("b@v")
    assert not diff_catalogs(a, CatalogPin.build({"gone": tool({}), "kept": tool({})}))


def test_a_pin_reads_back_and_refuses_bytes_that_are_not_one():
    pin = CatalogPin.build({"t": tool({"name": S})})
    assert CatalogPin.from_bytes(pin.to_bytes()) == pin
    with pytest.raises(ValueError, match="x.zst: not a catalog pin"):
        CatalogPin.from_bytes(b"garbage", where="x.zst")
