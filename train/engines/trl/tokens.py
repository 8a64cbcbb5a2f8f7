"""A tokenizer's chat template as the agent step's ``TokenCodec``: the episode as the model's own token ids.

    trace = TokenTrace(ChatTemplateTokens(tokenizer), max_response_tokens=4096)
    rollout = await run_rollout(task, policy, gateway, tokens=trace)     # policy generates from trace.ids
    trace.prompt_ids, trace.response_ids, trace.response_mask            # 1 where the model wrote the token

* ``start``: the first prompt, ``apply_chat_template(messages, tools=tools, add_generation_prompt=True)``; the
  messages reach the template through ``models.toolcalls.template_messages`` (tool-call arguments as objects), as
  verl's Continuous Token builder gets them, so both engines see the same prompt ids for the same row.
* ``add_generation``: the generated ids as they came, mask 1 (the model's tokens are never re-tokenized).
* ``add_context``: mask 0, exactly the text the template adds after what the model has seen: the rest of the
  model's turn after its end-of-turn token (``<|im_end|>`` ends the generation, the template writes
  ``<|im_end|>\\n``; the end-of-turn token itself when the generation was cut before it), the new messages (tool
  results) and the next generation prompt. That text is the template's rendering of all messages minus its
  rendering of the ones seen, so a model that writes each turn as the template would render it gives exactly the
  ids of the whole conversation rendered at once (no drift); the text is tokenized alone, as verl does, which is
  exact where it starts and ends at special tokens (ChatML's turn markers).

Works with any tokenizer whose template renders a conversation's prefix as a prefix of its rendering (ChatML
templates do); one that does not is an error naming both texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.agents.step import Generation, TokenTrace
from models.toolcalls import template_messages

__all__ = ["ChatTemplateTokens", "TemplateDrift"]


class TemplateDrift(ValueError):
    """The chat template renders the messages seen differently once more messages follow them."""


class ChatTemplateTokens:
    """``TokenCodec`` over a Hugging Face tokenizer and its chat template (module doc).

    ``end_of_turn``: the token that ends a generated turn (by default the tokenizer's eos token, ``<|im_end|>`` for
    KOPA's checkpoints).
    """

    def __init__(self, tokenizer: Any, *, end_of_turn: str | None = None):
        self.tokenizer = tokenizer
        self.end_of_turn = end_of_turn or tokenizer.eos_token
        self.end_of_turn_id = tokenizer.convert_tokens_to_ids(self.end_of_turn)
        self.special_tokens: Sequence[str] = [t for t in (getattr(tokenizer, "all_special_tokens", None) or []) if t]

    def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *,
               add_generation_prompt: bool) -> str:
        """The conversation as the template writes it (tool-call arguments as objects)."""
        return self.tokenizer.apply_chat_template(template_messages(messages, tools), tools=tools or None,
                                                  add_generation_prompt=add_generation_prompt, tokenize=False)

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    async def start(self, trace: TokenTrace, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> None:
        trace.ids = self.encode(self.render(messages, tools, add_generation_prompt=True))

    async def add_context(self, trace: TokenTrace, seen: list[dict[str, Any]], messages: list[dict[str, Any]],
                          tools: list[dict[str, Any]]) -> None:
        before = self.render(seen, tools, add_generation_prompt=False)
        after = self.render(messages, tools, add_generation_prompt=True)
        if not after.startswith(before):
            raise TemplateDrift(f"the chat template renders the {len(seen)} messages seen as {before[-200:]!r} alone "
                                f"but as {after[len(before) - 200:len(before)]!r} with the new messages after them")
        end = before.rfind(self.end_of_turn)
        if end < 0:
            raise TemplateDrift(f"the chat template wrote no {self.end_of_turn!r} after the model's turn: "
                                f"{before[-200:]!r}")
        # the rest of the model's turn: after its end-of-turn token, or from it when the generation was cut before it
        closed = bool(trace.ids) and trace.ids[-1] == self.end_of_turn_id
        tail = before[end + len(self.end_of_turn):] if closed else before[end:]
        ids = self.encode(tail + after[len(before):])
        trace.ids = trace.ids + ids
        trace.response_mask = trace.response_mask + [0] * len(ids)
        if trace.response_logprobs:
            trace.response_logprobs = trace.response_logprobs + [0.0] * len(ids)

    async def add_generation(self, trace: TokenTrace, generation: Generation) -> None:
        ids = list(generation.token_ids)
        if generation.logprobs is not None or trace.response_logprobs:
            logprobs = list(generation.logprobs) if generation.logprobs is not None else [0.0] * len(ids)
            if len(logprobs) != len(ids):
                raise ValueError(f"a generation of {len(ids)} tokens came with {len(logprobs)} log-probs")
            # the context before the first logprobs had none: zeros, as the mask gives them no weight
            trace.response_logprobs = (trace.response_logprobs or [0.0] * len(trace.response_mask)) + logprobs
        trace.ids = trace.ids + ids
        trace.response_mask = trace.response_mask + [1] * len(ids)
