"""Greedy decoding that keeps each episode's attention cache across its turns, several episodes decoded as one batch.

    cache = EpisodeCache()                                  # one per episode, kept between its turns
    [ids_a, ids_b] = greedy_decode(model, [(cache_a, prompt_a, 128), (cache_b, prompt_b, 128)], eos=eos)

An episode's prompt only grows: each turn is the last prompt, the tokens the model wrote, then the tool results
(``bench.agents.step.TokenTrace``). Re-reading the whole prompt every turn is what an evaluation spends its time on
here (prefill is compute-bound on a CPU: ~100-200 tokens/s for Gemma 3 270M), so a turn reads only what its cache
does not hold yet:

1. **prefill**, each episode alone: the prompt's new tokens but the last are run through the model into its cache
   (batch 1, so no padding enters the cache; a batch would not read them faster, prefill being compute-bound);
2. **decode**, all episodes at once: each cache left-padded to the longest (padding masked out), the last prompt
   token of every episode fed together, then one token a step, greedy, until each has met the end-of-turn token or
   its budget. Decoding a batch reads the weights once per step for all episodes (what makes it cheap here);
3. each episode keeps the cache of its prompt and its generation (the padding and anything decoded after its end
   are cut off), ready for its next turn.

The caches are plain full-attention layers for every layer, sliding-window ones (Gemma 3) included: the model's
sliding mask still limits what each token sees, and as padding only ever sits on the left, a window over the last
positions holds exactly the episode's last tokens. Positions are the episode's own (``position_ids``), so a cached
key's rotary position never depends on the padding it had in a batch. A prompt that does not extend its cache's
tokens (never the case for a token trace) is read from the longest common prefix on.

A row may have a **guide**: given the ids that row has decoded so far this turn, the token ids it may choose next
(None: any). Greedy decoding then takes the best allowed token (``call_grammar``: a call to an offered tool,
in its schema).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EpisodeCache", "Guide", "greedy_decode"]

Guide = Callable[[list[int]], Any]
"""A row's ids decoded so far this turn -> what it may decode next: a bool tensor over the vocabulary, a sequence of
token ids, or None (any)."""


@dataclass
class EpisodeCache:
    """The keys and values of ``ids`` (one tensor pair per layer, batch 1), kept between an episode's turns."""

    ids: list[int] = field(default_factory=list)
    keys: list[Any] = field(default_factory=list)
    values: list[Any] = field(default_factory=list)

    def keep(self, length: int) -> None:
        """Cut to the first ``length`` tokens."""
        self.ids = self.ids[:length]
        self.keys = [k[:, :, :length] for k in self.keys]
        self.values = [v[:, :, :length] for v in self.values]


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def _as_dynamic_cache(keys: Sequence[Any], values: Sequence[Any]) -> Any:
    from transformers import DynamicCache

    cache = DynamicCache()  # no config: every layer a full one (module doc)
    for layer, (k, v) in enumerate(zip(keys, values, strict=True)):
        cache.update(k, v, layer)
    return cache


def _growing_cache(keys: Sequence[Any], values: Sequence[Any], room: int) -> Any:
    """A ``DynamicCache`` of ``keys`` and ``values`` whose layers hold ``room`` more tokens in place: a decoding step
    writes its token into the buffer instead of copying the whole cache (``DynamicLayer``'s ``torch.cat``, a third
    of a step's time for a batch of 8 Gemma episodes of ~2k tokens). Attention reads the same values either way."""
    from transformers import DynamicCache
    from transformers.cache_utils import DynamicLayer

    class GrowingLayer(DynamicLayer):  # type: ignore[misc]
        def __init__(self, k: Any, v: Any):
            super().__init__()
            b, h, n, d = k.shape
            self.dtype, self.device, self.is_initialized = k.dtype, k.device, True
            self.buffers = [k.new_empty(b, h, n + room, d), v.new_empty(b, h, n + room, v.shape[-1])]
            self.buffers[0][:, :, :n], self.buffers[1][:, :, :n] = k, v
            self._hold(n)

        def _hold(self, length: int) -> None:
            self.length = length
            self.keys, self.values = (buffer[:, :, :length] for buffer in self.buffers)

        def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
            end = self.length + key_states.shape[-2]
            if end > self.buffers[0].shape[-2]:  # more than the room asked for: a larger buffer
                grown = [buffer.new_empty(*buffer.shape[:2], end + room, buffer.shape[-1]) for buffer in self.buffers]
                for new, old in zip(grown, self.buffers, strict=True):
                    new[:, :, :self.length] = old[:, :, :self.length]
                self.buffers = grown
            self.buffers[0][:, :, self.length:end], self.buffers[1][:, :, self.length:end] = key_states, value_states
            self._hold(end)
            return self.keys, self.values

    cache = DynamicCache()  # no config: every layer a full one (module doc)
    cache.layers = [GrowingLayer(k, v) for k, v in zip(keys, values, strict=True)]
    return cache


def _layers(cache: Any) -> tuple[list[Any], list[Any]]:
    return [layer.keys for layer in cache.layers], [layer.values for layer in cache.layers]


