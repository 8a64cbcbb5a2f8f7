"""Input limits: how large one tool call's arguments and one HTTP request body may be.

    limits = InputLimits(max_string_chars=2_000)
    limits.check_arguments("search_laws", {"query": "민법"})   # raises LimitExceeded naming the parameter

``ToolRuntime`` checks every call's arguments (after their types) before any upstream call, so
the MCP server, the bench runner, EDGE and training all get the same refusals; the MCP HTTP app
refuses a larger request body with 413 before it is parsed. The defaults keep the largest
request URL a call can make (each argument byte percent-encodes to at most 3 characters) under
the 65,536 characters that the HTTP client accepts. This module imports nothing heavy: the
appliance's settings embed ``InputLimits``.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_MAX_STRING_CHARS = 4_096
DEFAULT_MAX_ARGUMENTS_BYTES = 16_384
DEFAULT_MAX_ARRAY_ITEMS = 256
DEFAULT_MAX_REQUEST_BYTES = 1_048_576
SETTINGS_PREFIX = "KOPA_GATEWAY__LIMITS__"  # where an operator changes them (or [gateway.limits] in kopa.toml)


class LimitExceeded(ValueError):
    """An argument or request is larger than a limit; the message names the parameter, the size and the limit."""

    def __init__(self, message: str, *, parameter: str, limit: str) -> None:
        super().__init__(message)
        self.parameter, self.limit = parameter, limit


class InputLimits(BaseModel):
    """Sizes one tool call may not exceed. Each is a setting: ``KOPA_GATEWAY__LIMITS__<NAME>``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_string_chars: int = Field(DEFAULT_MAX_STRING_CHARS, ge=1,
                                  description="characters in any one string argument")
    max_arguments_bytes: int = Field(DEFAULT_MAX_ARGUMENTS_BYTES, ge=2,
                                     description="UTF-8 bytes of one call's arguments as compact JSON")
    max_array_items: int = Field(DEFAULT_MAX_ARRAY_ITEMS, ge=1,
                                 description="items in any one array argument (or array inside an argument)")
    max_request_bytes: int = Field(DEFAULT_MAX_REQUEST_BYTES, ge=1024,
                                   description="bytes of one HTTP request body at /mcp (larger: 413)")

    def check_arguments(self, tool: str, args: dict[str, Any]) -> None:
        """Refuse ``args`` of ``tool`` if a string, an array or the whole is over its limit.

        Raises:
            LimitExceeded: the first parameter over a limit, or the arguments as a whole.
        """
        for name, value in args.items():
            self._check_value(tool, name, value)
        size = len(json.dumps(args, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"))
        if size > self.max_arguments_bytes:
            raise LimitExceeded(
                f"{tool}: the arguments are {size:,} bytes as JSON; the limit is {self.max_arguments_bytes:,} bytes "
                f"(setting {SETTINGS_PREFIX}MAX_ARGUMENTS_BYTES). Send shorter values.",
                parameter="*", limit="max_arguments_bytes")

    def _check_value(self, tool: str, path: str, value: Any) -> None:
        # An explicit stack, not recursion: in-process callers can hand over arbitrarily deep values.
        stack = [(path, value)]
        while stack:
            where, item = stack.pop()
            if isinstance(item, str) and len(item) > self.max_string_chars:
                raise LimitExceeded(
                    f"{tool}: parameter {where!r} is {len(item):,} characters long; the limit is "
                    f"{self.max_string_chars:,} (setting {SETTINGS_PREFIX}MAX_STRING_CHARS). Send a shorter value.",
                    parameter=where, limit="max_string_chars")
            if isinstance(item, list):
                if len(item) > self.max_array_items:
                    raise LimitExceeded(
                        f"{tool}: parameter {where!r} has {len(item):,} items; the limit is {self.max_array_items:,} "
                        f"(setting {SETTINGS_PREFIX}MAX_ARRAY_ITEMS). Send fewer items.",
                        parameter=where, limit="max_array_items")
                stack += [(f"{where}[{i}]", v) for i, v in enumerate(item)]
            elif isinstance(item, dict):
                stack += [(f"{where}.{k}", v) for k, v in item.items()]


DEFAULT_LIMITS = InputLimits()
