"""Which model a trl run starts from, and loading it with a LoRA adapter to train.

    source = resolve_model(None, home=home)          # the packaged SmolLM2 as a Hugging Face folder (made once)
    source = resolve_model(Path("run/checkpoint"), home=home)   # continue an adapter: base from its kopa-checkpoint.json
    source = resolve_model(Path("gemma3"), home=home)           # a packaged model by name (models.checkpoints)
    model, tokenizer = load_for_training(source, seed=0)        # a PeftModel (LoRA r=16, alpha=32) and its tokenizer

``--model`` may name a packaged model (``gemma3``, ``smollm2``: ``models.checkpoints.PACKAGED_MODELS``; a folder of
that name wins), a Hugging Face checkpoint folder (``config.json``), a LoRA adapter folder
(``adapter_config.json``; its base is read from ``kopa-checkpoint.json`` or from the adapter's
``base_model_name_or_path``), or a run folder of this engine (its ``checkpoint/``). Anything else is a
``ModelInputError`` with one line naming the path and what is missing; nothing is loaded or written before the
path is checked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["LORA_TARGETS", "LoraSettings", "ModelInputError", "ModelSource", "load_for_inference", "load_for_training",
           "resolve_model"]

LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
INFO_FILE = "kopa-checkpoint.json"


class ModelInputError(ValueError):
    """A ``--model`` path (or a dataset) that this engine cannot train from; the message is one line."""


@dataclass(frozen=True)
class LoraSettings:
    """The LoRA adapter trained on every projection of the attention and the MLP."""

    r: int = 16
    alpha: int = 32
    dropout: float = 0.05
    targets: tuple[str, ...] = LORA_TARGETS


@dataclass(frozen=True)
class ModelSource:
    """What a run starts from: the ``base`` Hugging Face folder, the GGUF it was made from (when known), and an
    ``adapter`` folder to continue (None: a fresh adapter)."""

    base: Path
    base_gguf: Path | None = None
    adapter: Path | None = None
    info: dict[str, Any] = field(default_factory=dict)


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelInputError(f"{path} cannot be read as JSON ({type(exc).__name__}: {exc})") from None
    return data if isinstance(data, dict) else {}


def _gguf_of(folder: Path) -> Path | None:
    """The GGUF a base folder was converted from (``models.checkpoints`` writes ``source_gguf``)."""
    info = folder / INFO_FILE
    source = _json(info).get("source_gguf") if info.is_file() else None
    return Path(source) if source else None


def resolve_model(model: Path | None, *, home: Path) -> ModelSource:
    """The model a run starts from (module doc). ``None``: the packaged SmolLM2 base, converted on first use; the name
    of a packaged model: its base, likewise.

    Raises:
        ModelInputError: ``model`` does not exist, is not a folder, or holds neither a model nor an adapter.
        models.errors.ModelServerError: the packaged GGUF is missing or cannot be converted.
    """
    from models.checkpoints import PACKAGED_MODELS, base_checkpoint

    name = None if model is None else str(model)
    if name is None or (name in PACKAGED_MODELS and not Path(name).exists()):  # a packaged model: gemma3, smollm2
        base = base_checkpoint(home, model=name or "smollm2")
        return ModelSource(base=base.resolve(), base_gguf=_gguf_of(base))
    path = Path(model).expanduser()
    if not path.exists():
        raise ModelInputError(f"--model {model}: does not exist; give a Hugging Face model folder, a LoRA adapter "
                              "folder or a trl run folder")
    if not path.is_dir():
        raise ModelInputError(f"--model {model}: is not a folder; give a Hugging Face model folder, a LoRA adapter "
                              "folder or a trl run folder")
    if (path / "checkpoint" / "adapter_config.json").is_file():  # a run folder of this engine
        path = path / "checkpoint"
    path = path.resolve()
    if (path / "adapter_config.json").is_file():
        info = _json(path / INFO_FILE) if (path / INFO_FILE).is_file() else {}
        base = info.get("base") or _json(path / "adapter_config.json").get("base_model_name_or_path")
        if not base or not (Path(base) / "config.json").is_file():
            raise ModelInputError(f"--model {model}: the adapter's base model {base!r} is not a local Hugging Face "
                                  "folder (no config.json there)")
        gguf = info.get("base_gguf")
        return ModelSource(base=Path(base), base_gguf=Path(gguf) if gguf else None, adapter=path, info=info)
    if (path / "config.json").is_file():
        return ModelSource(base=path, base_gguf=_gguf_of(path))
    raise ModelInputError(f"--model {model}: is not a model folder (no config.json of a Hugging Face model, no "
                          "adapter_config.json of a LoRA adapter)")


def _load_tokenizer(source: ModelSource) -> Any:
    """The tokenizer a run trains or evaluates with: the adapter's when it kept one, else the base's, with the current
    text of the chat template its checkpoint names (``current_template``); a ChatML model without the tool-carrying
    template gets it (``fix_tokenizer``)."""
    from transformers import AutoTokenizer

    from models.checkpoints import EOS_TOKEN, current_template, fix_tokenizer
    from models.templates import HERMES_CHATML

    tokenizer_dir = source.adapter if source.adapter and (source.adapter / "tokenizer_config.json").is_file() \
        else source.base
    tokenizer = current_template(AutoTokenizer.from_pretrained(tokenizer_dir), source.base)
    if tokenizer.chat_template != HERMES_CHATML and EOS_TOKEN in tokenizer.get_vocab():
        fix_tokenizer(tokenizer)
    return tokenizer


def load_for_training(source: ModelSource, *, seed: int, lora: LoraSettings = LoraSettings()) -> tuple[Any, Any]:
    """The model with a trainable LoRA adapter (fresh, or ``source.adapter`` continued) and its tokenizer, in fp32
    (the trainer's autocast picks bf16 where it pays). ``seed`` seeds torch, numpy and random first, so a fresh
    adapter starts from the same weights every time."""
    import torch
    from peft import LoraConfig, PeftModel, get_peft_model
    from transformers import AutoModelForCausalLM, set_seed

    set_seed(seed)
    tokenizer = _load_tokenizer(source)
    model = AutoModelForCausalLM.from_pretrained(source.base, dtype=torch.float32)
    if source.adapter is not None:
        return PeftModel.from_pretrained(model, source.adapter, is_trainable=True), tokenizer
    config = LoraConfig(r=lora.r, lora_alpha=lora.alpha, lora_dropout=lora.dropout,
                        target_modules=list(lora.targets), task_type="CAUSAL_LM")
    return get_peft_model(model, config), tokenizer


def load_for_inference(source: ModelSource) -> tuple[Any, Any]:
    """The model (with ``source.adapter`` applied, not trainable) and its tokenizer, fp32, in eval mode: what an
    evaluation plays greedily."""
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    tokenizer = _load_tokenizer(source)
    model = AutoModelForCausalLM.from_pretrained(source.base, dtype=torch.float32)
    if source.adapter is not None:
        model = PeftModel.from_pretrained(model, source.adapter, is_trainable=False)
    return model.eval(), tokenizer
