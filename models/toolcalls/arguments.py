"""Structured arguments (OpenAI ``tool_calls``, hermes ``arguments``): JSON text or an object, read and typed.

The arguments string is JSON read with ``strict=False`` (raw newlines inside strings pass: llama.cpp's argument
grammar lets them through); empty or None is ``{}``; text that is not JSON is kept as it is, with a problem
saying so, so that the call is still passed on (the runtime refuses it and ACTION counts the attempt). An object
has its values typed by ``models.toolcalls.values.type_arguments``.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_gateway.text import scrub_surrogates

from .values import ParameterTypes, type_arguments

__all__ = ["read_arguments"]


def read_arguments(raw: Any, types: ParameterTypes) -> tuple[Any, str | None]:
    """(the arguments as the model meant them, what was wrong with them or None).

    A dict when they were one JSON object; another JSON value as it is (the runtime refuses a non-object); the
    raw text when they were not JSON.
    """
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None
    value = raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw, strict=False)
        except json.JSONDecodeError as exc:
            return scrub_surrogates(raw), f"the arguments were not valid JSON ({exc}); send them as one JSON object"
    value = scrub_surrogates(value)
    return (type_arguments(value, types) if isinstance(value, dict) else value), None
