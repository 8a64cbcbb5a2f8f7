"""``train.engines``: the registry of training engines, what each needs, whether this machine can run it, which one
is the default and why, and the precision the trl engine trains in."""

from __future__ import annotations

import pytest

import train.engines
from train.engines import (ENGINES, EngineReport, UnknownEngine, cpu_flags, default_engine, engine_reports,
                           get_engine, trl_precision)


def test_verl_and_trl_are_registered():
    assert list(ENGINES) == ["verl", "trl"]
    assert get_engine("verl").needs == ("a CUDA GPU visible to torch", "verl", "vllm", "ray")
    assert get_engine("trl").needs == ("torch", "transformers", "trl", "peft")


def test_trl_can_run_on_this_machine():
    assert get_engine("trl").missing() == []  # torch, transformers, trl and peft are in the dev install


def test_an_unknown_engine_names_the_choices():
    with pytest.raises(UnknownEngine, match=r"unknown training engine 'axolotl'; choose one of: verl, trl") as caught:
        get_engine("axolotl")
    assert caught.value.name == "axolotl" and isinstance(caught.value, ValueError)


def test_torch_missing_is_reported_without_importing_it(monkeypatch):
    monkeypatch.setattr(train.engines, "_installed", lambda module: False)
    assert engine_reports() == [
        EngineReport("verl", ("torch not installed (no CUDA GPU can be seen)", "verl not installed",
                              "vllm not installed", "ray not installed")),
        EngineReport("trl", ("torch not installed", "transformers not installed", "trl not installed",
                             "peft not installed"))]


def test_the_default_is_verl_only_with_cuda_vllm_and_ray(monkeypatch):
    import torch

    monkeypatch.setattr(train.engines, "_installed", lambda module: True)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert default_engine() == ("verl", "CUDA, vllm and ray are all present")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert default_engine() == ("trl", "verl needs a CUDA GPU, vllm and ray (no CUDA GPU visible "
                                       "(torch.cuda.is_available() is false))")
    monkeypatch.setattr(train.engines, "_installed", lambda module: module not in ("vllm", "ray"))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert default_engine() == ("trl", "verl needs a CUDA GPU, vllm and ray (vllm not installed, ray not installed)")


def test_the_default_on_this_machine():
    name, why = default_engine()
    assert name == ("verl" if not train.engines.verl_missing() else "trl"), why


def test_trl_precision_follows_cuda_and_the_cpu_flags():
    assert trl_precision(frozenset(), cuda=True) == ("bf16", "CUDA GPU: bf16")
    assert trl_precision(frozenset({"avx512f", "amx_bf16", "avx512_bf16"}), cuda=False)[0] == "bf16"
    assert trl_precision(frozenset({"avx512f", "avx512_bf16"}), cuda=False) == \
        ("bf16", "CPU bf16 autocast (the CPU has AVX512-BF16)")
    assert trl_precision(frozenset({"avx2"}), cuda=False) == \
        ("fp32", "CPU fp32 (the CPU has neither AMX-BF16 nor AVX512-BF16)")


def test_cpu_flags_are_read_from_cpuinfo(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: X\nflags\t\t: fpu sse2 avx512_bf16 amx_bf16\n\nprocessor\t: 1\n")
    assert cpu_flags(info) == frozenset({"fpu", "sse2", "avx512_bf16", "amx_bf16"})
    assert cpu_flags(tmp_path / "absent") == frozenset()
    here = cpu_flags()
    assert trl_precision(here, cuda=False)[0] == ("bf16" if {"amx_bf16", "avx512_bf16"} & here else "fp32")


def test_a_report_line_says_can_or_cannot_and_why():
    assert EngineReport("verl", ()).line() == "verl: can run here"
    assert EngineReport("verl", ("vllm not installed", "ray not installed")).line() == \
        "verl: not here — vllm not installed, ray not installed"
    assert EngineReport("verl", ()).ready and not EngineReport("verl", ("x",)).ready
