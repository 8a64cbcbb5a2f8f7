"""Compact JSON for the portals' answers, written by orjson (the JSON encoding is a large share of a page's cost)."""

from __future__ import annotations

import json
from typing import Any

import orjson


def compact(payload: Any) -> bytes:
    """``json.dumps(payload, ensure_ascii=False, separators=(",", ":"))`` as UTF-8, several times faster.

    Byte for byte the same for what the portals send: strings, ints, booleans, nulls, lists and
    objects (they print every other number as a string, so orjson's float style never shows).
    Anything orjson refuses (an int beyond 64 bits, a non-string key) goes through ``json``.
    """
    try:
        return orjson.dumps(payload)
    except orjson.JSONEncodeError:
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
