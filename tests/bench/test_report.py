"""Reports on run directories (Markdown, self-contained HTML with plots), run comparisons, the metadata DB rows,
and `kopa bench report | compare | list`.

The oracle and the first-page agent each run once per module over the episode tasks (2 seeds × 2 rollouts),
replaying the bundle tests/bench/conftest.py records; two tasks are moved to the finance domain so that the
report has two domains. First-page fails exactly the tasks that page.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path

import pytest
from sqlmodel import Session, func, select
from typer.testing import CliRunner

from appliance.bench_records import bench_episode_results, recent_bench_runs, record_bench_run
from appliance.cli import app
from appliance.metadb import BenchEpisodeResult, BenchRun, open_metadb
from bench.agents import FirstPageAgent, OracleAgent
from bench.report import REPORT_HTML, REPORT_MD, compare_runs, comparison_markdown, load_run, write_report
from bench.runner import EPISODES_FILE, RUN_FILE, open_bench_gateway, run_benchmark, summary_json
from bench.task import load_tasks
from tests.bench.conftest import pin_tasks
from tests.conftest import TEST_DATA_DIR

FINANCE = {"ep-string": "finance", "ep-paging-count": "finance"}
N_EPISODES = 6 * 2 * 2  # tasks × seeds × rollouts


@pytest.fixture(scope="module")
def runs(recorded_bundle, tmp_path_factory) -> dict[str, Path]:
    """{"oracle": run dir, "first-page": run dir, "tasks": the pinned task file} over two domains."""
    folder = tmp_path_factory.mktemp("report-runs")
    cassettes, tasks_file, ref = pin_tasks(recorded_bundle[0], folder, domains=FINANCE)
    tasks = load_tasks(tasks_file)

    async def run_both() -> None:
        async with open_bench_gateway(ref, home=TEST_DATA_DIR, cassettes=cassettes) as gateway:
            for name, agent in (("oracle", OracleAgent()), ("first-page", FirstPageAgent)):
                await run_benchmark(tasks, agent, gateway, rollouts=2, seeds=[0, 1], out_dir=folder / name,
                                    tasks_file=tasks_file, concurrency=4)

    asyncio.run(run_both())
    return {"oracle": folder / "oracle", "first-page": folder / "first-page", "tasks": tasks_file}


@pytest.fixture(scope="module")
def paging_tasks(runs) -> list[str]:
    return sorted(t.id for t in load_tasks(runs["tasks"]) if t.pages)


def _copy(run_dir: Path, to: Path) -> Path:
    shutil.copytree(run_dir, to)
    return to


def _edit_lines(run_dir: Path, edit) -> None:
    path = run_dir / EPISODES_FILE
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in edit(lines)), encoding="utf-8")


def _edit_run_json(run_dir: Path, **changes) -> None:
    path = run_dir / RUN_FILE
    meta = json.loads(path.read_text(encoding="utf-8"))
    for key, value in changes.items():
        if key in meta["config"]:
            meta["config"][key] = value
        else:
            meta[key] = value
    path.write_text(json.dumps(meta), encoding="utf-8")


def _cells(html: str, row_attr: str) -> dict[str, dict[str, float | None]]:
    """{row key: {metric: exact value}} from the data attributes of a table's rows."""
    rows = {}
    for key, body in re.findall(rf'<tr {row_attr}="([^"]+)">(.*?)</tr>', html, flags=re.S):
        rows[key] = {m: None if v == "None" else float(v)
                     for m, v in re.findall(r'data-metric="([^"]+)" data-value="([^"]+)"', body)}
    return rows


# ------------------------------------------------------------------------------------------------ report


@pytest.mark.parametrize("agent", ["oracle", "first-page"])
def test_the_report_recomputes_the_run_summary_from_the_episodes(runs, agent):
    report = load_run(runs[agent])
    written = json.loads((runs[agent] / RUN_FILE).read_text(encoding="utf-8"))
    assert summary_json(report.summary) == written["summary"]
    assert report.complete and report.status == "complete" and (report.n_done, report.n_total) == (N_EPISODES,) * 2
    assert [d.domain for d in report.domains] == ["finance", "traffic"]
    for domain in report.domains:  # two seeds: every domain has its seed interval
        assert domain.ci is not None and domain.ci.n == 2 and list(domain.seed_pass_at_1) == [0, 1]
        assert domain.ci.mean == pytest.approx(domain.pass_at[1])
    assert len(report.tasks) == 6 and sum(t.n_episodes for t in report.tasks) == N_EPISODES


