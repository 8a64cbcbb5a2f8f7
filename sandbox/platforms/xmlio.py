"""Small XML writer for the envelopes the Korean portals send.

The portals' XML is plain: nested elements, no attributes, repeated elements for lists. A
dict becomes child elements in key order; a list repeats the element named by its key (or by
``item_tag`` when given); ``None`` becomes an empty element.
"""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape

XML_DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'


def element(tag: str, value: Any, item_tag: str | None = None) -> str:
    """Serialise ``value`` as the element ``tag``."""
    if isinstance(value, dict):
        return f"<{tag}>{''.join(element(k, v) for k, v in value.items())}</{tag}>"
    if isinstance(value, list):
        child = item_tag or tag
        inner = "".join(element(child, v) for v in value)
        return inner if item_tag is None else f"<{tag}>{inner}</{tag}>"
    if value is None or value == "":
        return f"<{tag}/>"
    return f"<{tag}>{escape(str(value))}</{tag}>"


def document(tag: str, value: Any) -> str:
    return XML_DECL + element(tag, value)
