"""verl's multi-turn SFT dataset over EDGE's SFT conversations (``data.custom_cls`` of ``configs/sft.yaml``).

``kopa train sft`` writes EDGE's ``sft.jsonl`` into ``<run>/sft.parquet`` with ``messages`` and ``tools`` as JSON
strings (``train.launch.sft_parquet``): Arrow would otherwise give every tool call's arguments and every tool
schema the union of all rows' keys. This subclass decodes them after verl reads the file, and turns each tool
call's JSON-string arguments into the object chat templates iterate over.
"""

from __future__ import annotations

import json
from typing import Any

from verl.utils.dataset.multiturn_sft_dataset import MultiTurnSFTDataset

__all__ = ["KopaSFTDataset", "decode_messages"]


def decode_messages(value: Any) -> list[dict[str, Any]]:
    messages = json.loads(value) if isinstance(value, (str, bytes)) else list(value)
    for message in messages:
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            if isinstance(function.get("arguments"), str):
                try:
                    function["arguments"] = json.loads(function["arguments"])
                except ValueError:
                    function["arguments"] = {}
    return messages


class KopaSFTDataset(MultiTurnSFTDataset):
    def _read_files_and_process(self) -> None:
        super()._read_files_and_process()
        self.messages = [decode_messages(m) for m in self.messages]
        if self.tools is not None:
            self.tools = [json.loads(t) if isinstance(t, (str, bytes)) else t for t in self.tools]

    def _build_messages(self, example: dict) -> list:
        return super()._build_messages({**example, self.messages_key: decode_messages(example[self.messages_key])})
