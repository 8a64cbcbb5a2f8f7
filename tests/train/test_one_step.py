"""One agent step for the bench and training: the same scripted model gets the same conversation and the same tool
results whether the bench's ``openai`` agent plays it over HTTP or a training rollout plays it as a policy; the
episode limits set once in kopa.toml reach both.

Real parts: the loopback chat server (``tests/chat_server.py``) answering with the golden policy's text, the
``openai`` agent with its SDK client, strict replay of the shipped bundle, ``bench.episode``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import yaml

from bench.agents.registry import make_agent
from bench.agents.step import approx_tokens
from bench.episode import run_episode
from models.toolcalls import ToolCall, render_assistant
from tests.chat_server import serve_chat, stop
from train.episode import run_rollout
from train.policies import GoldenPolicy, runtime_context_from_prompt

from .conftest import IDS, bench_tasks, replay_gateway


def completion(content: str) -> dict[str, Any]:
    return {"id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": "scripted",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


class PolicyServer:
    """A chat endpoint whose 'model' is a policy: each request's messages go to it, its text is the reply."""

    def __init__(self, make_policy: Any) -> None:
        self.make_policy, self.policy, self.requests = make_policy, None, []
        self.server, self.base_url = serve_chat(self.respond)

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        self.requests.append(body)
        if len(body["messages"]) == 2:  # a new episode
            self.policy = self.make_policy()
        return 200, completion(asyncio.run(self.policy(body["messages"], body.get("tools") or [])))


@pytest.fixture(scope="module")
def both_ways(tmp_path_factory):
    """Per task: (bench outcome, the bench's requests, training rollout)."""
    home = tmp_path_factory.mktemp("home")
    played = {}

    async def run():
        gateway = replay_gateway(home, bench_tasks()[IDS[0]].bundle)
        try:
            for task_id in IDS:
                task = bench_tasks()[task_id]
                server = PolicyServer(lambda task=task: GoldenPolicy(task))
                try:
                    agent = make_agent("openai", base_url=server.base_url, model="scripted", temperature=0.0)
                    bench = await run_episode(task, agent, gateway, seed=0)
                finally:
                    stop(server.server)
                played[task_id] = (bench, server.requests, await run_rollout(task, GoldenPolicy(task), gateway))
        finally:
            await gateway.aclose()

    asyncio.run(run())
    return played


def test_the_bench_and_a_training_rollout_show_the_same_model_the_same_conversation(both_ways):
    for task_id, (bench, requests, rollout) in both_ways.items():
        assert bench.passed and rollout.outcome.passed, task_id
        # every request the bench sent is the rollout's conversation up to that turn, tool results included
        assistant_at = [i for i, m in enumerate(rollout.messages) if m["role"] == "assistant"]
        assert len(requests) == len(assistant_at) == rollout.turns, task_id
        for request, at in zip(requests, assistant_at, strict=True):
            assert request["messages"] == rollout.messages[:at], (task_id, at)
        assert rollout.messages[-1] == {"role": "assistant", "content": bench.answer}
        # the same calls with the same results and the same verdicts
        agent_calls = [[e for e in o.transcript if e["by"] == "agent"] for o in (bench, rollout.outcome)]
        assert agent_calls[0] == agent_calls[1] and len(agent_calls[0]) == len(bench_tasks()[task_id].golden_actions)
        assert bench.scores() == rollout.outcome.scores()


def looping_policy(task):
    """Calls the task's first golden tool every turn and never answers."""
    first = bench_tasks()[task].golden_actions[0]

    async def policy(messages: Any, tools: Any) -> str:
        context = runtime_context_from_prompt(messages[0]["content"])
        args = {k: (context.get(v[1:-1], v) if isinstance(v, str) and v.startswith("{") else v)
                for k, v in first.args.items()}
        return render_assistant("", [ToolCall(first.tool, args)])

    return policy


def test_an_episode_limit_set_in_kopa_toml_reaches_the_bench_and_training(tmp_path, monkeypatch, edge_dataset):
    from appliance.config import KopaSettings
    from train.engines.verl.launch import prepare_run
    from train.engines.verl.recipes import load_recipe, plan_run

    monkeypatch.chdir(tmp_path)
    (tmp_path / "kopa.toml").write_text("[episode]\nmax_turns = 2\nmax_tool_tokens = 200\n", encoding="utf-8")
    limits = KopaSettings().episode
    assert (limits.max_turns, limits.max_tool_tokens, limits.max_calls) == (2, 200, 30)
    task = bench_tasks()["trf-001"]

    async def run():
        gateway = replay_gateway(tmp_path / "home", task.bundle)
        server = PolicyServer(lambda: looping_policy(task.id))
        try:
            # the bench: what `kopa bench run` gives the agent registry
            agent = make_agent("openai", profile=KopaSettings().models.agent, limits=limits,
                               base_url=server.base_url, model="scripted")
            bench = await run_episode(task, agent, gateway, seed=0)
            rollout = await run_rollout(task, looping_policy(task.id), gateway, limits=limits)
            return bench, server.requests, rollout
        finally:
            stop(server.server)
            await gateway.aclose()

    bench, requests, rollout = asyncio.run(run())
    assert len(requests) == 2 and "no final answer within 2 assistant turns" in bench.error
    assert rollout.turns == 2 and "no final answer within 2 assistant turns" in rollout.outcome.error
    for tool_message in [m for m in requests[-1]["messages"] + rollout.messages if m["role"] == "tool"]:
        assert approx_tokens(tool_message["content"]) <= 200
        assert json.loads(tool_message["content"])["records_omitted"] > 0  # the page was cut to fit
    # verl's rollouts: `kopa train grpo` writes the same limits into the agent loop's entry
    plan = plan_run(load_recipe("grpo_1gpu_small"), home=tmp_path, run_dir=tmp_path / "run", dataset=edge_dataset,
                    agent_loops=tmp_path / "run" / "agent_loops.yaml")
    prepare_run(plan, limits=limits)
    entry = yaml.safe_load((tmp_path / "run" / "agent_loops.yaml").read_text(encoding="utf-8"))[0]
    assert entry["limits"]["max_tool_tokens"] == 200 and entry["limits"]["max_turns"] == 2
