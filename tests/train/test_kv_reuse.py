"""Greedy decoding with each episode's attention cache kept across its turns (``train.engines.trl.kv_reuse``): every
turn of every episode, decoded in a batch of episodes of different lengths, gives exactly what ``generate`` gives on
the whole prompt read afresh; the model reads only the tokens a turn adds; and Gemma 3's sliding-window layers, with
prompts far longer than the window, agree too.

Models: SmolLM2's shape cut to 2 layers with the real tokenizer (the loop's tiny model), and a 6-layer Gemma 3 with a
window of 8 tokens (random weights, so the window is crossed in a few turns).
"""

from __future__ import annotations

import random

import pytest

from train.engines.trl.kv_reuse import EpisodeCache, greedy_decode

from ..conftest import shared_tiny_smollm2

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning",
                                        "ignore::UserWarning")

EOS = 7
ROOM = 12


def gemma_with_a_short_window():
    import torch
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    torch.manual_seed(0)
    config = Gemma3TextConfig(vocab_size=300, hidden_size=64, intermediate_size=128, num_hidden_layers=6,
                              num_attention_heads=2, num_key_value_heads=1, head_dim=32, sliding_window=8,
                              max_position_embeddings=512)
    assert "sliding_attention" in config.layer_types and "full_attention" in config.layer_types
    return Gemma3ForCausalLM(config).eval()


def tiny_smollm2(home):
    from train.engines.trl.model import load_for_inference, resolve_model

    model, _ = load_for_inference(resolve_model(shared_tiny_smollm2(), home=home))
    return model.eval()


def read_afresh(model, prompt: list[int]) -> list[int]:
    import torch

    ids = torch.tensor([prompt])
    out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=ROOM,
                         eos_token_id=EOS, pad_token_id=0)
    generated = out[0, len(prompt):].tolist()
    return generated[:generated.index(EOS) + 1] if EOS in generated else generated


class TokensRead:
    """Counts the tokens the model is given (a forward pre-hook)."""

    def __init__(self, model):
        self.count = 0
        model.register_forward_pre_hook(self.hook, with_kwargs=True)

    def hook(self, module, args, kwargs):
        self.count += kwargs["input_ids"].numel()


@pytest.mark.parametrize("make", ["smollm2", "gemma3"])
def test_every_turn_decodes_as_the_whole_prompt_read_afresh_and_reads_only_what_it_adds(make, tmp_path):
    model = tiny_smollm2(tmp_path) if make == "smollm2" else gemma_with_a_short_window()
    vocab = min(model.config.vocab_size, 300)
    rng = random.Random(1)
    prompts = [[rng.randrange(10, vocab) for _ in range(n)] for n in (5, 23, 40)]
    caches = [EpisodeCache() for _ in prompts]
    held: list[list[int]] = [[] for _ in prompts]  # the tokens each cache holds before the turn
    read = TokensRead(model)
    for turn in range(3):
        read.count = 0
        decoded = greedy_decode(model, [(c, p, ROOM) for c, p in zip(caches, prompts, strict=True)], eos=EOS)
        # prefill reads each prompt's tokens but the last that its cache lacks; each decoding step, one per episode
        prefill = sum(len(p) - 1 - len(h) for p, h in zip(prompts, held, strict=True))
        assert read.count == prefill + max(len(g) for g in decoded) * len(prompts)
        for cache, prompt, generated in zip(caches, prompts, decoded, strict=True):
            assert generated == read_afresh(model, prompt), (make, turn)
            assert len(generated) == ROOM or generated[-1] == EOS
            assert cache.ids == prompt + generated[:-1]  # ready for the next turn
            assert all(k.shape[2] == len(cache.ids) for k in cache.keys)
        held = [list(c.ids) for c in caches]
        for i in range(len(prompts)):  # tool results: the next turn's context
            prompts[i] = prompts[i] + decoded[i] + [rng.randrange(10, vocab) for _ in range(rng.randrange(1, 15))]
    assert max(len(p) for p in prompts) > 8 * 8  # Gemma's window (8) crossed many times over


def test_a_prompt_that_does_not_extend_the_cache_is_read_from_the_common_prefix(tmp_path):
    model = gemma_with_a_short_window()
    rng = random.Random(2)
    prompt = [rng.randrange(10, 300) for _ in range(30)]
    cache = EpisodeCache()
    greedy_decode(model, [(cache, prompt, ROOM)], eos=EOS)
    changed = prompt[:20] + [rng.randrange(10, 300) for _ in range(6)]  # not what the cache holds after token 20
    [generated] = greedy_decode(model, [(cache, changed, ROOM)], eos=EOS)
    assert generated == read_afresh(model, changed)
    assert cache.ids[:26] == changed


def test_a_prompt_too_short_to_cache_is_refused():
    model = gemma_with_a_short_window()
    with pytest.raises(ValueError, match="a prompt of 1 token"):
        greedy_decode(model, [(EpisodeCache(), [42], ROOM)], eos=EOS)


def test_a_batch_cache_grows_in_place_and_past_its_room_holds_every_token_in_order():
    import torch

    from train.engines.trl.kv_reuse import _growing_cache

    torch.manual_seed(0)
    keys, values = [torch.randn(2, 1, 5, 4)], [torch.randn(2, 1, 5, 3)]
    cache = _growing_cache(keys, values, room=2)
    written_k, written_v = [keys[0]], [values[0]]
    for n in (1, 1, 3, 2):  # the room of 2 is used up, then the buffer grows twice
        k, v = torch.randn(2, 1, n, 4), torch.randn(2, 1, n, 3)
        got_k, got_v = cache.update(k, v, 0)
        written_k.append(k)
        written_v.append(v)
        assert torch.equal(got_k, torch.cat(written_k, dim=2)) and torch.equal(got_v, torch.cat(written_v, dim=2))
    assert cache.get_seq_length() == 12
