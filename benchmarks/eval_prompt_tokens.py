"""What the loop's evaluation reads: first-turn prompt tokens of the eval split, by part, under the loop's limits.

    python benchmarks/eval_prompt_tokens.py [--model gemma3] [--split eval-v1] [--seeds 0] [--prefill-rate 114]

Each (task, seed) plays one episode through ``train.episode.run_rollout`` on a strict-replay gateway of its bundle,
with the loop's limits (``LOOP_LIMITS``: tool descriptions cut to 80 characters, the generic parameters bare; with
``--generic-prose`` described, as runs up to run9 had them), up to the model's first turn: the
prompt the model would read is rendered by its chat template (``ChatTemplateTokens``, as evaluation renders it) and
counted, then the episode stops. Parts: the tools' schemas (the prompt with its tools minus the prompt without
them), the generic parameters inside them (API key, page, page size: the same in every tool), the system message
and the question. Prefill is compute-bound on a CPU, so ``--prefill-rate`` (tokens/s; 114 measured by
``benchmarks/generation_speed.py`` for Gemma 3 270M in fp32 on the 2-core build machine) turns the total into the
seconds an evaluation spends reading first turns alone. Figures go to stdout as Markdown.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))



def _tokenizer(model: str, home: Path):  # noqa: ANN202 - a Hugging Face tokenizer
    from transformers import AutoTokenizer

    if model == "tiny":  # the loop's --quick model, built under the home
        from models.checkpoints import tiny_checkpoint

        return AutoTokenizer.from_pretrained(tiny_checkpoint(home / "models" / "smollm2-tiny-loop", layers=2, seed=0))
    from train.engines.trl.model import resolve_model

    return AutoTokenizer.from_pretrained(resolve_model(Path(model), home=home).base)


def _generic_tokens(tokenizer, tools: list[dict]) -> int:  # noqa: ANN001
    """Tokens of the generic parameters' schema entries, as the template writes them (JSON)."""
    from bench.agents.step import GENERIC_PARAMS

    total = 0
    for tool in tools:
        properties = tool.get("function", tool).get("parameters", {}).get("properties", {})
        for name in GENERIC_PARAMS:
            if name in properties:
                entry = json.dumps({name: properties[name]}, ensure_ascii=False)[1:-1]
                total += len(tokenizer.encode(entry, add_special_tokens=False))
    return total


async def _first_prompts(tokenizer, tasks, seeds, cassettes: Path, home: Path,  # noqa: ANN001
                         limits) -> list[dict[str, int]]:  # noqa: ANN001
    from bench.runner import open_bench_gateway
    from train.engines.trl.tokens import ChatTemplateTokens
    from train.episode import PolicyStop, run_rollout

    codec = ChatTemplateTokens(tokenizer)
    count = lambda text: len(tokenizer.encode(text, add_special_tokens=False))  # noqa: E731
    rows: list[dict[str, int]] = []
    gateways: dict[str, object] = {}
    try:
        for seed in seeds:
            for task in tasks:
                if task.bundle not in gateways:
                    gateways[task.bundle] = open_bench_gateway(task.bundle, cassettes=cassettes, home=home)

                async def measure(messages, tools):  # noqa: ANN001, ANN202 - a policy: measures, then stops
                    messages, tools = list(messages), list(tools)
                    total = count(codec.render(messages, tools, add_generation_prompt=True))
                    bare = count(codec.render(messages, [], add_generation_prompt=True))
                    system = next((m["content"] for m in messages if m["role"] == "system"), "")
                    rows.append({"total": total, "tools": total - bare, "generic": _generic_tokens(tokenizer, tools),
                                 "n_tools": len(tools), "system": count(system) if system else 0,
                                 "question": count(messages[-1]["content"])})
                    raise PolicyStop("first turn measured")

                await run_rollout(task, measure, gateways[task.bundle], limits=limits, seed=seed)
    finally:
        for gateway in gateways.values():
            await gateway.aclose()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gemma3", help="a packaged model (gemma3, smollm2), tiny, or a folder")
    parser.add_argument("--split", default="eval-v1", help="a registered split or a split file")
    parser.add_argument("--seeds", default="0", help="comma-separated evaluation seeds (they reorder the tools)")
    parser.add_argument("--tasks", type=int, default=None, help="the split's first N tasks only")
    parser.add_argument("--prefill-rate", type=float, default=114.0, help="prompt tokens/s the model reads")
    parser.add_argument("--home", type=Path, default=Path(os.environ.get("KOPA_HOME", Path.home() / ".kopa")))
    parser.add_argument("--cassettes", type=Path, default=REPO / "cassettes")
    parser.add_argument("--generic-prose", action="store_true", help="show KEY/pageNo/numOfRows with their prose, "
                                                                     "as runs up to run9 had them")
    args = parser.parse_args()

    from bench.splits import load_split

    split = load_split(args.split)
    tasks = list(split.tasks)[: args.tasks] if args.tasks else list(split.tasks)
    seeds = [int(s) for s in args.seeds.split(",")]
    tokenizer = _tokenizer(args.model, args.home)
    from train.loop.settings import LOOP_LIMITS

    limits = LOOP_LIMITS.model_copy(update={"bare_generic_params": False}) if args.generic_prose else LOOP_LIMITS
    rows = asyncio.run(_first_prompts(tokenizer, tasks, seeds, args.cassettes, args.home, limits))
    total = sum(r["total"] for r in rows)
    print(f"model {args.model}, split {split.name}: {len(tasks)} tasks x {len(seeds)} seed(s) = {len(rows)} first "
          f"turns, the loop's limits{' with the generic parameters described' if args.generic_prose else ''}\n")
    print("| part | mean tokens | min | max | share of the prompt |")
    print("|---|---|---|---|---|")
    for part, label in (("total", "prompt"), ("tools", "tool schemas"), ("generic", "… of which KEY/pageNo/numOfRows"),
                        ("system", "system message"), ("question", "question")):
        values = [r[part] for r in rows]
        share = 100 * sum(values) / total if total else 0.0
        print(f"| {label} | {statistics.fmean(values):,.0f} | {min(values):,} | {max(values):,} | {share:.1f} % |")
    print(f"\ntools per prompt: mean {statistics.fmean(r['n_tools'] for r in rows):.1f}")
    print(f"first-turn prefill of these {len(rows)} prompts at {args.prefill_rate:g} tokens/s: "
          f"{total / args.prefill_rate:,.0f} s (each later turn re-reads only what it adds)")


if __name__ == "__main__":
    main()
