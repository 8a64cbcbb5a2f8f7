"""Guided decoding of a tool call's name: inside ``<tool_call>{"name": "`` the model may only write one of the
tools the task offers, then the closing quote; everything else it writes (its text, the arguments) is its own.

    vocab = TokenTexts.of(tokenizer)                  # built once per tokenizer (a few seconds for 262k tokens)
    guide = ToolNameGuide(vocab, ["get_station", "get_route"])
    allowed = guide.allowed(text_written_so_far)      # token ids, or None where the model writes freely

This is what a serving stack's tool-name guidance does (vLLM's named tool choice and structured outputs,
llama.cpp's grammars): a model that has learned the call format but not yet to read the offered list cannot name a
tool that does not exist for the task. It is applied to every evaluated model alike. Only the name is guided: a
call's arguments, and whether the model calls a tool at all, stay the model's.

A token is allowed when its text is a prefix of what is left of some offered name (the closing ``"`` included),
or when it begins with all of what is left: a token like ``",`` closes the name and goes on, as the model's own
tokenization of a call does. Allowing only a lone ``"`` made a tuned Gemma close the call right after the name
(``{"name": "get_rest_area_fuel_prices"\n</tool_call>``, run4's step-35 checkpoint): it had learned ``",`` there.
Token texts are measured after an anchor token, so a SentencePiece ``▁`` or a byte-level ``Ġ`` reads as the space
it writes.
"""

from __future__ import annotations

import bisect
import re
import weakref
from collections.abc import Sequence
from typing import Any

__all__ = ["NAME_OPENING", "TokenTexts", "ToolNameGuide", "offered_names"]

NAME_OPENING = re.compile(r'<tool_call>\s*\{\s*"name"\s*:\s*"([^"]*)\Z')
"""The text of a turn that has opened a hermes call's name and not closed it (group 1: the name so far)."""

_ANCHOR_TEXT = "a"


class TokenTexts:
    """Every token's text as it reads inside a longer text, and the ids of each text (several ids may write the
    same text)."""

    _cache: weakref.WeakKeyDictionary[Any, TokenTexts] = weakref.WeakKeyDictionary()  # by tokenizer object

    def __init__(self, texts: Sequence[str]):
        self.ids_of: dict[str, list[int]] = {}
        for token_id, text in enumerate(texts):
            if text:
                self.ids_of.setdefault(text, []).append(token_id)
        self.sorted_texts = sorted(self.ids_of)  # for the texts that begin with a given string

    def beginning_with(self, prefix: str) -> list[int]:
        """The ids of every token whose text begins with ``prefix``."""
        start = bisect.bisect_left(self.sorted_texts, prefix)
        ids: list[int] = []
        for text in self.sorted_texts[start:]:
            if not text.startswith(prefix):
                break
            ids.extend(self.ids_of[text])
        return ids

    @classmethod
    def of(cls, tokenizer: Any) -> TokenTexts:
        """The texts of ``tokenizer``'s vocabulary (kept per tokenizer object: building them decodes every token)."""
        if tokenizer not in cls._cache:
            anchor = tokenizer.encode(_ANCHOR_TEXT, add_special_tokens=False)
            prefix = tokenizer.decode(anchor)
            size = len(tokenizer)
            decoded = tokenizer.batch_decode([[*anchor, i] for i in range(size)], skip_special_tokens=False)
            special = set(tokenizer.all_special_ids)
            texts = [text[len(prefix):] if text.startswith(prefix) and i not in special else ""
                     for i, text in enumerate(decoded)]
            cls._cache[tokenizer] = cls(texts)
        return cls._cache[tokenizer]


class ToolNameGuide:
    """The tokens that may come next in one turn, given the text the turn has written so far (module doc)."""

    def __init__(self, vocab: TokenTexts, names: Sequence[str]):
        if not names:
            raise ValueError("a tool-name guide needs at least one offered tool")
        self.vocab, self.names = vocab, tuple(names)

    def allowed(self, text: str) -> list[int] | None:
        """Token ids that keep an opened name on an offered tool; None outside a name (or when the name written
        so far already left every offered one, which guidance from the start of the name never lets happen)."""
        opened = NAME_OPENING.search(text)
        if opened is None:
            return None
        written = opened.group(1)
        ids: set[int] = set()
        for name in self.names:
            if name.startswith(written):
                rest = name[len(written):] + '"'
                for end in range(1, len(rest)):
                    ids.update(self.vocab.ids_of.get(rest[:end], ()))
                ids.update(self.vocab.beginning_with(rest))  # the rest and what follows it in one token
        return sorted(ids) or None


def offered_names(tools: Sequence[Any]) -> list[str]:
    """The names of a policy's ``tools`` (OpenAI ``tools`` entries)."""
    return [tool["function"]["name"] for tool in tools]
