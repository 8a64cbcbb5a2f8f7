"""Episodes that ended with an error, grouped by kind apart from wrong answers: from an episodes file, in the
report (Markdown and HTML), in `kopa bench run`'s summary and coverage lines, and in the console's source."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path
from types import SimpleNamespace

from rich.console import Console

from bench.report import ErrorGroup, error_groups, error_kind, errors_line, load_run, run_error_groups, write_report
from bench.runner import EPISODES_FILE, RUN_FILE
from tests.chat_server import serve_chat, stop

URL = "http://127.0.0.1:41234/v1/chat/completions"
TIMEOUT = f"agent 'local' raised EndpointError: {URL}: no reply within 120.0 s"
ERRORS = [
    TIMEOUT,
    "agent 'local' raised TurnLimitReached: no final answer within 4 assistant turns: the model was still calling tools",
    TIMEOUT.replace("120.0", "98.5"),
    f"agent 'local' raised EndpointError: {URL} answered HTTP 400: Requested tokens (9001) exceed context window "
    "of 8192",
    f"agent 'local' raised EndpointError: {URL} answered HTTP 500: internal error",
    f"agent 'openai' raised EndpointError: {URL}: cannot connect: [Errno 111] Connection refused",
    "agent 'local' gave no answer within 600 s",
    "agent 'local' raised KeyError: 'choices'",
    "judge unavailable: the judge endpoint answered HTTP 503",
]


def _run_dir(tmp_path: Path, errors: list[str | None], wrong: int = 1, passed: int = 1) -> Path:
    """A run directory by hand: one task per episode; ``errors`` fail, then ``wrong`` wrong answers, ``passed``."""
    run_dir = tmp_path / "run"
    run_dir.mkdir(parents=True)
    rows = [(e, False) for e in errors] + [(None, False)] * wrong + [(None, True)] * passed
    config = {"agent": "local", "bundle": "b@1", "upstream": "replay", "seeds": [0], "rollouts": 1,
              "tasks_file": None, "tasks_sha256": None, "n_tasks": len(rows)}
    (run_dir / RUN_FILE).write_text(json.dumps({"config": config, "complete": True, "episodes_total": len(rows)}),
                                    encoding="utf-8")
    (run_dir / EPISODES_FILE).write_text("".join(json.dumps(
        {"task_id": f"t{i}", "domain": "traffic", "seed": 0, "rollout": 0, "answer": None, "error": error,
         "transcript": [], "scores": {"passed": ok, "action": {"action": 1.0 if ok else 0.0, "corr": 0.0, "eff": 0.0,
                                                              "matches": []}, "response": None, "environment": None}})
        + "\n" for i, (error, ok) in enumerate(rows)), encoding="utf-8")
    return run_dir


EXPECTED = (
    ErrorGroup("endpoint timeout", 2, TIMEOUT),
    ErrorGroup("turn limit", 1, ERRORS[1]),
    ErrorGroup("context too long", 1, ERRORS[3]),
    ErrorGroup("endpoint HTTP error", 1, ERRORS[4]),
    ErrorGroup("endpoint unreachable", 1, ERRORS[5]),
    ErrorGroup("episode timeout", 1, ERRORS[6]),
    ErrorGroup("KeyError", 1, ERRORS[7]),
    ErrorGroup("judge unavailable", 1, ERRORS[8]),
)


def test_errors_are_grouped_by_kind_with_a_count_and_the_first_message(tmp_path):
    assert run_error_groups(_run_dir(tmp_path, ERRORS)) == EXPECTED  # wrong answers and passes are no errors
    assert error_groups([None, "", "something odd"]) == (ErrorGroup("other", 1, "something odd"),)
    assert error_groups(["x" * 1000])[0].example == "x" * 299 + "…"
    assert run_error_groups(tmp_path / "nowhere") == ()
    assert errors_line(EXPECTED[:2]) == "model errors: 3 episode(s) — endpoint timeout 2, turn limit 1"
    assert errors_line(()) == "model errors: none"


def test_the_report_lists_the_errors_by_kind_apart_from_the_failures(tmp_path):
    report = load_run(_run_dir(tmp_path, ERRORS[:3]))
    assert report.errors == EXPECTED[:2]
    md_path, html_path = write_report(report, tmp_path / "out")
    markdown = md_path.read_text(encoding="utf-8")
    assert "## Errors (3 of 5 episodes)" in markdown
    assert f"| endpoint timeout | 2 | {TIMEOUT} |" in markdown and f"| turn limit | 1 | {ERRORS[1]} |" in markdown
    html = html_path.read_text(encoding="utf-8")
    assert "<h2>Errors (3 of 5 episodes)</h2>" in html
    assert ('<tr data-error-kind="endpoint timeout"><td>endpoint timeout</td><td class="num">2</td>'
            f'<td class="why">{TIMEOUT.replace(chr(39), "&#39;")}</td></tr>') in html

    clean = load_run(_run_dir(tmp_path / "clean", []))
    markdown = write_report(clean, tmp_path / "clean-out")[0].read_text(encoding="utf-8")
    assert "## Errors (0 of 2 episodes)" in markdown and "every failure below is a wrong answer" in markdown


def test_the_cli_summary_and_coverage_say_how_many_episodes_were_errors_and_why(tmp_path, monkeypatch):
    from appliance import bench_cli

    run_dir = _run_dir(tmp_path, ERRORS[:3], wrong=2, passed=1)
    coverage = bench_cli.run_coverage(run_dir)
    assert (coverage["episodes"], coverage["passed"], coverage["wrong_answers"], coverage["model_errors"]) == \
        (6, 1, 2, 3)
    assert coverage["error_kinds"] == [{"kind": "endpoint timeout", "count": 2, "example": TIMEOUT},
                                       {"kind": "turn limit", "count": 1, "example": ERRORS[1]}]
    assert json.loads((run_dir / bench_cli.COVERAGE_FILE).read_text(encoding="utf-8")) == coverage

    out = io.StringIO()
    monkeypatch.setattr(bench_cli, "console", Console(file=out, width=400))
    bench_cli._print_coverage(run_dir)
    report = load_run(run_dir)
    config = SimpleNamespace(agent="local", bundle="b@1", upstream="replay", seeds=[0], rollouts=1)
    bench_cli._print_summary(SimpleNamespace(summary=report.summary, config=config, ran=6, skipped=0,
                                             errors=ERRORS[:3], out_dir=run_dir))
    text = out.getvalue()
    assert "model errors: 3 episode(s)" in text
    assert f"  2 × endpoint timeout: e.g. {TIMEOUT}" in text and f"  1 × turn limit: e.g. {ERRORS[1]}" in text
    assert ("6 episode(s): 1 passed, 2 wrong or no answer, 3 model error(s) — endpoint timeout 2, turn limit 1"
            in text)


def test_the_console_reads_a_runs_errors_from_its_directory(tmp_path):
    from tui.sources.records import Records

    run_dir = _run_dir(tmp_path, ERRORS[:3])
    records = Records("sqlite://")
    assert records.error_groups(SimpleNamespace(run_dir=str(run_dir))) == EXPECTED[:2]
    assert records.error_groups(SimpleNamespace(run_dir=str(tmp_path / "gone"))) == ()


# ------------------------------------------------------------------ kinds carried from the chat client, not read back


def _serve(reply: tuple[int, object], delay_s: float = 0.0):
    def respond(body, headers):
        time.sleep(delay_s)
        return reply
    return serve_chat(respond)


async def test_endpoint_failures_are_counted_by_the_kind_the_client_raised_not_by_their_text(tmp_path, episode_tasks,
                                                                                            gateway):
    from bench.agents.openai_agent import OpenAIAgent
    from bench.episode import run_episode
    from sandbox.loopback import free_port
    from tui.sources.records import Records

    context_400 = (400, {"error": {"message": "This model's maximum context length is 8192 tokens. However, you "
                                              "requested 9001 tokens.", "type": "BadRequestError", "code": 400}})
    servers = [_serve((503, {"error": {"message": "overloaded"}})), _serve(context_400),
               _serve((200, {"choices": []}), delay_s=1.5)]
    urls = [base for _, base in servers] + [f"http://127.0.0.1:{free_port()}/v1"]  # the last one refuses
    task = episode_tasks["ep-string"]
    lines = []
    try:
        for url in urls:
            agent = OpenAIAgent(base_url=url, model="m", max_retries=0, request_timeout_s=0.3)
            line = (await run_episode(task, agent, gateway, seed=0)).to_json()
            lines.append({**line, "domain": task.domain})
    finally:
        for server, _ in servers:
            stop(server)
    assert [(line["error_kind"], line["error_status"]) for line in lines] == [
        ("endpoint HTTP error", 503), ("context too long", 400), ("endpoint timeout", None),
        ("endpoint unreachable", None)]

    # every message now says something else: the kinds still come from the records
    for i, line in enumerate(lines):
        line["task_id"] = f"t{i}"  # four episodes of the report, not four tries of one
        line["error"] = "agent 'openai' raised EndpointError: no reply within 1 s, cannot connect, TurnLimitReached"
    run_dir = _run_dir(tmp_path, [])
    (run_dir / EPISODES_FILE).write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    message = lines[0]["error"]
    expected = (ErrorGroup("endpoint HTTP error", 1, message), ErrorGroup("context too long", 1, message),
                ErrorGroup("endpoint timeout", 1, message), ErrorGroup("endpoint unreachable", 1, message))
    groups = run_error_groups(run_dir)
    assert groups == expected and not any(g.from_message for g in groups)
    assert load_run(run_dir).errors == expected
    assert Records("sqlite://").error_groups(SimpleNamespace(run_dir=str(run_dir))) == expected
    assert errors_line(groups) == ("model errors: 4 episode(s) — endpoint HTTP error 1, context too long 1, "
                                   "endpoint timeout 1, endpoint unreachable 1")


def test_an_old_record_with_only_a_message_falls_back_to_reading_it_and_says_so():
    old = {"error": TIMEOUT}  # written before episodes kept error_kind
    new = {"error": TIMEOUT, "error_kind": "endpoint HTTP error", "error_status": 502}
    assert error_kind(old) == "endpoint timeout" and error_kind(new) == "endpoint HTTP error"
    assert error_kind({"error": None}) is None
    groups = error_groups([old, new, TIMEOUT])
    assert groups == (ErrorGroup("endpoint timeout", 2, TIMEOUT), ErrorGroup("endpoint HTTP error", 1, TIMEOUT))
    assert [g.from_message for g in groups] == [True, False]
