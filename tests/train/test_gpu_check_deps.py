"""The GPU check's dataset is made without the sandbox world: a bare GPU host carries its wheels in a 64 MiB budget
(``train.engines.trl.gpu_check``'s module doc), and duckdb (20 MB) is not among them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_the_gpu_check_dataset_is_made_without_duckdb_or_the_sandbox(tmp_path):
    code = ("import json, sys\nfrom pathlib import Path\nfrom train.engines.trl.gpu_check import bench_dataset\n"
            "out = bench_dataset(Path(sys.argv[1]))\n"
            "print(json.dumps([sorted(p.name for p in out.iterdir()), 'duckdb' in sys.modules, "
            "'sandbox' in sys.modules]))\n")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "dataset")], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=True)
    files, duckdb, sandbox = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"items.jsonl", "sft.jsonl", "train.parquet"} <= set(files)
    assert (duckdb, sandbox) == (False, False)
