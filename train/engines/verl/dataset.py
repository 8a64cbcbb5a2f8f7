"""verl's ``RLHFDataset`` over EDGE's parquet: the JSON-string columns decoded as rows are read.

    data.custom_cls.path=<repo>/train/engines/verl/dataset.py  data.custom_cls.name=KopaRLHFDataset

EDGE's export (``edge.dataset.export``) writes ``extra_info`` as one JSON string, so that the per-item fields
(golden arguments of every shape) do not go through Arrow's struct unification, which would give every row the
union of all rows' keys. verl's ``RLHFDataset.__getitem__`` reads ``extra_info`` as a dict
(``row["extra_info"].get("index")``) and fails on a string; this subclass decodes it (and a JSON-string
``reward_model.ground_truth`` stays as it is: the reward decodes it) when a row is read, and changes nothing
else. A parquet whose ``extra_info`` is already a struct reads the same way.
"""

from __future__ import annotations

from typing import Any

from verl.utils.dataset.rl_dataset import RLHFDataset

from train.tasks import decode_json  # absolute: verl loads this file by its path

__all__ = ["KopaRLHFDataset"]


class _DecodedRows:
    """A view of an HF ``datasets.Dataset`` whose integer-indexed rows have ``extra_info`` decoded."""

    def __init__(self, frame: Any):
        self._frame = frame

    def __getitem__(self, item: Any) -> Any:
        row = self._frame[item]
        if isinstance(item, int) and isinstance(row, dict) and isinstance(row.get("extra_info"), (str, bytes)):
            row["extra_info"] = decode_json(row["extra_info"])
        return row

    def __len__(self) -> int:
        return len(self._frame)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._frame, name)


class KopaRLHFDataset(RLHFDataset):
    """``RLHFDataset`` reading EDGE's JSON-string ``extra_info`` (module doc)."""

    def _read_files_and_tokenize(self) -> None:
        super()._read_files_and_tokenize()
        self.dataframe = _DecodedRows(self.dataframe)

    def __getitem__(self, item: Any) -> dict[str, Any]:
        return super().__getitem__(int(item))
