"""The LLM query writer over real HTTP (a loopback chat-completions server): its question is taken when it is
sound, the rule question stands when the reply leaks a junction value or the endpoint fails, and the key goes
only into the Authorization header."""

from __future__ import annotations

import json

import numpy as np
import pytest

from edge.synth.execute import Trace
from edge.synth.llm_writer import LLMWriter, query_writer
from edge.synth.realise import realise
from mcp_gateway.catalog import load_catalog
from models.settings import WriterProfile
from tests.chat_server import serve_chat, stop

KEY = "sk-writer-test-0042"
CATALOG = load_catalog()
TRACE = Trace("chain", "list_rest_area_locations", {"routeName": "경부선"},
              final={"kind": "count", "tool": "get_rest_area_conveniences"}, bound_values=["000123", "서울만남"])


@pytest.fixture
def endpoint():
    seen: list[tuple[dict, dict]] = []
    replies: list[tuple[int, object]] = []

    def respond(body, headers):
        seen.append((body, headers))
        status, content = replies.pop(0)
        return status, {"choices": [{"message": {"content": content}}]} if status == 200 else content

    server, base_url = serve_chat(respond)
    yield base_url, replies, seen
    stop(server)


def _writer(base_url: str) -> LLMWriter:
    return LLMWriter(WriterProfile(base_url=base_url, model="writer-9b", api_key=KEY, max_retries=0))


def test_a_sound_reply_becomes_the_question_and_the_request_carries_what_it_must_not_say(endpoint):
    base_url, replies, seen = endpoint
    replies.append((200, json.dumps({"query": "경부선 휴게소들의 편의시설은 모두 몇 개나 되나요?"}, ensure_ascii=False)))
    writer = _writer(base_url)
    query, writer_id = writer(TRACE, CATALOG, np.random.default_rng(0))
    assert (query, writer_id) == ("경부선 휴게소들의 편의시설은 모두 몇 개나 되나요?", "llm:writer-9b")
    body, headers = seen[0]
    sent = json.loads(body["messages"][1]["content"])
    rule_query, _ = realise(TRACE, CATALOG, np.random.default_rng(0))
    assert sent == {"question": rule_query, "FORBIDDEN": ["000123", "서울만남"]}
    assert (body["model"], body["temperature"], headers["Authorization"]) == ("writer-9b", 0, f"Bearer {KEY}")
    assert KEY not in json.dumps(body, ensure_ascii=False)
    assert writer.stats["llm"] == 1


@pytest.mark.parametrize(("status", "reply", "why"), [
    (200, json.dumps({"query": "서울만남 휴게소의 편의시설은 몇 개인가요?"}, ensure_ascii=False), "fallback_invalid"),
    (200, json.dumps({"query": "how many rest_area conveniences?"}), "fallback_invalid"),
    (200, "not json at all", "fallback_invalid"),
    (503, "overloaded", "fallback_error"),
])
def test_a_leaking_foreign_or_failed_reply_leaves_the_rule_question(endpoint, status, reply, why):
    base_url, replies, _ = endpoint
    replies.append((status, reply))
    writer = _writer(base_url)
    query, writer_id = writer(TRACE, CATALOG, np.random.default_rng(0))
    rule_query, phrasing = realise(TRACE, CATALOG, np.random.default_rng(0))
    assert (query, writer_id) == (rule_query, f"rule:{phrasing}")
    assert writer.stats[why] == 1 and writer.stats["llm"] == 0


def test_the_writer_comes_from_its_profile_and_is_none_without_a_base_url():
    assert query_writer(WriterProfile()) is None
    writer = query_writer(WriterProfile(base_url="http://127.0.0.1:9/v1", model="writer-9b", api_key=KEY))
    assert writer is not None and writer.settings.model == "writer-9b" and KEY not in repr(writer.settings)
    with pytest.raises(ValueError, match="KOPA_MODELS__WRITER__MODEL"):
        query_writer(WriterProfile(base_url="http://127.0.0.1:9/v1"))
