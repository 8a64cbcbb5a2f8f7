"""ENVIRONMENT scorer (Appendix B.3): the final workspace hash against the golden one, with the gateway's hash."""

import hashlib

import pytest

from bench.scoring.environment import EMPTY_WORKSPACE_HASH, EnvironmentScore, golden_state_hash, score_environment
from mcp_gateway.catalog import load_catalog
from mcp_gateway.runtime import Workspace, canonical_json
from mcp_gateway.runtime.runtime import ToolRuntime


@pytest.fixture(scope="module")
def runtime():
    return ToolRuntime(load_catalog(), clients=None, secrets=None, profile="chat")  # workspace tools need neither


async def test_a_session_that_wrote_the_golden_state_passes(runtime):
    golden = golden_state_hash({"notes": {"answer": "23명"}, "watchlists": {"학교": {"제주중": "특수학급"}}})
    await runtime.call("add_to_watchlist", {"list_name": "학교", "item": "제주중", "note": "특수학급"}, "ep-1")
    await runtime.call("write_note", {"key": "answer", "text": "23명"}, "ep-1")
    final = runtime.session("ep-1").workspace
    assert score_environment(final, golden) == EnvironmentScore(True, final.state_hash(), golden)


async def test_a_different_final_state_fails(runtime):
    golden = golden_state_hash({"notes": {"answer": "23명"}})
    await runtime.call("write_note", {"key": "answer", "text": "75명"}, "ep-2")
    score = score_environment(runtime.session("ep-2").workspace, golden)
    assert not score.passed
    assert score.final_hash == golden_state_hash({"notes": {"answer": "75명"}})


async def test_an_extra_write_fails_even_when_the_golden_write_is_there(runtime):
    golden = golden_state_hash({"reports": {"요약": "본문"}})
    await runtime.call("save_report", {"title": "요약", "content": "본문"}, "ep-3")
    await runtime.call("write_note", {"key": "scratch", "text": "x"}, "ep-3")
    assert not score_environment(runtime.session("ep-3").workspace, golden).passed


async def test_a_read_only_episode_ends_in_the_empty_state(runtime):
    await runtime.call("list_reports", {}, "ep-4")
    assert score_environment(runtime.session("ep-4").workspace, EMPTY_WORKSPACE_HASH).passed


def test_the_golden_hash_is_the_gateways_hash():
    state = {"watchlists": {"b": {"y": "2"}, "a": {"x": "1"}}, "reports": {}, "notes": {"키": "값"}}
    expected = hashlib.sha256(canonical_json(state).encode()).hexdigest()
    workspace = Workspace(watchlists={"a": {"x": "1"}, "b": {"y": "2"}}, notes={"키": "값"})
    assert golden_state_hash(state) == golden_state_hash(workspace) == workspace.state_hash() == expected


def test_sections_left_out_of_a_golden_dict_are_empty():
    assert golden_state_hash({"notes": {}}) == golden_state_hash({}) == EMPTY_WORKSPACE_HASH == Workspace().state_hash()


def test_a_final_state_may_be_a_dict_and_the_golden_hash_any_case():
    golden = golden_state_hash({"notes": {"k": "v"}})
    assert score_environment({"notes": {"k": "v"}}, golden.upper()).passed


def test_an_unknown_section_is_refused_with_the_valid_ones():
    with pytest.raises(ValueError, match=r"unknown sections \['files'\]; a workspace has \['watchlists', 'reports', "
                                         r"'notes'\]"):
        golden_state_hash({"files": {}})


def test_a_golden_hash_that_is_not_sha256_is_refused():
    with pytest.raises(ValueError, match="is not a SHA-256 hex digest"):
        score_environment(Workspace(), "abc123")
