"""Trainable checkpoints: a packaged GGUF (SmolLM2 135M, Gemma 3 270M) as a Hugging Face folder with the
tool-carrying chat template.

    path = base_checkpoint(home)          # <home>/models/smollm2-135m-kopa: config, safetensors, tokenizer
    path = base_checkpoint(home, model="gemma3")          # <home>/models/gemma3-270m-kopa
    tiny = tiny_checkpoint(out, layers=2) # SmolLM2's shape and tokenizer, 2 layers, random weights (CI, smoke runs)
    model = AutoModelForCausalLM.from_pretrained(path); tokenizer = AutoTokenizer.from_pretrained(path)

transformers reads a GGUF into a torch model with the ``gguf`` package (de-quantizing to fp32), so it is done once
and kept as a folder that loads in a second: SmolLM2 (Q4_1) ~40 s on 2 cores, Gemma 3 (Q4_K_M) ~70 s (15 s of it
building the tokenizer from the GGUF's 262k pieces). Each tokenizer is fixed on the way (``PackagedModel``).

SmolLM2 (``models.llama_cpp.smollm2_gguf``):

* the GGUF's tokenizer names ``<|im_start|>`` as its end-of-sequence token while the model stops on
  ``<|im_end|>`` (id 2, the GGUF's ``eos_token_id``): generation and training would never learn to stop;
* it has no padding token: ``<|endoftext|>`` (id 0), which the model never writes inside a turn;
* its chat template knows no tools: ``models.templates.HERMES_CHATML`` replaces it.

Measured (``tests/models/test_checkpoints.py``): one token per digit, byte-level Hangul (a syllable is 2-3 tokens:
서울특별시 강남구 is 24), ``<tool_call>`` 5 tokens of plain text.

Gemma 3 270M (``models.gemma.gemma3_gguf``):

* transformers reads the GGUF's tokenizer as a Unigram that splits text unlike llama.cpp and the model's
  training (``models.gemma``): ``models.gemma.gemma3_tokenizer`` builds the SentencePiece BPE instead (~15 s),
  equal to llama.cpp's ids on every bench query and on a rendered tool conversation;
* the GGUF names ``<eos>`` (id 1) as its end while the model ends each turn with ``<end_of_turn>`` (id 106): that is
  the end it is trained and served with, ``<eos>`` stays a second stop for generation;
* its padding token is right: ``<pad>`` (id 0); ``<bos>`` (id 2) opens every text, written by the template;
* the GGUF carries no chat template: ``models.templates.HERMES_GEMMA``.

Measured (``tests/models/test_gemma.py``): one token per digit; ``<start_of_turn>`` (105) and ``<end_of_turn>``
(106) single, special tokens; whole Hangul words are tokens (서울특별시 강남구 is 4: 서울특별시, " 강", 남, 구); the
bench's 145 Korean queries take 0.607 tokens per character (SmolLM2 2.04); ``<tool_call>`` 5 tokens of plain text;
no ``<bos>`` is added to plain text (``HERMES_GEMMA`` writes it).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ModelServerError
from .gemma import GEMMA_END_OF_TURN, GEMMA_PAD_TOKEN, gemma3_gguf, gemma3_tokenizer
from .llama_cpp import smollm2_gguf
from .templates import GEMMA_TEMPLATE_NAME, HERMES_CHATML, HERMES_GEMMA, TEMPLATE_NAME

__all__ = ["BASE_NAME", "EOS_TOKEN", "PACKAGED_MODELS", "PAD_TOKEN", "PackagedModel", "base_checkpoint",
           "checkpoint_info", "current_template", "fix_tokenizer", "is_checkpoint", "packaged_model",
           "tiny_checkpoint"]

BASE_NAME = "smollm2-135m-kopa"
EOS_TOKEN, PAD_TOKEN = "<|im_end|>", "<|endoftext|>"
INFO_FILE = "kopa-checkpoint.json"  # what the folder is made from: source GGUF, template, parent checkpoint


@dataclass(frozen=True)
class PackagedModel:
    """A model shipped as a GGUF in a Python package, and what its tokenizer is fixed with (module doc)."""

    name: str  # what ``model=`` and ``--model`` call it
    folder: str  # the checkpoint's folder under <home>/models
    eos: str  # the token that ends the model's turn: the tokenizer's eos, the config's eos_token_id
    pad: str
    template: str
    template_name: str
    locate: Callable[[Path | None], Path]  # the GGUF, given <home>/models (None: the package's own place)
    also_stops: tuple[str, ...] = ()  # further ends for generation (the GGUF's own eos where it differs)
    read_tokenizer: Callable[[Path], Any] | None = None  # None: transformers' reading of the GGUF

    def tokenizer(self, gguf: Path):
        """The GGUF's tokenizer, fixed (``fix_tokenizer``)."""
        if self.read_tokenizer is not None:
            return fix_tokenizer(self.read_tokenizer(gguf), self.name)
        from transformers import AutoTokenizer

        return fix_tokenizer(AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name), self.name)