def _prefill(model: Any, cache: EpisodeCache, prompt: Sequence[int]) -> None:
    """Read ``prompt[:-1]`` into ``cache`` (what it does not hold yet)."""
    import torch

    keep = _common_prefix(cache.ids, prompt[:-1])
    if keep < len(cache.ids):
        cache.keep(keep)
    new = list(prompt[len(cache.ids):-1])
    if not new:
        return
    device = model.device
    start = len(cache.ids)
    past = _as_dynamic_cache(cache.keys, cache.values) if cache.keys else None
    from transformers import DynamicCache

    past = past if past is not None else DynamicCache()
    model(input_ids=torch.tensor([new], device=device),
          attention_mask=torch.ones(1, start + len(new), dtype=torch.long, device=device),
          position_ids=torch.arange(start, start + len(new), device=device)[None], past_key_values=past,
          use_cache=True, logits_to_keep=1)
    cache.keys, cache.values = _layers(past)
    cache.ids = cache.ids + new


def _guided(logits: Any, out: list[list[int]], done: list[bool], guides: Sequence[Guide | None]) -> Any:
    """``logits`` with every token a row's guide does not allow set to minus infinity."""
    import torch

    for row, guide in enumerate(guides):
        if guide is None or done[row]:
            continue
        allowed = guide(out[row])
        if allowed is None:
            continue
        keep = torch.zeros(logits.shape[-1], dtype=torch.bool, device=logits.device)
        if isinstance(allowed, torch.Tensor):  # a bool mask over the guide's vocabulary (it may be padded)
            n = min(len(keep), len(allowed))
            keep[:n] = allowed[:n].to(logits.device)
        else:  # token ids
            keep[torch.tensor(list(allowed), dtype=torch.long, device=logits.device)] = True
        if keep.any():  # a guide that allows nothing would leave only -inf: the model's own choice stands
            logits[row] = logits[row].masked_fill(~keep, float("-inf"))
    return logits


def _padded_batch(caches: Sequence[EpisodeCache], room: int) -> tuple[Any, Any, int]:
    """The caches as one batch left-padded to the longest (a ``DynamicCache`` with ``room`` tokens to grow in place),
    its mask, and its width."""
    import torch

    width = max(len(c.ids) for c in caches)
    keys, values = [], []
    for layer in range(len(caches[0].keys)):
        rows_k, rows_v = [], []
        for c in caches:
            k, v = c.keys[layer], c.values[layer]
            pad = width - k.shape[2]
            if pad:
                k = torch.cat([k.new_zeros(k.shape[0], k.shape[1], pad, k.shape[3]), k], dim=2)
                v = torch.cat([v.new_zeros(v.shape[0], v.shape[1], pad, v.shape[3]), v], dim=2)
            rows_k.append(k)
            rows_v.append(v)
        keys.append(torch.cat(rows_k, dim=0))
        values.append(torch.cat(rows_v, dim=0))
    mask = torch.tensor([[0] * (width - len(c.ids)) + [1] * len(c.ids) for c in caches], dtype=torch.long)
    return _growing_cache(keys, values, room), mask, width


def greedy_decode(model: Any, requests: Sequence[tuple[EpisodeCache, Sequence[int], int]], *,
                  eos: int, guides: Sequence[Guide | None] | None = None) -> list[list[int]]:
    """For each ``(cache, prompt, room)``: up to ``room`` tokens decoded greedily after ``prompt``, ending with
    ``eos`` when the model wrote it; every cache left holding its prompt and generation (module doc). ``guides``:
    one per request (or None), restricting what its row may decode next."""
    import torch

    device = model.device
    with torch.no_grad():
        for cache, prompt, _ in requests:
            if len(prompt) < 2:  # a chat template's prompt never is: a cache needs a token before the last
                raise ValueError(f"a prompt of {len(prompt)} token(s): at least 2 are needed")
            _prefill(model, cache, prompt)
        caches = [cache for cache, _, _ in requests]
        steps = max(room for _, _, room in requests)
        past, mask, width = _padded_batch(caches, steps + 1)
        mask = mask.to(device)
        fed = torch.tensor([[prompt[-1]] for _, prompt, _ in requests], device=device)
        positions = torch.tensor([[len(c.ids)] for c in caches], device=device)
        out: list[list[int]] = [[] for _ in requests]
        done = [False] * len(requests)
        for _ in range(steps):
            mask = torch.cat([mask, mask.new_ones(len(requests), 1)], dim=1)
            logits = model(input_ids=fed, attention_mask=mask, position_ids=positions, past_key_values=past,
                           use_cache=True, logits_to_keep=1).logits[:, -1]
            if guides is not None:
                logits = _guided(logits, out, done, guides)
            chosen = logits.argmax(dim=-1)
            for row, token in enumerate(chosen.tolist()):
                if not done[row]:
                    out[row].append(token)
                    done[row] = token == eos or len(out[row]) >= requests[row][2]
            if all(done):
                break
            fed, positions = chosen[:, None], positions + 1
        keys, values = _layers(past)
        for row, ((cache, prompt, _), generated) in enumerate(zip(requests, out, strict=True)):
            start = width - len(cache.ids)
            end = width + len(generated)  # the last prompt token and every generated token but the last
            cache.keys = [k[row:row + 1, :, start:end].clone() for k in keys]
            cache.values = [v[row:row + 1, :, start:end].clone() for v in values]
            cache.ids = list(prompt) + generated[:-1]
    return out
