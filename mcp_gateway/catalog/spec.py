"""The catalog's data model: one ``ToolSpec`` per tool, the only source of every schema.

A tool is what a model sees (name, Korean description, typed parameters) plus how the runtime
reaches the upstream (``Endpoint``). Parameters carry a ``kind``: generic ones (API key,
paging, format) are handled per profile by the runtime; the rest are the tool's own inputs.
Output schemas describe one record (field, type, Korean description); every tool result
wraps records in the same page envelope (see ``mcp_gateway.runtime.result.ToolResult``).
"""

from __future__ import annotations

import hashlib
import json
import re
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

TOOL_NAME_MAX = 128
TOOL_NAME_RULE = re.compile(rf"^[A-Za-z0-9._-]{{1,{TOOL_NAME_MAX}}}$")  # the MCP tool-name rule
ParamType = Literal["string", "integer", "number", "boolean"]
FieldType = Literal["string", "integer", "number", "boolean", "array", "object"]  # output fields may nest
Family = Literal["hub", "seoul", "datago", "dart", "expressway", "law", "schoolinfo", "internal"]


class ParamKind(StrEnum):
    """What a parameter is for. Everything but NORMAL is generic (Table 7: 'generic-only success')."""

    NORMAL = "normal"
    API_KEY = "api_key"
    PAGE_NO = "page_no"
    PAGE_SIZE = "page_size"
    FORMAT = "format"


class ParamSpec(BaseModel):
    """One input parameter as the model sees it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="parameter name in the tool schema (the real API's name where it has one)")
    type: ParamType = "string"
    description_ko: str = Field(description="Korean description shown to the model")
    required: bool = False
    kind: ParamKind = ParamKind.NORMAL
    enum: tuple[str, ...] | None = None
    default: Any = None
    upstream: str | None = Field(None, description="upstream parameter name when it differs from `name`")
    value_template: str | None = Field(None, description="format applied before sending, e.g. '%{}%' (unused: None)")

    @property
    def is_generic(self) -> bool:
        return self.kind is not ParamKind.NORMAL


class FieldSpec(BaseModel):
    """One field of an output record."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    type: FieldType = "string"
    description_ko: str


class Endpoint(BaseModel):
    """How the runtime reaches the upstream for a tool."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    platform: str = Field(description="platform id (public_apis.PLATFORM_IDS); base URL comes from configuration")
    family: Family = Field(description="envelope family: picks the platform client")
    path: str = Field(description="path below the platform base URL, or the Seoul SERVICE name")
    base: Literal["main", "schoolinfo"] = Field("main", description="which base URL of the platform")
    fixed: dict[str, str] = Field(default_factory=dict, description="upstream params always sent (target=law, ...)")
    path_params: tuple[str, ...] = Field((), description="Seoul: tool params placed as path segments, in order")
    list_key: str | None = Field(None, description=(
        "where the records sit when the family's default differs: a dot path from the JSON root "
        "('LawSearch.law', 'response.body.items.item'); '$' is the root itself; a path that ends at an "
        "object (one record, or a one-row list serialised as an object) yields one record"))
    max_page_size: int = Field(100, ge=1, description="largest page the upstream serves in one call")
    upstream_paged: bool = Field(True, description=(
        "False: the upstream answers everything in one response (corpCode.xml, restOilList, 학교알리미, "
        "law bodies); the client cuts the requested page itself and reports the full count"))
    local_filters: dict[str, Literal["exact", "like"]] = Field(default_factory=dict, description=(
        "tool params the upstream cannot filter by: the client applies them to the records it read "
        "(exact match, or 'like' = case-insensitive substring), e.g. corp_name on the corpCode.xml ZIP"))


class ToolSpec(BaseModel):
    """A tool: the model-facing signature and its endpoint."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    platform: str
    domain: Literal["traffic", "finance", "education", "law", "politics", "district", "utility", "workspace"]
    description_ko: str
    params: tuple[ParamSpec, ...] = ()
    output: tuple[FieldSpec, ...] = ()
    endpoint: Endpoint | None = Field(None, description="None for built-in tools (expression, keys, workspace)")
    realtime: bool = Field(False, description="answers change by the minute: never reproducible from a cassette")
    writes_state: bool = Field(False, description="changes the session's workspace state")
    paged: bool = Field(True, description="returns a page of records with a total count")

    @field_validator("name")
    @classmethod
    def _mcp_name(cls, name: str) -> str:
        if not TOOL_NAME_RULE.match(name):
            raise ValueError(f"tool name {name!r} breaks the MCP rule ^[A-Za-z0-9._-]{{1,128}}$")
        return name

    def param(self, name: str) -> ParamSpec | None:
        return next((p for p in self.params if p.name == name), None)

    def input_schema(self, *, include_generic: frozenset[ParamKind] = frozenset(ParamKind)) -> dict[str, Any]:
        """JSON Schema of the arguments; generic kinds not in ``include_generic`` are left out."""
        props: dict[str, Any] = {}
        required: list[str] = []
        for p in self.params:
            if p.is_generic and p.kind not in include_generic:
                continue
            prop: dict[str, Any] = {"type": p.type, "description": p.description_ko}
            if p.enum:
                prop["enum"] = list(p.enum)
            if p.default is not None:
                prop["default"] = p.default
            props[p.name] = prop
            if p.required:
                required.append(p.name)
        schema: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
        if required:
            schema["required"] = required
        return schema

    def record_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {f.name: {"type": [f.type, "null"], "description": f.description_ko}
                                                 for f in self.output}}

    def output_schema(self) -> dict[str, Any]:
        """JSON Schema of the structured result (the page envelope around records)."""
        return {"type": "object", "properties": {
            "records": {"type": "array", "items": self.record_schema()},
            "total_count": {"type": ["integer", "null"], "description": "조건에 맞는 전체 레코드 수"},
            "page_no": {"type": ["integer", "null"]}, "page_size": {"type": ["integer", "null"]},
            "upstream_code": {"type": ["string", "null"]}, "outcome": {"type": "string"},
        }, "required": ["records", "outcome"]}

    def annotations(self) -> dict[str, Any]:
        return {"readOnlyHint": not self.writes_state, "openWorldHint": self.endpoint is not None,
                "idempotentHint": not self.writes_state}

    def contract_hash(self) -> str:
        """SHA-256 over name, input schema, output schema and annotations: changes show up."""
        body = json.dumps({"name": self.name, "input": self.input_schema(), "output": self.output_schema(),
                           "annotations": self.annotations()}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(body.encode()).hexdigest()