PACKAGED_MODELS: dict[str, PackagedModel] = {
    "smollm2": PackagedModel("smollm2", BASE_NAME, EOS_TOKEN, PAD_TOKEN, HERMES_CHATML, TEMPLATE_NAME,
                             lambda _models: smollm2_gguf()),
    "gemma3": PackagedModel("gemma3", "gemma3-270m-kopa", GEMMA_END_OF_TURN, GEMMA_PAD_TOKEN, HERMES_GEMMA,
                            GEMMA_TEMPLATE_NAME, gemma3_gguf, also_stops=("<eos>",),
                            read_tokenizer=gemma3_tokenizer),
}


def packaged_model(name: str) -> PackagedModel:
    """The packaged model called ``name``.

    Raises:
        ModelServerError: no packaged model has that name (the message lists those that do).
    """
    try:
        return PACKAGED_MODELS[name]
    except KeyError:
        raise ModelServerError(f"no packaged model {name!r}; the packaged models are "
                               f"{', '.join(sorted(PACKAGED_MODELS))}") from None


def fix_tokenizer(tokenizer, model: str = "smollm2"):
    """The tokenizer with the end, padding and chat template the model is trained and served with (module doc)."""
    spec = packaged_model(model)
    tokenizer.eos_token, tokenizer.pad_token = spec.eos, spec.pad
    tokenizer.chat_template = spec.template
    return tokenizer


def current_template(tokenizer, checkpoint: Path):
    """The tokenizer with the current text of the chat template its checkpoint names (``kopa-checkpoint.json``):
    a checkpoint converted before a template change reads the current one, which renders every conversation the
    old one did the same way. A checkpoint made elsewhere keeps its own."""
    name = checkpoint_info(checkpoint).get("template")
    spec = next((m for m in PACKAGED_MODELS.values() if m.template_name == name), None)
    if spec is not None:
        tokenizer.chat_template = spec.template
    return tokenizer


def is_checkpoint(path: Path) -> bool:
    return (Path(path) / "config.json").is_file()


def checkpoint_info(path: Path) -> dict:
    """The folder's ``kopa-checkpoint.json`` (empty for a folder made elsewhere)."""
    info = Path(path) / INFO_FILE
    return json.loads(info.read_text(encoding="utf-8")) if info.is_file() else {}


