"""Guided tool calls: once a turn opens ``<tool_call>``, the model writes the rest of the call under the grammar of
the tools the task offers (an offered name, then arguments that fit that tool's JSON schema, then the call's end);
outside a call it writes freely.

    guide = CallGrammar.for_tools(tokenizer, tools)   # one per turn: it follows what the turn has written
    mask = guide.allowed(ids_decoded_so_far)           # a bool tensor over the vocabulary, or None where free

This is what a serving stack does with a tool-calling model: llama.cpp's server starts a lazy grammar at the
``<tool_call>`` trigger (the hermes format's), vLLM's structured outputs constrain a call to its tool's schema.
The grammar is llguidance's (the library both use), one alternative per offered tool: begin
``<tool_call>\\n{"name": "NAME", "arguments": ``, an object of the tool's parameters, end ``}\\n</tool_call>``, the
layout the hermes chat templates render a call in (``models.toolcalls.hermes``); the separators are ``json.dumps``'s,
as in the training rows.

What stays the model's: whether it calls a tool at all, which offered tool, which of its parameters in which order,
and every value it writes. What the grammar takes away: a name the task does not offer, a key the schema does not
have, a value of the wrong JSON type, and a call that never ends. Keys are free in order (``_arguments_rules``):
a schema-ordered grammar made run5's tuned model write the value of the filter it meant to write first into
``KEY``, the first key the order allowed (``"KEY": "따릉이"``). A tuned Gemma 3 270M after 35 SFT rows (run4 of
``results/train-loop.md``) wrote an offered tool and the right key token and then repeated its arguments after the
object closed until its token budget ran out: an unreadable call, which the grammar closes where the object ends.

The grammar starts at the trigger, not at the start of the turn: text outside a call (and any special token there)
is never constrained, so a model that never opens a call decodes exactly as it would unguided. Each call gets a
fresh matcher, fed the text from the trigger on (a token may hold the trigger's end and what follows it).
"""

from __future__ import annotations

import copy
import json
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["TRIGGER", "CallGrammar", "call_grammar_text"]

TRIGGER = "<tool_call>"
CALL_END_TEXT = "}\n</tool_call>"  # the arguments' object closed, then the call
_SEPARATORS = {"item_separator": ", ", "key_separator": ": ", "whitespace_flexible": False}  # json.dumps's
_ANY_OBJECT: dict[str, Any] = {"type": "object"}

_tokenizers: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()  # llguidance's, by HF tokenizer


def _ll_tokenizer(tokenizer: Any) -> Any:
    """llguidance's view of ``tokenizer`` (~5 s for Gemma's 262k tokens, so kept per tokenizer object)."""
    if tokenizer not in _tokenizers:
        import llguidance

        backend = copy.copy(tokenizer.backend_tokenizer)
        backend.no_padding()
        backend.no_truncation()
        spec = json.loads(backend.to_str())
        if _byte_level(spec.get("pre_tokenizer")):
            # transformers 5 saves a byte-level BPE (SmolLM2's) with a decoder Sequence that llguidance reads as
            # SentencePiece, taking "Ċ" for its letters instead of the newline byte: give it the plain decoder
            spec["decoder"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                               "use_regex": True}
        _tokenizers[tokenizer] = llguidance.LLTokenizer(json.dumps(spec), eos_token=tokenizer.eos_token_id)
    return _tokenizers[tokenizer]


def _byte_level(part: Any) -> bool:
    if not isinstance(part, Mapping):
        return False
    return part.get("type") == "ByteLevel" or any(_byte_level(p) for p in part.get("pretokenizers") or ())


def _json(schema: Mapping[str, Any]) -> str:
    return "%json " + json.dumps({**schema, "x-guidance": _SEPARATORS})


def _arguments_rules(rule: str, tool: Mapping[str, Any], strict: bool) -> list[str]:
    """Lark rules for one tool's arguments object, ``rule`` naming it. With a closed schema (its ``properties``,
    ``additionalProperties: false``) the keys are the schema's, in any order, each value in its own schema: JSON
    schema grammars write properties in the schema's order, and a model trained on calls in another order (EDGE's:
    the filters, then ``KEY``, ``pageNo``, ``numOfRows``) then puts a filter's value into the first key the grammar
    allows. Otherwise (or ``strict=False``) any JSON object."""
    parameters = tool["function"].get("parameters")
    properties = parameters.get("properties") if isinstance(parameters, Mapping) else None
    if not strict or not isinstance(properties, Mapping) or parameters.get("additionalProperties") is not False:
        return [f"{rule}: {_json(_ANY_OBJECT)}"]
    if not properties:
        return [f'{rule}: "{{}}"']
    pairs = []
    for j, (name, schema) in enumerate(properties.items()):
        pairs.append(f"{rule}_{j}: {json.dumps(json.dumps(name) + ': ')} "
                     f"{_json(schema if isinstance(schema, Mapping) else {})}")
    alternatives = " | ".join(f"{rule}_{j}" for j in range(len(pairs)))
    return [f'{rule}: "{{}}" | "{{" {rule}_pair (", " {rule}_pair)* "}}"', f"{rule}_pair: {alternatives}", *pairs]