def test_the_html_report_is_self_contained_with_two_plots_and_the_summary_numbers(runs, tmp_path):
    report = load_run(runs["first-page"])
    md_path, html_path = write_report(report, tmp_path / "out")
    assert (md_path, html_path) == (tmp_path / "out" / REPORT_MD, tmp_path / "out" / REPORT_HTML)
    html = html_path.read_text(encoding="utf-8")

    assert not re.search(r'(src|href)\s*=\s*["\']?\s*(https?:)?//', html, flags=re.I)
    assert "http://" not in html and "https://" not in html and "<script" not in html and "<link" not in html
    assert html.count("<svg") == 2 and html.count("</svg>") == 2
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids)), "the two inline plots share an id"

    summary = json.loads((runs["first-page"] / RUN_FILE).read_text(encoding="utf-8"))["summary"]
    expected = {d: {"pass@1": row["pass_at"]["1"], "pass@2": row["pass_at"]["2"], "action": row["action"]}
                for d, row in summary["by_domain"].items()}
    assert _cells(html, "data-domain") == expected
    assert expected["finance"]["pass@1"] == 0.5 and expected["traffic"]["pass@1"] == 0.75

    markdown = md_path.read_text(encoding="utf-8")
    assert "| finance | 2 | 8 | 50.0 | ± 0.0 [50.0, 50.0] | 50.0 |" in markdown
    assert "## Failures (8 of 24 episodes)" in markdown
    assert "| ep-paging-count | 0/0, 0/1, 1/0, 1/1 | 첫 페이지에서 30건을 확인했습니다(전체 51건). \\\\boxed{30} | RESPONSE " \
        "(numeric): 30 equals none of ['4']; ACTION 0.75 (Corr 0.50, Eff 1.00; golden calls not made: " \
        "search_subway_stations) |" in markdown


def test_two_reports_of_the_same_run_are_byte_identical(runs, tmp_path):
    first = write_report(load_run(runs["first-page"]), tmp_path / "one")
    second = write_report(load_run(runs["first-page"]), tmp_path / "two")
    for a, b in zip(first, second):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_answers_and_task_text_are_escaped_in_the_html(runs, tmp_path):
    run_dir = _copy(runs["first-page"], tmp_path / "run")
    hostile = '<script>alert("x")</script><img src="https://example.com/x.png">'
    _edit_lines(run_dir, lambda lines: [{**x, "answer": hostile} for x in lines])
    html = write_report(load_run(run_dir), tmp_path / "out")[1].read_text(encoding="utf-8")
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html
    assert "서울 지하철" in html  # the queries, read from the unchanged task file


def test_an_incomplete_run_is_reported_with_the_episodes_done(runs, tmp_path):
    run_dir = _copy(runs["oracle"], tmp_path / "run")
    _edit_lines(run_dir, lambda lines: lines[:9])  # the third task has one episode: no pass@2 yet
    _edit_run_json(run_dir, complete=False, finished_at=None, summary=None)

    report = load_run(run_dir)
    assert report.status == f"incomplete, 9 of {N_EPISODES} episodes" and report.ks == [1]
    md_path, html_path = write_report(report, tmp_path / "out")
    assert "**incomplete, 9 of 24 episodes**" in md_path.read_text(encoding="utf-8")
    assert 'class="status incomplete">incomplete, 9 of 24 episodes<' in html_path.read_text(encoding="utf-8")