def base_checkpoint(home: Path, *, model: str = "smollm2", gguf: Path | None = None,
                    name: str | None = None) -> Path:
    """``<home>/models/<name>`` (the packaged model's folder by default), made from ``gguf`` (the packaged
    ``model``'s GGUF, which is assembled under ``<home>/models`` where its package ships it in parts) the first
    time (module doc).

    The folder is written beside its final place and renamed into it, so a killed conversion leaves nothing
    that looks finished.

    Raises:
        ModelServerError: the GGUF is missing or transformers cannot read it (the ``gguf`` package is absent), or
            ``model`` names no packaged model.
    """
    spec = packaged_model(model)
    models = Path(home).expanduser() / "models"
    out = models / (name or spec.folder)
    if is_checkpoint(out):
        return out
    source = Path(gguf) if gguf else spec.locate(models)
    try:
        from transformers import AutoModelForCausalLM, GenerationConfig
    except ImportError as exc:  # pragma: no cover - transformers is in the dev and train installs
        raise ModelServerError(f"transformers is needed to read {source.name}: {exc}") from None
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        tokenizer = spec.tokenizer(source)
        weights = AutoModelForCausalLM.from_pretrained(source.parent, gguf_file=source.name)
    except (ImportError, OSError, ValueError) as exc:
        raise ModelServerError(f"cannot read {source} as a trainable model ({type(exc).__name__}: {exc}); "
                               "transformers needs the gguf package (pip install gguf==0.19.0)") from None
    eos, pad = tokenizer.convert_tokens_to_ids(spec.eos), tokenizer.convert_tokens_to_ids(spec.pad)
    stops = [eos, *tokenizer.convert_tokens_to_ids(list(spec.also_stops))]
    weights.config.eos_token_id, weights.config.pad_token_id = eos, pad
    weights.generation_config = GenerationConfig(eos_token_id=stops if len(stops) > 1 else eos, pad_token_id=pad,
                                                 bos_token_id=None)
    weights.save_pretrained(partial, safe_serialization=True)
    tokenizer.save_pretrained(partial)
    (partial / INFO_FILE).write_text(json.dumps({"source_gguf": str(source), "template": spec.template_name,
                                                 "parent": None}, indent=1), encoding="utf-8")
    shutil.rmtree(out, ignore_errors=True)
    partial.rename(out)
    return out


def tiny_checkpoint(out: Path, *, layers: int = 2, seed: int = 0, gguf: Path | None = None,
                    model: str = "smollm2", hidden: int | None = None, like: Path | None = None) -> Path:
    """A folder with the packaged ``model``'s config cut to ``layers`` layers (and ``hidden`` wide, if given),
    random weights (seeded) and the real, fixed tokenizer: a model that trains in seconds on a CPU with exactly the
    product's token ids (tests, smoke runs). Read from the GGUF's metadata only: no weights are de-quantized; or,
    given ``like`` (that model's ``base_checkpoint`` folder), from its config and tokenizer (a second, where
    Gemma's GGUF takes ~30 s).

    Raises:
        ModelServerError: as ``base_checkpoint``.
    """
    spec = packaged_model(model)
    out = Path(out)
    if is_checkpoint(out):
        return out
    source = Path(like) if like else Path(gguf) if gguf else spec.locate(None)
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    try:
        if like:
            tokenizer = fix_tokenizer(AutoTokenizer.from_pretrained(source), model)
            config = AutoConfig.from_pretrained(source)
        else:
            tokenizer = spec.tokenizer(source)
            config = AutoConfig.from_pretrained(source.parent, gguf_file=source.name)
    except (ImportError, OSError, ValueError) as exc:
        raise ModelServerError(f"cannot read {source} ({type(exc).__name__}: {exc}); transformers needs the gguf "
                               "package (pip install gguf==0.19.0)") from None
    config.num_hidden_layers = layers
    if getattr(config, "layer_types", None):  # Gemma 3: five sliding-window layers to one global, cut too
        config.layer_types = config.layer_types[:layers]
    if hidden:
        config.hidden_size, config.intermediate_size = hidden, hidden * 4
    config.eos_token_id = tokenizer.convert_tokens_to_ids(spec.eos)
    config.pad_token_id = tokenizer.convert_tokens_to_ids(spec.pad)
    torch.manual_seed(seed)
    weights = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    weights.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    (out / INFO_FILE).write_text(json.dumps({"source_gguf": None, "template": spec.template_name, "parent": None,
                                             "tiny_of": str(source), "layers": layers, "seed": seed}, indent=1),
                                 encoding="utf-8")
    return out
