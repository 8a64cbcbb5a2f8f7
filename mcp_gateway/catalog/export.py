"""Tool schemas for the outside world, per profile: MCP tool definitions and OpenAI functions.

A profile decides which generic parameters the model sees: ``chat`` hides the API key (the
gateway injects the real one), ``bench`` shows it (the model must pass the episode-scoped
token from ``get_<platform>_api_key``). Paging is visible in both; the format never is.
"""

from __future__ import annotations

from typing import Any, Literal

from .spec import ParamKind, ToolSpec

Profile = Literal["chat", "bench"]
PROFILE_GENERICS: dict[str, frozenset[ParamKind]] = {
    "chat": frozenset({ParamKind.PAGE_NO, ParamKind.PAGE_SIZE}),
    "bench": frozenset({ParamKind.API_KEY, ParamKind.PAGE_NO, ParamKind.PAGE_SIZE}),
}


def input_schema(spec: ToolSpec, profile: Profile) -> dict[str, Any]:
    try:
        visible = PROFILE_GENERICS[profile]
    except KeyError:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILE_GENERICS)}") from None
    return spec.input_schema(include_generic=visible)


def to_mcp_tool(spec: ToolSpec, profile: Profile) -> dict[str, Any]:
    """The MCP ``Tool`` as a dict: name, description, inputSchema, outputSchema, annotations."""
    return {"name": spec.name, "description": spec.description_ko, "inputSchema": input_schema(spec, profile),
            "outputSchema": spec.output_schema(), "annotations": spec.annotations()}


def to_openai_function(spec: ToolSpec, profile: Profile) -> dict[str, Any]:
    """An OpenAI ``tools`` entry. Functions have no output schema, so the record fields are named in the description."""
    description = spec.description_ko
    if spec.output:
        description += "\n반환 레코드 필드: " + ", ".join(f.name for f in spec.output)
    return {"type": "function", "function": {"name": spec.name, "description": description,
                                             "parameters": input_schema(spec, profile)}}
