"""The tool catalog: one ToolSpec per tool (≥ 2,318 over ten platforms), the only source of every schema.

    from mcp_gateway.catalog import load_catalog, to_mcp_tool
    catalog = load_catalog()
    tools = [to_mcp_tool(spec, "chat") for spec in catalog]
"""

from .catalog import (
    Catalog,
    DuplicateToolError,
    UnknownToolError,
    build_spec,
    load_catalog,
)
from .datasets import dataset_tool_name, export_dataset_specs, load_dataset_specs
from .export import PROFILE_GENERICS, input_schema, to_mcp_tool, to_openai_function
from .generic import PLATFORMS, SpecDataError, key_tool_name
from .spec import Endpoint, FieldSpec, ParamKind, ParamSpec, ToolSpec

__all__ = [
    "PLATFORMS", "PROFILE_GENERICS", "Catalog", "DuplicateToolError", "Endpoint", "FieldSpec", "ParamKind",
    "ParamSpec", "SpecDataError", "ToolSpec", "UnknownToolError", "build_spec", "dataset_tool_name",
    "export_dataset_specs", "input_schema", "key_tool_name", "load_catalog", "load_dataset_specs", "to_mcp_tool",
    "to_openai_function",
]
