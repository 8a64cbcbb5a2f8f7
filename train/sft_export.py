"""EDGE's SFT conversations (``sft.jsonl``) as a parquet file that any trainer reading parquet can take.

    sft_parquet(Path("out/edge/sft.jsonl"), run_dir / "sft.parquet")

Each line of ``sft.jsonl`` (``edge.dataset.export.export_sft``) is ``{"messages": [...], "tools": [...]}`` in the
OpenAI chat format. The parquet has the two columns ``messages`` and ``tools``, each a JSON string: as Arrow
structs, every tool call's arguments and every tool schema would get the union of all rows' keys. A reader decodes
them per row (verl's ``train.engines.verl.sft_data.KopaSFTDataset`` does, and turns tool-call arguments into
objects with ``models.toolcalls.template_messages``).
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["sft_parquet"]


def sft_parquet(jsonl: Path, out: Path) -> Path:
    """EDGE's SFT JSON lines ``jsonl`` written to ``out`` with ``messages``/``tools`` as JSON strings; returns ``out``.

    Raises:
        OSError: ``jsonl`` cannot be read or ``out`` written.
        ValueError: a line is not JSON.
        KeyError: a line has no ``messages``.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines() if line.strip()]
    table = pa.table({"messages": [json.dumps(r["messages"], ensure_ascii=False) for r in rows],
                      "tools": [json.dumps(r.get("tools") or [], ensure_ascii=False) for r in rows]})
    pq.write_table(table, out)
    return out