def _write_run(run_dir: Path, episodes: list[tuple[str, str, int, int, bool, str | None]], seeds: list[int]) -> Path:
    """A run directory by hand: episodes as (task, domain, seed, rollout, passed, error)."""
    run_dir.mkdir()
    config = {"agent": "hand", "bundle": "b@1", "upstream": "replay", "seeds": seeds, "rollouts": 2,
              "tasks_file": None, "tasks_sha256": None, "n_tasks": len({e[0] for e in episodes})}
    (run_dir / RUN_FILE).write_text(json.dumps({"config": config, "complete": True,
                                                "episodes_total": len(episodes)}), encoding="utf-8")
    (run_dir / EPISODES_FILE).write_text("".join(json.dumps(
        {"task_id": task, "domain": domain, "seed": seed, "rollout": rollout, "answer": None, "error": error,
         "scores": {"passed": passed, "action": {"action": 1.0 if passed else 0.25, "corr": 0.5, "eff": 0.0,
                                                 "matches": []},
                    "response": None, "environment": None}}) + "\n"
        for task, domain, seed, rollout, passed, error in episodes), encoding="utf-8")
    return run_dir


def test_one_seed_gives_no_interval_and_an_unsolved_domain_no_action(tmp_path):
    run_dir = _write_run(tmp_path / "run", [("t1", "traffic", 0, 0, True, None), ("t1", "traffic", 0, 1, True, None),
                                            ("t2", "law", 0, 0, False, "agent timed out after 300 s"),
                                            ("t2", "law", 0, 1, False, None)], seeds=[0])
    report = load_run(run_dir)
    law = next(d for d in report.domains if d.domain == "law")
    assert (law.pass_at, law.action, law.ci, report.summary.seed_ci) == ({1: 0.0, 2: 0.0}, None, None, None)
    assert [(t.task_id, t.n_passed, t.mean_action, t.n_errors) for t in report.tasks] == \
        [("t1", 2, 1.0, 0), ("t2", 0, 0.25, 1)]
    md_path, html_path = write_report(report, tmp_path / "out")
    markdown = md_path.read_text(encoding="utf-8")
    assert "| law | 1 | 2 | 0.0 | – | 0.0 | – |" in markdown and "95% CI (needs 2+ seeds)" in markdown
    assert "| t2 | 0/0 |  | error: agent timed out after 300 s; ACTION 0.25 (Corr 0.50, Eff 0.00) |" in markdown
    html = html_path.read_text(encoding="utf-8")
    assert html.count("<svg") == 2 and "no solved task: law" in html


def test_seeds_that_disagree_give_a_wide_domain_interval(tmp_path):
    run_dir = _write_run(tmp_path / "run", [("t1", "traffic", seed, rollout, seed == 0, None)
                                            for seed in (0, 1) for rollout in (0, 1)], seeds=[0, 1])
    (traffic,) = load_run(run_dir).domains
    assert traffic.seed_pass_at_1 == {0: 1.0, 1: 0.0}
    assert traffic.ci is not None and traffic.ci.half_width == pytest.approx(12.7062 * 0.5, rel=1e-4)


