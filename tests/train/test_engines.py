"""``train.engines``: the registry of training engines, what each needs, and whether this machine can run it."""

from __future__ import annotations

import pytest

import train.engines
from train.engines import DEFAULT_ENGINE, ENGINES, EngineReport, UnknownEngine, engine_reports, get_engine


def test_verl_is_registered_and_the_default():
    assert list(ENGINES) == ["verl"] and DEFAULT_ENGINE == "verl"
    verl = get_engine("verl")
    assert verl.needs == ("a CUDA GPU visible to torch", "verl", "vllm", "ray")


def test_an_unknown_engine_names_the_choices():
    with pytest.raises(UnknownEngine, match=r"unknown training engine 'trl'; choose one of: verl") as caught:
        get_engine("trl")
    assert caught.value.name == "trl" and isinstance(caught.value, ValueError)


def test_torch_missing_is_reported_without_importing_it(monkeypatch):
    monkeypatch.setattr(train.engines, "_installed", lambda module: False)
    assert engine_reports() == [EngineReport("verl", ("torch not installed (no CUDA GPU can be seen)",
                                                      "verl not installed", "vllm not installed", "ray not installed"))]


def test_a_report_line_says_can_or_cannot_and_why():
    assert EngineReport("verl", ()).line() == "verl: can run here"
    assert EngineReport("verl", ("vllm not installed", "ray not installed")).line() == \
        "verl: not here — vllm not installed, ray not installed"
    assert EngineReport("verl", ()).ready and not EngineReport("verl", ("x",)).ready
