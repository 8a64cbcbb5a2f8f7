"""How fast the loop's evaluation can generate: prefill tokens/s and decode seconds per step, per batch size.

    python benchmarks/generation_speed.py                          # Gemma 3 270M, 3,400-token prompts, batches 1 and 8
    python benchmarks/generation_speed.py --model smollm2 --context 2000 --batch 1 --batch 4 --new 16
    python benchmarks/generation_speed.py --attn sdpa --attn eager # the attention kernels side by side
    python benchmarks/generation_speed.py --precision fp32 --precision bf16 --precision bf16-weights

An evaluation episode is one prefill of its whole prompt per turn and then up to ``max_new_tokens`` decode steps
(``train.engines.trl.generate``): these two figures, times the loop's settings, give an evaluation's time. The
prompts are random token ids of the given length (speed does not depend on their text). Figures go to stdout as a
Markdown table; run it on an idle machine, as other work on the cores changes them.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gemma3", help="a packaged model (gemma3, smollm2) or a model folder")
    parser.add_argument("--home", type=Path, default=Path(os.environ.get("KOPA_HOME", Path.home() / ".kopa")))
    parser.add_argument("--context", type=int, default=3400, help="prompt tokens per sequence")
    parser.add_argument("--batch", type=int, action="append", help="batch sizes (repeatable; default 1 and 8)")
    parser.add_argument("--new", type=int, default=32, help="decode steps timed")
    parser.add_argument("--attn", action="append", help="attention implementations (repeatable; default: the "
                                                        "model's own)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--precision", action="append", choices=("fp32", "bf16", "bf16-weights"),
                        help="fp32, bf16 autocast over fp32 weights, or the weights themselves in bf16 (repeatable; "
                             "default fp32)")
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForCausalLM

    from train.engines.trl.model import resolve_model

    if args.threads:
        torch.set_num_threads(args.threads)
    source = resolve_model(Path(args.model), home=args.home)
    print(f"model {source.base}, torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"context {args.context}, {args.new} decode steps\n")
    print("| attention | precision | batch | prefill tokens/s | prefill s | decode s/step | decode tokens/s |")
    print("|---|---|---|---|---|---|---|")
    for attn, precision in [(a, p) for a in args.attn or [None] for p in args.precision or ["fp32"]]:
        extra = {"attn_implementation": attn} if attn else {}
        dtype = torch.bfloat16 if precision == "bf16-weights" else torch.float32
        model = AutoModelForCausalLM.from_pretrained(source.base, dtype=dtype, **extra).eval()
        vocab = model.config.get_text_config().vocab_size
        for batch in args.batch or [1, 8]:
            ids = torch.randint(1000, min(vocab, 30000), (batch, args.context), generator=torch.Generator().manual_seed(0))
            mask = torch.ones_like(ids)
            autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16")
            with torch.no_grad(), autocast:
                start = time.perf_counter()
                model.generate(input_ids=ids, attention_mask=mask, do_sample=False, max_new_tokens=1, min_new_tokens=1,
                               pad_token_id=0)
                prefill = time.perf_counter() - start
                start = time.perf_counter()
                model.generate(input_ids=ids, attention_mask=mask, do_sample=False, max_new_tokens=args.new + 1,
                               min_new_tokens=args.new + 1, pad_token_id=0)
                decode = (time.perf_counter() - start - prefill) / args.new
            name = attn or model.config._attn_implementation
            print(f"| {name} | {precision} | {batch} | {batch * args.context / prefill:,.0f} | {prefill:.1f} | "
                  f"{decode:.3f} | {batch / decode:.1f} |", flush=True)


if __name__ == "__main__":
    main()