def call_grammar_text(tools: Sequence[Mapping[str, Any]], *, strict: bool = True) -> str:
    """The Lark grammar of one call to one of ``tools`` (OpenAI ``tools`` entries), from just after the trigger to
    the end of ``</tool_call>``. ``strict=False``: any JSON object as the arguments (only the name guided)."""
    if not tools:
        raise ValueError("a call grammar needs at least one offered tool")
    lines = ["%llguidance {}", "start: " + " | ".join(f"call_{i}" for i in range(len(tools)))]
    for i, tool in enumerate(tools):
        begin = '\n{"name": ' + json.dumps(tool["function"]["name"]) + ', "arguments": '
        lines.append(f"call_{i}: {json.dumps(begin)} args_{i} {json.dumps(CALL_END_TEXT)}")
        lines.extend(_arguments_rules(f"args_{i}", tool, strict))
    return "\n".join(lines) + "\n"


class CallGrammar:
    """The decoding guide of one turn (module doc)."""

    def __init__(self, tokenizer: Any, grammar: str, *, written_before: str = ""):
        self.tokenizer, self.grammar = tokenizer, grammar
        self.ll = _ll_tokenizer(tokenizer)
        self.written_before = written_before  # text of this turn before the first decoded id (tests)
        self.matcher: Any = None
        self.fed = 0  # decoded ids the open call's matcher has consumed
        self.searched_to = 0  # where in the turn's text to look for the next trigger

    @classmethod
    def for_tools(cls, tokenizer: Any, tools: Sequence[Mapping[str, Any]], *, written_before: str = "") -> CallGrammar:
        """The guide for a turn offered ``tools``; a schema llguidance cannot compile leaves only the names guided."""
        import llguidance

        grammar = call_grammar_text(tools)
        if llguidance.LLMatcher(_ll_tokenizer(tokenizer), grammar).is_error():
            grammar = call_grammar_text(tools, strict=False)
        return cls(tokenizer, grammar, written_before=written_before)

    def allowed(self, ids: Sequence[int]) -> Any:
        """The tokens that may come next after ``ids`` (this turn's decoded ids so far), as a bool tensor over the
        tokenizer's ids (``kv_reuse`` fits it to the logits); None where the model writes freely (outside a call)."""
        if self.matcher is not None:
            new = list(ids[self.fed:])
            self.fed = len(ids)
            if new and not self.matcher.consume_tokens(new):
                self._leave_call(ids)  # cannot happen when every token came from the mask; never stop decoding
                return None
            if self.matcher.is_stopped():
                self._leave_call(ids)
        if self.matcher is None and not self._open_call(ids):
            return None
        return self._mask()

    def _text(self, ids: Sequence[int]) -> str:
        return self.written_before + self.tokenizer.decode(list(ids), skip_special_tokens=False)

    def _open_call(self, ids: Sequence[int]) -> bool:
        import llguidance

        text = self._text(ids)
        start = text.find(TRIGGER, self.searched_to)
        if start < 0:
            self.searched_to = max(self.searched_to, len(text) - len(TRIGGER) + 1)
            return False
        matcher = llguidance.LLMatcher(self.ll, self.grammar)
        rest = text[start + len(TRIGGER):]
        if rest and not matcher.consume_tokens(self.ll.tokenize_str(rest)):
            self.searched_to = start + len(TRIGGER)  # what follows the trigger already left the grammar
            return False
        self.matcher, self.fed = matcher, len(ids)
        if matcher.is_stopped():  # the whole call came in the trigger's token (not seen with real tokenizers)
            self._leave_call(ids)
            return False
        return True

    def _leave_call(self, ids: Sequence[int]) -> None:
        self.matcher = None
        self.searched_to = len(self._text(ids))

    def _mask(self) -> Any:
        import numpy as np
        import torch

        bits = np.unpackbits(np.frombuffer(self.matcher.compute_bitmask(), dtype=np.uint8), bitorder="little")
        return torch.from_numpy(bits.astype(bool))
