"""Our qwen3_coder reading held to verl's and vLLM's own parsers, on the well-formed rows of the reply table.

verl 0.9.1 is in the dev venv (``--no-deps``), so the verl check runs in CI; the vLLM check runs where vLLM is
installed (``pip install --no-deps vllm==0.33.0`` and its parser modules' imports) and is skipped only without it.
Where a parser's typing differs from our rule (``models.toolcalls.values``), the row is listed below with the
reason; for verl the listed value is asserted too, so the list cannot go stale.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from models.toolcalls import AssistantTurn, VerlQwen3CoderParser, choose_parser, vllm_importable

from .reply_table import TOOLS, WELL_FORMED, typed

ours = choose_parser("qwen3_coder")

# row id -> (why verl reads it otherwise, the calls verl reads: (name, arguments))
VERL_DIFFERS: dict[str, tuple[str, list[tuple[str, Any]]]] = {
    "integer 3.0": ("verl reads an integer with int(), which refuses '3.0'; JSON Schema counts 3.0 as an integer",
                    [("list_things", {"pageNo": "3.0"})]),
    "boolean yes": ("verl turns any boolean text but 'true' into False; we keep it as text (no guessing)",
                    [("list_things", {"exact": False})]),
    "array with JSON literals": ("verl reads an array only with ast.literal_eval, which knows no JSON true/null",
                                 [("list_things", {"codes": '["a", true, null]'})]),
    "lone surrogates": ("verl keeps lone surrogates, which no UTF-8 writer accepts; we make them U+FFFD",
                        [("list_things", {"NAME": "a\udc4cb"})]),
}

# row id -> why vLLM's qwen3_coder parser reads it otherwise (from its source; the values are not asserted: they
# moved between vLLM releases)
VLLM_DIFFERS: dict[str, str] = {
    "integer 3.0": "vLLM reads an integer with int(), which refuses '3.0'",
    "boolean yes": "vLLM turns any boolean text but 'true' into False",
    "lone surrogates": "vLLM keeps lone surrogates",
    "null in any case": "recent vLLM keeps 'null' for a string parameter that is not nullable",
    "anyOf and enum types": "vLLM reads a parameter with neither type nor anyOf (an enum) as a string",
}


def calls(turn: AssistantTurn) -> str:
    return typed([(c.name, c.arguments) for c in turn.calls])


@pytest.fixture(scope="module")
def verl_parser() -> VerlQwen3CoderParser:
    pytest.importorskip("verl.experimental.agent_loop.tool_parser")
    return VerlQwen3CoderParser()


@pytest.mark.parametrize("row", WELL_FORMED, ids=lambda r: r.id)
def test_verl_reads_each_well_formed_reply_as_we_do_or_as_listed(row, verl_parser):
    mine, theirs = ours.parse(row.reply, TOOLS), verl_parser.parse(row.reply, TOOLS)
    if row.id in VERL_DIFFERS:
        reason, verl_calls = VERL_DIFFERS[row.id]
        assert calls(theirs) == typed(verl_calls) != calls(mine), reason
    else:
        assert calls(theirs) == calls(mine)
        assert theirs.content.rstrip() == mine.content  # verl keeps the whitespace before the first call


def test_the_verl_differences_name_rows_of_the_table():
    assert set(VERL_DIFFERS) <= {r.id for r in WELL_FORMED} and set(VLLM_DIFFERS) <= {r.id for r in WELL_FORMED}


def load_benchmark() -> Any:
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "vllm_parser_parity.py"
    spec = importlib.util.spec_from_file_location("vllm_parser_parity", path)
    assert spec is not None and spec.loader is not None
    parity = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(parity)
    return parity


@pytest.mark.skipif(not vllm_importable(), reason="vLLM is not installed here (3.4 GB with its parser imports)")
def test_vllm_reads_each_well_formed_reply_as_we_do():
    from models.toolcalls import VllmQwen3CoderParser

    parser = VllmQwen3CoderParser(load_benchmark().stand_in_tokenizer())
    differ = {}
    for row in WELL_FORMED:
        if row.id in VLLM_DIFFERS:
            continue  # listed with the reason
        theirs, mine = parser.parse(row.reply, TOOLS), ours.parse(row.reply, TOOLS)
        if (calls(theirs), theirs.content) != (calls(mine), mine.content):
            differ[row.id] = (calls(theirs), calls(mine))
    assert differ == {}


def test_the_vllm_parity_cases_are_labelled_as_the_fallback_reads_them():
    """benchmarks/vllm_parser_parity.py compares vLLM's parser with ours on these; its labels must be right."""
    parity = load_benchmark()
    path = Path(parity.__file__)
    for case, text, well_formed in parity.CASES:
        turn = ours.parse(text, parity.TOOLS)
        assert bool(turn.problems) is not well_formed, case
        if well_formed:
            assert bool(turn.calls) is ("<tool_call>" in text), case
    read = ours.parse(parity.CASES[2][1], parity.TOOLS).calls
    assert read[0].arguments == {"NAME": "x", "pageNo": 2, "ratio": 0.5, "exact": True, "filter": {"a": 1},
                                 "codes": ["01", "02"]}
    if not vllm_importable():  # the script says so and exits 2, rather than reporting a parity it did not check
        done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and "vLLM is not importable" in done.stderr
