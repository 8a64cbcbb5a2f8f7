"""The local model's prompt: tool schemas without prose (SmolLM2 spends 2-3 tokens on each Hangul syllable), for the
``local`` agent and the agent endpoint over the local model alike."""

from __future__ import annotations

import json

import pytest

from bench.agents.local import LocalModel
from bench.agents.openai_agent import OpenAIAgent, lean_tool
from models.errors import ModelServerError
from models.llama_cpp import LOCAL_DEFAULTS
from tests.chat_server import serve_chat, stop

TOOL = {"type": "function", "function": {
    "name": "search_station", "description": "지하철역 정보를 검색합니다.",
    "parameters": {"type": "object", "title": "args", "required": ["STATION_NM"], "properties": {
        "STATION_NM": {"type": "string", "description": "역 이름", "examples": ["서울역"]},
        "description": {"type": "string", "description": "a property named like a keyword stays"},
        "LINE": {"type": "string", "enum": ["1", "2"], "default": "1", "description": "호선"},
        "pages": {"type": "array", "items": {"type": "integer", "description": "쪽 번호"}},
        "any": {"anyOf": [{"type": "string", "description": "x"}, {"type": "null"}]}}}}}


def test_lean_tools_keep_names_types_enums_and_required_and_drop_the_prose():
    lean = lean_tool(TOOL)
    assert lean["function"]["name"] == "search_station"
    assert lean["function"]["parameters"] == {"type": "object", "required": ["STATION_NM"], "properties": {
        "STATION_NM": {"type": "string"}, "description": {"type": "string"},
        "LINE": {"type": "string", "enum": ["1", "2"]}, "pages": {"type": "array", "items": {"type": "integer"}},
        "any": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}
    # no prose is left: no Hangul and no \\uXXXX escape of it, a fraction of the size
    rendered = json.dumps(lean["function"]["parameters"])
    assert "\\u" not in rendered and 1.5 * len(rendered) < len(json.dumps(TOOL["function"]["parameters"]))
    assert TOOL["function"]["parameters"]["properties"]["STATION_NM"]["description"] == "역 이름"  # not changed


def test_the_agent_config_needs_a_running_server():
    with pytest.raises(ModelServerError, match="not running"):
        LocalModel(n_threads=1).agent_config()


async def test_an_agent_without_schema_prose_sends_lean_tools_and_the_local_defaults_ask_for_it():
    seen: list[dict] = []

    def respond(body, headers):
        seen.append(body)
        return 200, {"choices": [{"message": {"role": "assistant", "content": "ANSWER: {1}"}}]}

    server, base_url = serve_chat(respond)
    try:
        for prose in (False, True):
            agent = OpenAIAgent(base_url=base_url, model="m", schema_prose=prose, max_retries=0)
            answer = await agent.converse([{"role": "user", "content": "q"}], [TOOL], seed=0, call=None)
            assert answer == "ANSWER: {1}"
    finally:
        stop(server)
    assert [body["tools"] for body in seen] == [[lean_tool(TOOL)], [TOOL]]
    assert LOCAL_DEFAULTS["schema_prose"] is False
