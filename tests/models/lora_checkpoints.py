"""A seeded random LoRA checkpoint as the trl engine writes one: what the serving and conversion tests serve."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def random_lora(model: Any, folder: Path, *, r: int, info: dict[str, Any]) -> Any:
    """``model`` with a LoRA adapter (``r``, alpha 2r, every projection; B weights drawn, so it changes the output),
    seeded, saved to ``folder`` with ``kopa-checkpoint.json`` = ``{"kind": "lora", "engine": "trl", "parent": None,
    **info}`` written last (the folder is complete once it exists). Returns the PEFT model."""
    import torch
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(0)
    peft = get_peft_model(model, LoraConfig(r=r, lora_alpha=2 * r, target_modules=TARGETS))
    with torch.no_grad():
        for name, weight in peft.named_parameters():
            if "lora_B" in name:
                weight.normal_(0.0, 0.02)
    peft.save_pretrained(folder)
    (folder / "kopa-checkpoint.json").write_text(json.dumps({"kind": "lora", "engine": "trl", "parent": None,
                                                             **info}), encoding="utf-8")
    return peft
