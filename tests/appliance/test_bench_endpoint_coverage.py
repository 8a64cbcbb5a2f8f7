"""`kopa bench run --agent endpoint` and the coverage pass (`--mode replay-or-record --upstream sandbox`).

The model is the scripted loopback chat server; the episodes replay the episode-test bundle recorded once from
the cached sandbox world (``tests/bench/conftest.py``), and the coverage pass records from that same world.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from appliance.bench_cli import run_agent
from bench.options import BenchRunOptions
from recorder import CassetteStore
from tests.bench import conftest as bench_fixtures
from tests.chat_server import serve_chat, stop
from tests.conftest import TEST_DATA_DIR, TEST_SCALE

episode_tasks = bench_fixtures.episode_tasks
recorded_bundle = bench_fixtures.recorded_bundle
TASK = "ep-string"  # 서울대입구역의 전철역코드 (0228), one call of search_subway_stations


def completion(message: dict[str, Any]) -> dict[str, Any]:
    return {"id": "c", "object": "chat.completion", "created": 0, "model": "scripted",
            "choices": [{"index": 0, "message": {"role": "assistant", **message},
                         "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}


@pytest.fixture
def model() -> Iterator[Callable[[str, str], str]]:
    """model(station, style) -> base URL of a scripted model that looks ``station`` up, then answers 0228.

    It reads the episode's key token from the system prompt, as a model would; ``style`` is ``xml`` (a Qwen3.5
    reply the endpoint parses) or ``json`` (structured tool_calls)."""
    servers = []

    def start(station: str, style: str) -> str:
        def respond(body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
            if len(body["messages"]) > 2:  # a tool result came back, found or not
                return 200, completion({"content": "ANSWER: {0228}"})
            key = re.search(r"seoul_api_key: (\S+)", body["messages"][0]["content"]).group(1)
            if style == "xml":
                return 200, completion({"content": "<tool_call>\n<function=search_subway_stations>\n<parameter=KEY>\n"
                                                   f"{key}\n</parameter>\n<parameter=STATION_NM>\n{station}\n"
                                                   "</parameter>\n</function>\n</tool_call>"})
            args = json.dumps({"KEY": key, "STATION_NM": station}, ensure_ascii=False)
            return 200, completion({"content": None, "tool_calls": [{"id": "c0", "type": "function", "function": {
                "name": "search_subway_stations", "arguments": args}}]})

        server, base_url = serve_chat(respond)
        servers.append(server)
        return base_url

    yield start
    for server in servers:
        stop(server)


@pytest.fixture
def setup(recorded_bundle, tmp_path, monkeypatch) -> tuple[Path, Path, str]:
    """(a copy of the cassettes, a one-task file pinned to the recorded version, that version); the appliance home
    is the cached test world's (no world is built), runs and the metadata DB go to tmp_path."""
    cassettes = tmp_path / "cassettes"
    shutil.copytree(recorded_bundle[0], cassettes)
    version = CassetteStore(cassettes).head(bench_fixtures.BUNDLE)
    line = next(json.loads(t) for t in bench_fixtures.EPISODE_TASKS.read_text(encoding="utf-8").splitlines()
                if t.strip() and json.loads(t)["id"] == TASK)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({**line, "bundle": f"{bench_fixtures.BUNDLE}@{version}"}, ensure_ascii=False) + "\n",
                     encoding="utf-8")
    monkeypatch.setenv("KOPA_HOME", str(TEST_DATA_DIR))
    monkeypatch.setenv("KOPA_SANDBOX__SCALE", str(TEST_SCALE))
    monkeypatch.setenv("KOPA_METADB__URL", f"sqlite:///{tmp_path / 'kopa.db'}")
    return cassettes, tasks, version


def folder_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(folder).as_posix().encode() + path.read_bytes())
    return digest.hexdigest()


