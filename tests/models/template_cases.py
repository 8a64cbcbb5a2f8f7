"""One small tool conversation for the chat-template tests of each packaged model (``models.templates``)."""

from __future__ import annotations

from collections.abc import Sequence

TOOLS = [{"type": "function", "function": {
    "name": "get_bus_arrivals", "description": "버스 도착 정보",
    "parameters": {"type": "object", "properties": {"stop_id": {"type": "string"}, "limit": {"type": "integer"}},
                   "required": ["stop_id"]}}}]
CONVERSATION = [
    {"role": "system", "content": "You solve the user's request with tools."},
    {"role": "user", "content": "서울역 버스 도착 정보를 알려줘"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_bus_arrivals",
                                                      "arguments": {"stop_id": "서울역", "limit": 2}}},
        {"id": "c2", "type": "function", "function": {"name": "get_bus_arrivals",
                                                      "arguments": {"stop_id": "01-234"}}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "{\"arrivals\": [3, 7]}"},
    {"role": "tool", "tool_call_id": "c2", "content": "{\"arrivals\": []}"},
    {"role": "assistant", "content": "서울역에 3분, 7분 뒤 버스가 옵니다."},
]

# the first call shown but not learnt (OpenAI's fine-tuning "weight": 0): the template leaves it out of the mask
WEIGHTED = [{**m, "weight": 0} if i == 2 else m for i, m in enumerate(CONVERSATION)]


def masked_spans(ids: Sequence[int], mask: Sequence[bool | int]) -> list[list[int]]:
    """The runs of ``ids`` whose mask is set, in order (what a loss or assistant mask covers)."""
    spans: list[list[int]] = []
    current: list[int] = []
    for token, bit in zip(ids, mask, strict=True):
        if bit:
            current.append(token)
        elif current:
            spans.append(current)
            current = []
    if current:
        spans.append(current)
    return spans


def learnt_spans_with_weight_0(tokenizer) -> list[str]:
    """The assistant-masked text of ``WEIGHTED`` under ``tokenizer``'s template, after checking it renders as
    ``CONVERSATION`` does (a turn of weight 0 changes what is learnt, never what the model reads)."""
    plain, weighted = (tokenizer.apply_chat_template(conversation, tools=TOOLS, tokenize=True, return_dict=True,
                                                     return_assistant_tokens_mask=True)
                       for conversation in (CONVERSATION, WEIGHTED))
    assert weighted["input_ids"] == plain["input_ids"]
    return [tokenizer.decode(span) for span in masked_spans(weighted["input_ids"], weighted["assistant_masks"])]

