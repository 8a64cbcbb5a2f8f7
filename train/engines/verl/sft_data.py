"""verl's multi-turn SFT dataset over EDGE's SFT conversations (``data.custom_cls`` of ``configs/sft.yaml``).

``kopa train sft`` writes EDGE's ``sft.jsonl`` into ``<run>/sft.parquet`` with ``messages`` and ``tools`` as JSON
strings (``train.sft_export.sft_parquet``): Arrow would otherwise give every tool call's arguments and every tool
schema the union of all rows' keys. This subclass decodes them after verl reads the file, and turns each tool
call's JSON-string arguments into the object chat templates iterate over, typed by the row's tool schemas
(``models.toolcalls.template_messages``: the readers' one value-typing rule).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from verl.utils.dataset.multiturn_sft_dataset import MultiTurnSFTDataset

from models.toolcalls import template_messages  # absolute: verl loads this file by its path

__all__ = ["KopaSFTDataset", "decode_messages", "decode_tools"]


def decode_tools(value: Any) -> list[dict[str, Any]]:
    """A row's ``tools``: the JSON string the parquet holds, or the list itself; None is no tools."""
    if value is None:
        return []
    return json.loads(value) if isinstance(value, (str, bytes)) else list(value)


def decode_messages(value: Any, tools: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """A row's ``messages`` (a JSON string, or the list) with tool-call arguments as typed objects."""
    messages = json.loads(value) if isinstance(value, (str, bytes)) else list(value)
    return template_messages(messages, tools)


class KopaSFTDataset(MultiTurnSFTDataset):
    """``MultiTurnSFTDataset`` reading the JSON-string ``messages``/``tools`` columns (module doc)."""

    def _read_files_and_process(self) -> None:
        super()._read_files_and_process()
        if self.tools is not None:
            self.tools = [decode_tools(t) for t in self.tools]
        tools = self.tools if self.tools is not None else [()] * len(self.messages)
        self.messages = [decode_messages(m, t) for m, t in zip(self.messages, tools)]

    def _build_messages(self, example: dict) -> list:
        tools = decode_tools(example.get(self.tools_key))
        return super()._build_messages({**example, self.messages_key: decode_messages(example[self.messages_key],
                                                                                      tools)})
