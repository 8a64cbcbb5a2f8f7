"""The LLM binding proposer against a scripted chat-completions endpoint on loopback (real HTTP, no mocks).

The endpoint answers per edge: it reads the (source, target) pair from the request's user message and
replies with what the test scripted for that edge (a binding, a broken reply, an HTTP error, a delay),
keeping every request and its headers.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any

import pytest
from typer.testing import CliRunner

from appliance.cli import app
from edge.graph.build import admit_skeleton, plan_as_json
from edge.graph.llm_proposer import (
    PROMPT_VERSION,
    SYSTEM_PROMPT,
    LLMProposer,
    LLMProposerError,
    parse_reply,
)
from edge.graph.proposer import ParamSource, RuleProposer, SourceKind
from edge.settings import PhaseASettings
from models.settings import ProposerProfile
from edge.graph.skeleton import CandidateEdge
from edge.graph.store import GraphStore
from mcp_gateway.catalog import Catalog, load_catalog
from tests.chat_server import serve_chat, stop
from tests.conftest import TEST_DATA_DIR, TEST_SCALE

CORP, OVERVIEW, ACCOUNTS, BOND = ("find_dart_corp_code", "get_dart_company_overview",
                                  "get_dart_single_company_key_accounts", "get_dart_convertible_bond_issuance_decision")
SECRET = "sk-edge-secret-0451"

Reply = Callable[[dict[str, Any]], tuple[int, Any]]  # request body -> (status, body)


# ----------------------------------------------------------------------------------- the scripted endpoint


def completion(content: str | None) -> dict[str, Any]:
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "scripted",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}


def answers(reply: dict[str, Any]) -> Reply:
    return lambda body: (200, completion(json.dumps(reply, ensure_ascii=False)))


def says(text: str | None) -> Reply:
    return lambda body: (200, completion(text))


def status(code: int, text: str = "upstream trouble") -> Reply:
    return lambda body: (code, text)


def same_names(body: dict[str, Any]) -> tuple[int, Any]:
    """The default answer: bind every parameter to the output field of the same name."""
    edge = json.loads(body["messages"][-1]["content"])
    fields = {f["name"] for f in edge["source"]["output_fields"]}
    bindings = [{"param": p["name"], "field": p["name"]} for p in edge["target"]["parameters"] if p["name"] in fields]
    return answers({"feasibility": 0.8 if bindings else 0.0, "reason": "same names", "bindings": bindings})(body)


@dataclass
class EdgeEndpoint:
    """Replies per (source, target); a list is a script for successive requests of that edge (the last repeats)."""

    replies: dict[tuple[str, str], Reply | list[Reply]] = field(default_factory=dict)
    delays: dict[tuple[str, str], float] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    base_url: str = ""

    def edges_asked(self) -> list[tuple[str, str]]:
        return [_edge_of(body) for body in self.requests]


def _edge_of(body: dict[str, Any]) -> tuple[str, str]:
    edge = json.loads(body["messages"][-1]["content"])
    return edge["source"]["name"], edge["target"]["name"]


@pytest.fixture
def endpoint() -> Iterator[Callable[..., EdgeEndpoint]]:
    servers: list[ThreadingHTTPServer] = []
    lock = threading.Lock()

    def start(**replies: Any) -> EdgeEndpoint:
        state = EdgeEndpoint()

        def respond(body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
            edge = _edge_of(body)
            with lock:
                state.requests.append(body)
                state.headers.append(headers)
                script = state.replies.get(edge, same_names)
                reply = (script.pop(0) if len(script) > 1 else script[0]) if isinstance(script, list) else script
            time.sleep(state.delays.get(edge, 0.0))
            return reply(body)

        server, state.base_url = serve_chat(respond)
        servers.append(server)
        return state

    yield start
    for server in servers:
        stop(server)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def proposer_for(ep: EdgeEndpoint, **fields: Any) -> LLMProposer:
    cache_path = fields.pop("cache_path", None)
    settings = ProposerProfile(**{"base_url": ep.base_url, "model": "scripted", "api_key": SECRET, "max_retries": 0,
                                  **fields})
    return LLMProposer(settings, cache_path=cache_path)


# ----------------------------------------------------------------------------------- valid replies


def test_a_valid_reply_is_the_proposal_and_the_request_carries_both_tools(endpoint, catalog):
    ep = endpoint()
    ep.replies[(CORP, OVERVIEW)] = answers({"feasibility": 0.95, "reason": "고유번호를 그대로 넘긴다",
                                            "bindings": [{"param": "corp_code", "field": "corp_code"}]})
    ep.replies[(CORP, ACCOUNTS)] = answers({
        "feasibility": 0.7, "bindings": [{"param": "corp_code", "field": "corp_code"}],
        "candidates": [{"param": "bsns_year", "values": ["2023", 2022, " "]},
                       {"param": "reprt_code", "values": ["11011", "99999"]}]})
    proposer = proposer_for(ep)

    overview = proposer.propose(catalog.get(CORP), catalog.get(OVERVIEW))
    assert overview.bound == {"corp_code": "corp_code"} and overview.feasibility == 0.95
    accounts = proposer.propose(catalog.get(CORP), catalog.get(ACCOUNTS))
    plan = {s.param: s for s in accounts.plan}
    assert list(plan) == ["corp_code", "bsns_year", "reprt_code"]  # required or bound, in the target's order
    assert plan["bsns_year"] == ParamSource("bsns_year", SourceKind.CLARIFY, candidates=("2023", "2022"))
    # an enum parameter keeps only enum members: the model's first, then the rest of the enum
    assert plan["reprt_code"].candidates == ("11011", "11013", "11012", "11014")
    assert accounts.feasibility == 0.7
    assert proposer.stats == {"llm": 2, "fallback_invalid": 0, "fallback_error": 0, "cached": 0}

    body, headers = ep.requests[1], ep.headers[1]
    assert headers["Authorization"] == f"Bearer {SECRET}"
    assert body["model"] == "scripted" and body["temperature"] == 0 and body["seed"] == 0
    assert body["response_format"] == {"type": "json_object"}
    assert body["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    sent = json.loads(body["messages"][1]["content"])
    source, target = catalog.get(CORP), catalog.get(ACCOUNTS)
    assert sent["source"]["name"] == CORP
    assert [f["name"] for f in sent["source"]["output_fields"]] == [f.name for f in source.output]
    assert sent["source"]["output_fields"][0]["description"] == source.output[0].description_ko
    # the target's non-generic parameters only: KEY, pageNo and numOfRows are the runtime's
    assert [p["name"] for p in sent["target"]["parameters"]] == ["corp_code", "bsns_year", "reprt_code"]
    assert sent["target"]["parameters"][2]["enum"] == list(target.param("reprt_code").enum)


def test_json_schema_mode_sends_the_edge_s_own_schema(endpoint, catalog):
    ep = endpoint()
    proposer = proposer_for(ep, response_format="json_schema")
    assert proposer.propose(catalog.get(CORP), catalog.get(OVERVIEW)).bound == {"corp_code": "corp_code"}
    schema = ep.requests[0]["response_format"]["json_schema"]["schema"]
    binding = schema["properties"]["bindings"]["items"]["properties"]
    assert binding["field"]["enum"] == [f.name for f in catalog.get(CORP).output]
    assert binding["param"]["enum"] == ["corp_code"]  # KEY is generic: never offered


def test_the_api_key_is_sent_but_never_stored(endpoint, catalog, tmp_path):
    ep = endpoint()
    ep.replies[(CORP, ACCOUNTS)] = says("not json at all")  # a fallback and its reason are kept too
    cache = tmp_path / "replies.jsonl"
    proposer = proposer_for(ep, cache_path=cache)
    proposals = [proposer.propose(catalog.get(CORP), catalog.get(t)) for t in (OVERVIEW, ACCOUNTS)]
    assert all(h["Authorization"] == f"Bearer {SECRET}" for h in ep.headers)
    kept = [repr(p) for p in proposals] + [json.dumps(plan_as_json(p.plan)) for p in proposals]
    kept += [repr(proposer.stats), repr(proposer.fallbacks), repr(proposer.identity), repr(proposer.settings),
             proposer.describe(), cache.read_text()]
    assert not [text for text in kept if SECRET in text]


def test_fenced_and_reasoning_replies_are_parsed():
    reply = '<think>corp_code looks like {this}</think>\n```json\n{"feasibility": 0.9, "bindings": []}\n```'
    assert parse_reply(reply) == {"feasibility": 0.9, "bindings": []}
    assert parse_reply('Here it is: {"feasibility": 0.5, "bindings": []} hope it helps') == {
        "feasibility": 0.5, "bindings": []}


def test_a_reply_without_bindings_means_no_edge(endpoint, catalog):
    ep = endpoint()
    ep.replies[(CORP, OVERVIEW)] = answers({"feasibility": 0.0, "reason": "무관", "bindings": []})
    proposer = proposer_for(ep)
    assert proposer.propose(catalog.get(CORP), catalog.get(OVERVIEW)) is None
    assert proposer.stats["llm"] == 1


# ----------------------------------------------------------------------------------- fallbacks


CORP_BINDING = [{"param": "corp_code", "field": "corp_code"}]
INVALID = {
    "a field u does not have": ({"feasibility": 0.9, "bindings": [{"param": "corp_code", "field": "corp_cd"}]},
                                "corp_cd"),
    "a generic parameter": ({"feasibility": 0.9, "bindings": [{"param": "KEY", "field": "corp_code"}]}, "KEY"),
    "a parameter v does not have": ({"feasibility": 0.9, "bindings": [{"param": "corp_no", "field": "corp_code"}]},
                                    "corp_no"),
    "feasibility above 1": ({"feasibility": 1.5, "bindings": CORP_BINDING}, "feasibility"),
    "feasibility as text": ({"feasibility": "high", "bindings": CORP_BINDING}, "feasibility"),
    "no feasibility": ({"bindings": CORP_BINDING}, "feasibility"),
    "a parameter bound twice": ({"feasibility": 0.9, "bindings": [*CORP_BINDING, {"param": "corp_code",
                                                                                  "field": "stock_code"}]},
                                "bound twice"),
    "candidates that are no strings": ({"feasibility": 0.9, "bindings": CORP_BINDING,
                                        "candidates": [{"param": "bsns_year", "values": [{"year": 2023}]}]},
                                       "candidates"),
}


@pytest.mark.parametrize("case", list(INVALID))
def test_an_invalid_reply_falls_back_to_the_rule_answer(endpoint, catalog, case):
    reply, named = INVALID[case]
    ep = endpoint()
    ep.replies[(CORP, ACCOUNTS)] = answers(reply)
    proposer = proposer_for(ep)
    u, v = catalog.get(CORP), catalog.get(ACCOUNTS)
    assert proposer.propose(u, v) == RuleProposer().propose(u, v)
    assert proposer.stats == {"llm": 0, "fallback_invalid": 1, "fallback_error": 0, "cached": 0}
    assert named in proposer.fallbacks[(CORP, ACCOUNTS)]


@pytest.mark.parametrize("reply", [says("corp_code feeds corp_code, I am fairly sure."), says(None),
                                   says('{"feasibility": 0.9, "bindings": [')], ids=["prose", "no text", "cut"])
def test_a_reply_that_is_no_json_falls_back(endpoint, catalog, reply):
    ep = endpoint()
    ep.replies[(CORP, OVERVIEW)] = reply
    proposer = proposer_for(ep)
    assert proposer.propose(catalog.get(CORP), catalog.get(OVERVIEW)) == RuleProposer().propose(
        catalog.get(CORP), catalog.get(OVERVIEW))
    assert proposer.stats["fallback_invalid"] == 1 and proposer.stats["llm"] == 0


@pytest.mark.parametrize("reply", [status(500), status(200, '{"no": "choices"}'), status(401, "bad key")],
                         ids=["http-500", "no-completion", "http-401"])
def test_an_endpoint_failure_falls_back_and_counts_as_an_error(endpoint, catalog, reply):
    ep = endpoint()
    ep.replies[(CORP, OVERVIEW)] = reply
    proposer = proposer_for(ep)
    u, v = catalog.get(CORP), catalog.get(OVERVIEW)
    assert proposer.propose(u, v) == RuleProposer().propose(u, v)
    assert proposer.stats == {"llm": 0, "fallback_invalid": 0, "fallback_error": 1, "cached": 0}
    assert ep.base_url in proposer.fallbacks[(CORP, OVERVIEW)]


def test_transient_failures_are_asked_again_and_refusals_are_not(endpoint, catalog):
    ep = endpoint()
    good = answers({"feasibility": 0.9, "bindings": CORP_BINDING})
    ep.replies[(CORP, OVERVIEW)] = [status(503), status(429), good]
    ep.replies[(CORP, ACCOUNTS)] = status(400, "response_format is not supported")
    ep.replies[(CORP, BOND)] = [status(500), good]
    ep.delays[(CORP, BOND)] = 0.5
    proposer = proposer_for(ep, max_retries=2, timeout_s=0.2)
    u = catalog.get(CORP)
    assert proposer.propose(u, catalog.get(OVERVIEW)).bound == {"corp_code": "corp_code"}
    assert proposer.propose(u, catalog.get(ACCOUNTS)) == RuleProposer().propose(u, catalog.get(ACCOUNTS))
    assert proposer.propose(u, catalog.get(BOND)) == RuleProposer().propose(u, catalog.get(BOND))
    assert "no reply within 0.2 s" in proposer.fallbacks[(CORP, BOND)]
    assert "response_format is not supported" in proposer.fallbacks[(CORP, ACCOUNTS)]
    asked = ep.edges_asked()
    assert asked.count((CORP, OVERVIEW)) == 3 and asked.count((CORP, ACCOUNTS)) == 1 and asked.count((CORP, BOND)) == 3
    assert proposer.stats == {"llm": 1, "fallback_invalid": 0, "fallback_error": 2, "cached": 0}


# ----------------------------------------------------------------------------------- many edges, cache, identity


def _pairs(catalog: Catalog) -> list[tuple[Any, Any]]:
    sources = [catalog.get(CORP), catalog.get("search_dart_disclosures")]
    targets = [catalog.get(n) for n in (OVERVIEW, ACCOUNTS, BOND, "search_dart_disclosures")]
    return [(u, v) for u in sources for v in targets if u.name != v.name]


async def test_propose_many_keeps_the_order_of_the_pairs(endpoint, catalog):
    ep = endpoint()
    pairs = _pairs(catalog)
    for i, (u, v) in enumerate(pairs):  # the first edges answer last
        ep.delays[(u.name, v.name)] = 0.02 * (len(pairs) - i)
    ep.replies[(CORP, BOND)] = says("nonsense")  # a fallback keeps its place too
    pairs = [*pairs, pairs[0]]  # a repeated edge is asked once and answered twice
    proposer = proposer_for(ep)
    many = await proposer.propose_many(pairs, concurrency=8)
    assert [None if p is None else (p.source, p.target) for p in many][:2] == [(CORP, OVERVIEW), (CORP, ACCOUNTS)]
    assert many[-1] == many[0] and len(ep.requests) == len(pairs) - 1
    one_by_one = proposer_for(ep)
    assert many == [one_by_one.propose(u, v) for u, v in pairs]  # sync propose, also inside a running loop
    assert proposer.stats["fallback_invalid"] == 1 and proposer.stats["llm"] == len(pairs) - 2


def test_replies_are_cached_on_disk_and_a_resumed_run_does_not_ask_again(endpoint, catalog, tmp_path):
    ep = endpoint()
    ep.replies[(CORP, BOND)] = says("nonsense")
    cache = tmp_path / "replies.jsonl"
    pairs = _pairs(catalog)
    first = asyncio.run(proposer_for(ep, cache_path=cache).propose_many(pairs))
    asked = len(ep.requests)
    assert json.loads(cache.read_text().splitlines()[0]) == {"kind": "llm", "model": "scripted",
                                                              "prompt": PROMPT_VERSION}
    with cache.open("a") as out:
        out.write('{"source": "find_dart_corp_code", "tar')  # a kill in the middle of a line
    again = proposer_for(ep, cache_path=cache)
    assert asyncio.run(again.propose_many(pairs)) == first
    assert len(ep.requests) == asked  # nothing asked again
    assert again.stats == {"llm": len(pairs) - 1, "fallback_invalid": 1, "fallback_error": 0, "cached": len(pairs)}
    other = ProposerProfile(base_url=ep.base_url, model="another-model")
    with pytest.raises(LLMProposerError, match="another-model"):
        LLMProposer(other, cache_path=cache)


def test_admission_uses_propose_many_in_candidate_order(endpoint, catalog, tmp_path):
    ep = endpoint()
    ep.replies[("search_dart_disclosures", BOND)] = answers({"feasibility": 0.1, "bindings": CORP_BINDING})
    candidates = [CandidateEdge(u.name, v.name, 0.5, False) for u, v in _pairs(catalog)]
    store = GraphStore.create(tmp_path / "run.duckdb", meta={"seed": 0})
    admitted = admit_skeleton(store, catalog, PhaseASettings(), proposer_for(ep), candidates)
    edges = {e.key: e for e in store.edges()}
    store.close()
    assert admitted == len(edges) and ("search_dart_disclosures", BOND) not in edges  # 0.1 is below s_min
    assert edges[(CORP, OVERVIEW)].plan == [{"param": "corp_code", "kind": "upstream", "field": "corp_code",
                                             "candidates": []}]
    assert edges[(CORP, OVERVIEW)].feasibility == 0.8


def test_settings_come_from_the_environment(monkeypatch):
    from appliance.config import KopaSettings

    assert not KopaSettings().models.proposer.configured  # the rule proposer's case
    monkeypatch.setenv("KOPA_MODELS__PROPOSER__BASE_URL", "http://127.0.0.1:9/v1")
    with pytest.raises(ValueError, match="KOPA_MODELS__PROPOSER__MODEL"):
        LLMProposer(KopaSettings().models.proposer)
    monkeypatch.setenv("KOPA_MODELS__PROPOSER__MODEL", "qwen")
    monkeypatch.setenv("KOPA_MODELS__PROPOSER__API_KEY", SECRET)
    monkeypatch.setenv("KOPA_MODELS__PROPOSER__CONCURRENCY", "32")
    settings = LLMProposer(KopaSettings().models.proposer).settings
    assert settings.base_url == "http://127.0.0.1:9/v1" and settings.concurrency == 32
    assert settings.api_key.get_secret_value() == SECRET and SECRET not in repr(settings)
    assert settings.temperature == 0
    assert KopaSettings().edge == PhaseASettings()  # the model variables are not Phase A settings


# ----------------------------------------------------------------------------------- the CLI


def test_cli_build_uses_the_configured_endpoint(endpoint, tmp_path):
    ep = endpoint()
    ep.replies[(CORP, BOND)] = says("I cannot answer that")  # the rule proposer's plan is admitted instead
    run = tmp_path / "graph.duckdb"
    args = ["edge", "graph", "build", "--rounds", "1", "--trials", "4", "--run", str(run),
            "--tool", CORP, "--tool", OVERVIEW, "--tool", BOND]
    env = {"KOPA_HOME": str(TEST_DATA_DIR), "KOPA_SANDBOX__SCALE": str(TEST_SCALE), "COLUMNS": "200",
           "KOPA_MODELS__PROPOSER__BASE_URL": ep.base_url, "KOPA_MODELS__PROPOSER__MODEL": "scripted",
           "KOPA_MODELS__PROPOSER__API_KEY": SECRET}
    done = CliRunner().invoke(app, args, env=env)
    assert done.exit_code == 0, done.output
    assert f"binding proposer: llm scripted at {ep.base_url}" in done.stderr
    # every ordered pair of the three is a skeleton candidate (anything in common); one reply is refused
    assert "5 edges answered by the model, rule fallback for 1 invalid replies and 0 endpoint errors" in done.stderr
    assert sorted(ep.edges_asked()) == sorted((u, v) for u in (CORP, OVERVIEW, BOND) for v in (CORP, OVERVIEW, BOND)
                                              if u != v)
    store = GraphStore.open(run)
    edges, meta = {e.key: e for e in store.edges()}, store.meta()
    store.close()
    assert meta["proposer"] == {"kind": "llm", "model": "scripted", "prompt": PROMPT_VERSION}
    assert meta["tools"] == sorted([CORP, OVERVIEW, BOND])
    assert edges[(CORP, OVERVIEW)].feasibility == 0.8  # the scripted model's answer
    rule = RuleProposer().propose(load_catalog().get(CORP), load_catalog().get(BOND))
    assert edges[(CORP, BOND)].feasibility == rule.feasibility
    replies = run.with_name("graph.llm-replies.jsonl")
    assert replies.is_file() and SECRET not in replies.read_text() and SECRET.encode() not in run.read_bytes()

    # resuming with the rule proposer is refused; with the same model it asks nothing again
    rule_env = {**env, "KOPA_MODELS__PROPOSER__BASE_URL": None, "KOPA_MODELS__PROPOSER__MODEL": None}
    refused = CliRunner().invoke(app, [*args[:4], "2", *args[5:]], env=rule_env)
    assert refused.exit_code != 0 and "proposer" in str(refused.exception)
    assert "belongs to another configuration" in str(refused.exception)
    resumed = CliRunner().invoke(app, [*args[:4], "2", *args[5:]], env=env)
    assert resumed.exit_code == 0, resumed.output
    assert len(ep.requests) == 6  # one per candidate edge, none asked again