def test_bad_run_directories_are_refused_with_the_reason(tmp_path):
    with pytest.raises(ValueError, match=r"run directory .*nowhere does not exist"):
        load_run(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=r"not a benchmark run directory: it has no run\.json"):
        load_run(tmp_path / "empty")
    (tmp_path / "empty" / RUN_FILE).write_text('{"config": {}, "complete": false}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"has no episodes yet \(episodes\.jsonl is missing or empty\)"):
        load_run(tmp_path / "empty")


# ------------------------------------------------------------------------------------------------ compare


def test_compare_puts_the_oracle_above_first_page_and_lists_the_flipped_tasks(runs, paging_tasks):
    comparison = compare_runs(load_run(runs["first-page"]), load_run(runs["oracle"]))
    overall = {row.metric: row for row in comparison.overall}
    assert overall["pass@1"].b == 1.0 and overall["pass@1"].a < overall["pass@1"].b
    assert overall["pass@1"].delta == pytest.approx(len(paging_tasks) / 6)
    assert [(t.task_id, t.a, t.b, t.better) for t in comparison.flipped] == [(t, 0.0, 1.0, "B") for t in paging_tasks]
    assert comparison.warnings == () and len(comparison.common_tasks) == 6
    finance = next(d for d in comparison.domains if d.domain == "finance")
    assert [(r.metric, r.a, r.b) for r in finance.rows][:2] == [("pass@1", 0.5, 1.0), ("pass@2", 0.5, 1.0)]

    text = comparison_markdown(comparison)
    assert "| pass@1 | 66.7 | 100.0 | +33.3 |" in text
    assert "## Tasks that flipped (2)" in text
    assert all(f"| {task} | " in text for task in paging_tasks)
    assert "None: every common task" in comparison_markdown(compare_runs(load_run(runs["oracle"]),
                                                                         load_run(runs["oracle"])))


def test_compare_over_another_task_file_uses_only_the_common_tasks_and_says_so(runs, tmp_path, paging_tasks):
    other = _copy(runs["first-page"], tmp_path / "other")
    _edit_lines(other, lambda lines: [x for x in lines if x["task_id"] != paging_tasks[0]])
    _edit_run_json(other, tasks_sha256="0" * 64, bundle="episode-tests@other")
    comparison = compare_runs(load_run(runs["oracle"]), load_run(other))
    assert paging_tasks[0] not in comparison.common_tasks and len(comparison.common_tasks) == 5
    assert comparison.only_a == (paging_tasks[0],)
    assert comparison.warnings[0].startswith("different task files: compared over the 5 task(s) both runs have")
    assert any("different bundles" in w for w in comparison.warnings)
    assert comparison.summary_a.n_tasks == comparison.summary_b.n_tasks == 5
    assert "> **warning:** different task files" in comparison_markdown(comparison)


def test_compare_refuses_runs_without_a_common_task(runs, tmp_path):
    other = _copy(runs["first-page"], tmp_path / "other")
    _edit_lines(other, lambda lines: [{**x, "task_id": "x-" + x["task_id"]} for x in lines])
    with pytest.raises(ValueError, match=r"the runs share no task: .* ran ep-env-note, .*compare runs over the same"):
        compare_runs(load_run(runs["oracle"]), load_run(other))


# ------------------------------------------------------------------------------------------------ metadata DB


def _count(engine, table) -> int:
    with Session(engine) as session:
        return session.exec(select(func.count()).select_from(table)).one()


def test_a_run_is_recorded_once_and_recording_again_replaces_its_rows(runs, tmp_path):
    engine = open_metadb("sqlite:///" + str(tmp_path / "kopa.db"))
    first = record_bench_run(engine, runs["oracle"])
    assert (first.agent, first.n_tasks, first.n_episodes, first.complete, first.seeds, first.rollouts) == \
        ("oracle", 6, N_EPISODES, True, "0,1", 2)
    assert (first.pass_at_1, first.k, first.pass_at_k) == (1.0, 2, 1.0) and first.run_dir == str(runs["oracle"])
    assert first.ci_low == first.ci_high == 1.0 and first.tasks_sha256 and first.started_at is not None
    again = record_bench_run(engine, runs["oracle"])
    assert again.id == first.id
    assert (_count(engine, BenchRun), _count(engine, BenchEpisodeResult)) == (1, N_EPISODES)

    fp = record_bench_run(engine, runs["first-page"])
    rows = bench_episode_results(engine, fp.id)
    assert len(rows) == N_EPISODES and sum(r.passed for r in rows) == 16
    assert {r.domain for r in rows} == {"finance", "traffic"} and all(r.error is None for r in rows)
    assert [r.agent for r in recent_bench_runs(engine)][:2] in (["first-page", "oracle"], ["oracle", "first-page"])


def _env(tmp_path: Path, cassettes: Path) -> dict[str, str]:
    return {"KOPA_HOME": str(tmp_path / "home"), "KOPA_RECORDER__CASSETTES": str(cassettes),
            "KOPA_METADB__URL": "sqlite:///" + str(tmp_path / "kopa.db"), "COLUMNS": "250"}


def test_kopa_bench_run_records_the_run_and_a_resume_updates_the_same_row(pinned, tmp_path):
    cassettes, tasks_file, _ = pinned
    env = _env(tmp_path, cassettes)
    run_dir = tmp_path / "run"
    args = ["bench", "run", "--agent", "oracle", "--tasks", str(tasks_file), "--rollouts", "2", "--seeds", "1",
            "--run-dir", str(run_dir)]
    runner = CliRunner()
    done = runner.invoke(app, args, env=env)
    assert done.exit_code == 0, done.output
    engine = open_metadb(env["KOPA_METADB__URL"])
    (row,) = recent_bench_runs(engine)
    assert (row.n_episodes, row.complete, row.pass_at_1) == (12, True, 1.0)

    kept = (run_dir / EPISODES_FILE).read_text(encoding="utf-8").splitlines(keepends=True)
    (run_dir / EPISODES_FILE).write_text("".join(kept[:5]), encoding="utf-8")  # the run was interrupted
    resumed = runner.invoke(app, args, env=env)
    assert resumed.exit_code == 0, resumed.output
    assert "7 episode(s) run, 5 resumed" in resumed.stdout
    (again,) = recent_bench_runs(engine)
    assert again.id == row.id and (again.n_episodes, again.complete) == (12, True)
    assert (_count(engine, BenchRun), _count(engine, BenchEpisodeResult)) == (1, 12)


# ------------------------------------------------------------------------------------------------ CLI


def test_kopa_bench_report_writes_both_files_and_says_where(runs, tmp_path):
    done = CliRunner().invoke(app, ["bench", "report", str(runs["oracle"]), "--out", str(tmp_path / "out")])
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines() == [f"wrote {tmp_path / 'out' / REPORT_MD}", f"wrote {tmp_path / 'out' / REPORT_HTML}"]
    assert (tmp_path / "out" / REPORT_HTML).stat().st_size > 0


def test_kopa_bench_compare_prints_and_writes_the_comparison(runs, tmp_path, paging_tasks):
    out = tmp_path / "cmp.md"
    done = CliRunner().invoke(app, ["bench", "compare", str(runs["first-page"]), str(runs["oracle"]), "--out",
                                    str(out)])
    assert done.exit_code == 0, done.output
    assert "| pass@1 | 66.7 | 100.0 | +33.3 |" in done.stdout and paging_tasks[0] in done.stdout
    assert done.stdout.endswith(f"wrote {out}\n") and out.read_text(encoding="utf-8") in done.stdout


def test_kopa_bench_list_prints_the_recorded_runs(runs, tmp_path):
    env = _env(tmp_path, tmp_path)
    runner = CliRunner()
    empty = runner.invoke(app, ["bench", "list"], env=env)
    assert empty.exit_code == 0 and "no benchmark runs recorded" in empty.stdout
    engine = open_metadb(env["KOPA_METADB__URL"])
    for name in ("oracle", "first-page"):
        record_bench_run(engine, runs[name])
    listed = runner.invoke(app, ["bench", "list"], env={**env, "COLUMNS": "200"})
    assert listed.exit_code == 0, listed.output
    assert "oracle" in listed.stdout and "first-page" in listed.stdout and "66.7" in listed.stdout
    assert "[0,1] × 2" in listed.stdout
    # 80 columns (a console over SSH): the columns runs are compared by, none of them cut
    narrow = runner.invoke(app, ["bench", "list"], env={**env, "COLUMNS": "80"})
    assert narrow.exit_code == 0, narrow.output
    assert all(len(line) <= 80 for line in narrow.stdout.splitlines())
    assert "oracle" in narrow.stdout and "first-page" in narrow.stdout and "66.7" in narrow.stdout
    assert "…" not in narrow.stdout.split("\n", 2)[2]  # only the title may be shortened


@pytest.mark.parametrize(("args", "message"), [
    (["report", "{tmp}/nowhere"], "error: run directory {tmp}/nowhere does not exist"),
    (["report", "{tmp}"], "is not a benchmark run directory: it has no run.json"),
    (["compare", "{oracle}", "{tmp}/nowhere"], "error: run directory {tmp}/nowhere does not exist"),
])
def test_bad_inputs_end_with_a_one_line_error(runs, tmp_path, args, message):
    fill = {"tmp": str(tmp_path), "oracle": str(runs["oracle"])}
    done = CliRunner().invoke(app, ["bench", *(a.format(**fill) for a in args)])
    assert done.exit_code == 2
    assert message.format(**fill) in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