def test_the_agent_endpoint_plays_benchmark_episodes_and_they_are_scored(setup, model, tmp_path):
    cassettes, tasks, _ = setup
    result = run_agent(BenchRunOptions(agent="endpoint", tasks=tasks, rollouts=1, cassettes=cassettes,
                                       run_dir=tmp_path / "run", base_url=model("서울대입구", "xml"),
                                       model="scripted"))

    assert result.summary.pass_at[1] == 1.0 and result.summary.action == 1.0 and not result.errors
    line = json.loads((tmp_path / "run" / "episodes.jsonl").read_text(encoding="utf-8"))
    calls = [e for e in line["transcript"] if e["by"] == "agent"]
    assert [(c["tool"], c["outcome"]) for c in calls] == [("search_subway_stations", "semantic_success")]
    assert line["usage"] == {"prompt_tokens": 20, "completion_tokens": 4}  # both model turns, via the extension
    assert json.loads((tmp_path / "run" / "coverage.json").read_text()) == {
        "episodes": 1, "replay_misses": 0, "episodes_with_replay_miss": 0, "model_errors": 0, "recorded_misses": 0,
        "distinct_missed_requests": 0, "passed": 1, "wrong_answers": 0, "error_kinds": []}


def test_a_replay_miss_is_counted_apart_and_the_coverage_pass_records_it_as_a_child_version(setup, model, tmp_path):
    cassettes, tasks, pinned = setup
    pinned_digest = folder_digest(cassettes / bench_fixtures.BUNDLE / pinned)
    url = model("서울역", "json")  # another station than the golden path: the bundle has no answer for it

    strict = run_agent(BenchRunOptions(agent="openai", tasks=tasks, rollouts=1, cassettes=cassettes,
                                       run_dir=tmp_path / "strict", base_url=url, model="scripted"))
    coverage = json.loads((tmp_path / "strict" / "coverage.json").read_text())
    assert (coverage["replay_misses"], coverage["episodes_with_replay_miss"], coverage["model_errors"]) == (1, 1, 0)
    assert not strict.errors

    run_agent(BenchRunOptions(agent="openai", tasks=tasks, rollouts=1, cassettes=cassettes, run_dir=tmp_path / "cover",
                              base_url=url, model="scripted", upstream="sandbox", mode="replay-or-record"))
    coverage = json.loads((tmp_path / "cover" / "coverage.json").read_text())
    assert (coverage["replay_misses"], coverage["model_errors"]) == (0, 0) and coverage["recorded_misses"] >= 1
    commit = json.loads((tmp_path / "cover" / "coverage-commit.json").read_text())
    name, _, new = commit["new_version"].partition("@")
    store = CassetteStore(cassettes)
    assert (name, store.head(name)) == (bench_fixtures.BUNDLE, new) and new != pinned
    assert store.open(commit["new_version"]).manifest.parent == pinned
    assert folder_digest(cassettes / name / pinned) == pinned_digest  # the pinned version is untouched

    # the same path now replays strictly from the new version: no miss
    tasks.write_text(tasks.read_text(encoding="utf-8").replace(pinned, new), encoding="utf-8")
    run_agent(BenchRunOptions(agent="openai", tasks=tasks, rollouts=1, cassettes=cassettes, run_dir=tmp_path / "again",
                              base_url=url, model="scripted"))
    assert json.loads((tmp_path / "again" / "coverage.json").read_text())["replay_misses"] == 0


def test_the_coverage_pass_needs_the_sandbox_and_a_head_at_the_pinned_version(setup, tmp_path):
    cassettes, tasks, pinned = setup
    with pytest.raises(ValueError, match="add --upstream sandbox"):
        run_agent(BenchRunOptions(agent="oracle", tasks=tasks, mode="replay-or-record", cassettes=cassettes,
                                  run_dir=tmp_path / "a"))
    with pytest.raises(ValueError, match="--mode 'record': choose one of replay, replay-or-record"):
        run_agent(BenchRunOptions(agent="oracle", tasks=tasks, mode="record", cassettes=cassettes,
                                  run_dir=tmp_path / "b"))
    (cassettes / bench_fixtures.BUNDLE / "HEAD").write_text("0" * 20 + "\n")
    with pytest.raises(ValueError, match=f"whose HEAD is {pinned}"):
        run_agent(BenchRunOptions(agent="oracle", tasks=tasks, mode="replay-or-record", upstream="sandbox",
                                  cassettes=cassettes, run_dir=tmp_path / "c"))
