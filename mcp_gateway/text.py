"""Text that can always be written out: lone surrogates replaced.

JSON may escape a lone UTF-16 surrogate (``"\\udc4c"``); Python's JSON reader turns it into a ``str`` that
no UTF-8 encoder accepts, so the first write of it (a request body, a transcript line, a cassette) raises
``UnicodeEncodeError``. A small model writes such escapes now and then. Whatever reads JSON from outside
(a model server's reply, a model's tool-call arguments, a client's request) passes it through
``scrub_surrogates`` first; a surrogate becomes U+FFFD, as a UTF-8 decoder does with bytes it cannot read.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["scrub_surrogates"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub_surrogates(value: Any) -> Any:
    """``value`` (JSON: str, list, dict, scalars) with every lone surrogate in its strings and keys made U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value
    if isinstance(value, list):
        return [scrub_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {scrub_surrogates(k): scrub_surrogates(v) for k, v in value.items()}
    return value
