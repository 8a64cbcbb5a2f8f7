"""Lone surrogates (JSON's "\\udXXX" escapes) become U+FFFD; everything else is left as it is."""

from __future__ import annotations

import json

from mcp_gateway.text import scrub_surrogates


def test_lone_surrogates_in_strings_and_keys_are_replaced_and_pairs_kept():
    value = json.loads(r'{"a\udc4c": ["x\ud83d\ude00", "\ud800y", 3, null, true, {"k": "\udfff"}], "ok": "서울"}')
    scrubbed = scrub_surrogates(value)
    assert scrubbed == {"a\ufffd": ["x😀", "\ufffdy", 3, None, True, {"k": "\ufffd"}], "ok": "서울"}
    json.dumps(scrubbed, ensure_ascii=False).encode("utf-8")  # writable now


def test_clean_values_come_back_unchanged():
    value = {"query": "민법 제1조", "n": 1.5, "items": ["a", "b"]}
    assert scrub_surrogates(value) == value
    text = "이미 깨끗한 글"
    assert scrub_surrogates(text) is text  # no copy when there is nothing to replace
