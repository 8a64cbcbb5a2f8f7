"""benchmarks/eval_prompt_tokens.py plays the eval split's first turns and prints what the prompts are made of.

The figures themselves are measured on demand with the loop's model (docs/benchmarks.md); this runs the script with
the loop's tiny model on two tasks and checks the table adds up: parts within the prompt, the prefill estimate from
the total.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import TEST_DATA_DIR

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "eval_prompt_tokens.py"


def test_the_first_turns_are_counted_by_part_and_priced_at_the_prefill_rate():
    done = subprocess.run([sys.executable, str(SCRIPT), "--model", "tiny", "--tasks", "2", "--seeds", "0,1",
                           "--prefill-rate", "100", "--home", str(TEST_DATA_DIR)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "2 tasks x 2 seed(s) = 4 first turns" in out, out

    def mean(label: str) -> int:
        row = re.search(rf"^\| {re.escape(label)} \| ([\d,]+) \|", out, re.MULTILINE)
        assert row, (label, out)
        return int(row.group(1).replace(",", ""))

    prompt, tools, generic = mean("prompt"), mean("tool schemas"), mean("… of which KEY/pageNo/numOfRows")
    system, question = mean("system message"), mean("question")
    assert 0 < generic < tools < prompt and 0 < question < system < prompt
    assert tools + system + question <= prompt + 2  # means round each part: the parts lie within the prompt
    seconds = int(re.search(r"at 100 tokens/s: ([\d,]+) s", out).group(1).replace(",", ""))
    assert abs(seconds - 4 * prompt / 100) <= 1, out  # the 4 prompts read at 100 tokens/s (rounding aside)
