"""Screens say what they know: drift's full versions, one-side queries and renamed fields; compare's warnings and
what to do about a gone run directory; the state of cancelled, incomplete and running runs, and a running run's
episodes as they come; a try pane that uses the terminal; a new-run dialog with labels and checks in words; and
how the Action column is averaged.

Tests that add runs or bundle versions build a home of their own: the session's pilot home is counted by others.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from textual.widgets import DataTable, Input, Label, Static

from appliance.bench_records import record_bench_run
from appliance.metadb import open_metadb
from recorder import CassetteStore
from tests.tui.conftest import SMALL_TASKS
from tests.tui.fixture_home import build_fixture_home
from tests.tui.test_pilot import console, text_of, until
from tui.screens.bench_compare import CompareScreen
from tui.screens.bench_episodes import EpisodesScreen
from tui.screens.bench_new_run import NewRunScreen
from tui.screens.drift import DriftScreen
from tui.screens.try_tool import TryToolScreen

V1, V2 = "tiny@e1c47ae14d1a5ec11719", "tiny@843452279ce3b98caf78"
RENAMED = "INDST_SPECL_CCCCL_EXST_YN → INDST_SPECL_CLASS_EXST_YN"


def cells(table: DataTable) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def column(table: DataTable, name: str) -> list[str]:
    index = [str(c.label) for c in table.ordered_columns].index(name)
    return [row[index] for row in cells(table)]


async def test_drift_shows_full_versions_the_renamed_field_and_the_queries_on_one_side(tmp_path: Path):
    home = build_fixture_home(tmp_path / "home")
    store = CassetteStore(home.cassettes_dir)
    # two more versions: v1 without the law queries, v2 without the gg ones
    no_law = store.write("tiny", [i for i in store.open(V1).interactions() if i.platform != "law"],
                         parent=V1.split("@")[1], move_head=False)
    no_gg = store.write("tiny", [i for i in store.open(V2).interactions() if i.platform != "gg"],
                        parent=V2.split("@")[1], move_head=False)
    app = console(home, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await app.push_screen(DriftScreen(V1, V2))
        summary = app.screen.query_one("#drift-summary", Static)
        await until(pilot, lambda: "queries on both sides" in text_of(summary))
        assert f"{V1} → {V2}" in text_of(summary)  # every character of both ids
        assert f"renamed in edu search_school_info: {RENAMED}" in text_of(summary)
        tools = app.screen.query_one("#drift-tools", DataTable)
        renamed = [row for row in cells(tools) if row[2] == "field_renamed"]
        assert renamed == [["edu", "search_school_info", "field_renamed", "1", RENAMED]]
        assert ["edu", "search_school_info", "field_added", "1", "SCHUL_KND_SC_CODE"] in cells(tools)
        assert not app.screen.query_one("#drift-one-side").display  # none on one side: no empty table

        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, DriftScreen))
        await app.push_screen(DriftScreen(f"tiny@{no_law.version}", f"tiny@{no_gg.version}"))
        summary = app.screen.query_one("#drift-summary", Static)
        await until(pilot, lambda: "queries on both sides" in text_of(summary))
        assert "1 only in old, 1 only in new" in text_of(summary)
        one_side = app.screen.query_one("#drift-one-side", DataTable)
        assert one_side.display
        rows = cells(one_side)
        assert [(r[0], r[1], r[2]) for r in rows] == [("old", "gg", "gg_aed_location"), ("new", "law", "search_laws")]
        assert rows[0][3].startswith("gg:/AEDLocation?") and rows[1][3].startswith("law:/lawSearch.do?")
        assert "1 only in old, 1 only in new" in str(one_side.border_title)


def _incomplete_run(home, source: Path) -> Path:
    """A copy of a finished run that stopped after three episodes (as a run cancelled in an earlier session)."""
    run_dir = home.home_dir / "runs" / "stopped"
    shutil.copytree(source, run_dir)
    meta = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    meta.update(complete=False, finished_at=None, started_at="2026-12-03T10:00:00+00:00")
    (run_dir / "run.json").write_text(json.dumps(meta), encoding="utf-8")
    lines = (run_dir / "episodes.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (run_dir / "episodes.jsonl").write_text("".join(lines[:3]), encoding="utf-8")
    engine = open_metadb(home.metadb_url)
    try:
        record_bench_run(engine, run_dir)
    finally:
        engine.dispose()
    return run_dir


async def test_compare_lists_its_warnings_and_a_gone_directory_in_the_consoles_words(tmp_path: Path):
    home = build_fixture_home(tmp_path / "home")
    _incomplete_run(home, home.home_dir / "runs" / "oracle")
    app = console(home, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("b")
        bench = app.screen
        runs = bench.query_one("#runs", DataTable)
        await until(pilot, lambda: runs.row_count == 3)
        stopped, first_page, oracle = bench.runs
        comparison = app.source.records.compare(oracle, stopped)
        assert len(comparison.warnings) >= 2  # tasks with episodes differ; B is incomplete
        await app.push_screen(CompareScreen(oracle, stopped))
        title = app.screen.query_one("#cmp-title", Static)
        await until(pilot, lambda: "common tasks" in text_of(title))
        assert f"{len(comparison.warnings)} warning(s)" in text_of(title)
        shown = text_of(app.screen.query_one("#cmp-warnings", Static))
        assert app.screen.query_one("#cmp-warnings-box").display
        assert all(f"• {w}" in shown for w in comparison.warnings)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is bench)

        shutil.rmtree(first_page.run_dir)  # moved away after the run
        await app.push_screen(CompareScreen(oracle, first_page))
        title = app.screen.query_one("#cmp-title", Static)
        await until(pilot, lambda: "cannot compare" in text_of(title))
        assert f"B = run {first_page.id}'s directory {first_page.run_dir} is gone" in text_of(title)
        assert "Mark (m) and compare (C)" in text_of(title) and "--run-dir" not in text_of(title)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is bench)

        # the bench view's per-domain panel says the same, not "no episodes yet", of a run with 8 episodes
        runs.move_cursor(row=1)
        bench.load_domains(first_page)
        await until(pilot, lambda: "is gone" in str(bench.query_one("#domains").content))
        assert str(bench.query_one("#domains").content).startswith(f"run {first_page.id}'s directory")


async def test_runs_show_their_state_and_a_running_runs_episodes_refresh(tmp_path: Path):
    home = build_fixture_home(tmp_path / "home")
    _incomplete_run(home, home.home_dir / "runs" / "oracle")
    app = console(home, None, poll_s=0.2)  # a polling console, as an operator's is
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("b")
        bench = app.screen
        runs = bench.query_one("#runs", DataTable)
        await until(pilot, lambda: runs.row_count == 3)
        assert column(runs, "episodes")[0] == "3/8" and column(runs, "state") == ["incomplete", "finished",
                                                                                  "finished"]
        assert "solved tasks only" in str(runs.border_subtitle)  # how the run-level Action is averaged

        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, NewRunScreen))
        app.screen.query_one("#run-tasks", Input).value = str(SMALL_TASKS)
        app.screen.query_one("#run-seeds", Input).value = "2000"
        app.screen.query_one("#run-rollouts", Input).value = "4"
        # 16,000 oracle episodes: still running when cancelled on any machine (800 finished in ~10 s on a fast one)
        await pilot.press("enter")
        await until(pilot, lambda: bench.job is not None and runs.row_count == 4, timeout_s=60)
        await until(pilot, lambda: column(runs, "state")[0] == "running")
        await pilot.press("home", "enter")  # the running run's episodes
        await until(pilot, lambda: isinstance(app.screen, EpisodesScreen))
        episodes = app.screen.query_one("#episodes", DataTable)
        await until(pilot, lambda: episodes.row_count > 0, timeout_s=30)
        seen = episodes.row_count
        await until(pilot, lambda: episodes.row_count > seen, timeout_s=30)  # re-read while it runs
        assert "running" in str(episodes.border_title)
        assert "solved tasks only" in str(episodes.border_subtitle)
        assert bench.job is not None, "the run ended before it could be cancelled"
        await pilot.press("escape", "x")
        label = bench.query_one("#job-label", Static)
        await until(pilot, lambda: text_of(label).startswith("cancelled"), timeout_s=60)
        await until(pilot, lambda: column(runs, "state")[0] == "cancelled")
        done, total = column(runs, "episodes")[0].split("/")
        assert total == "16000" and 0 < int(done) < 16000  # not "…" as if it were still running
        await pilot.press("home", "enter")
        await until(pilot, lambda: isinstance(app.screen, EpisodesScreen))
        episodes = app.screen.query_one("#episodes", DataTable)
        await until(pilot, lambda: episodes.row_count == int(done))
        assert "cancelled" in str(episodes.border_title)


async def test_the_try_dialogs_result_pane_grows_with_the_terminal(pilot_home):
    heights = {}
    for size in ((80, 24), (160, 48)):
        app = console(pilot_home, None)
        async with app.run_test(size=size) as pilot:
            await pilot.press("slash", *"지하철역 정보", "enter")
            await until(pilot, lambda: bool(app.screen.hits))
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, TryToolScreen))
            await pilot.pause()
            heights[size] = app.screen.query_one("#try-result-box").region.height
    assert heights[(80, 24)] >= 5
    assert heights[(160, 48)] >= heights[(80, 24)] + 20  # the 24 more lines go to the result


async def test_the_new_run_dialog_labels_its_fields_and_says_what_is_wrong_in_words(pilot_home):
    app = console(pilot_home, None)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("b", "n")
        await until(pilot, lambda: isinstance(app.screen, NewRunScreen))
        dialog = app.screen
        assert [str(label.render()) for label in dialog.query(".run-label").results(Label)] == [
            "agent", "task file", "seeds", "rollouts"]
        error = dialog.query_one("#run-error", Label)
        rollouts = dialog.query_one("#run-rollouts", Input)
        rollouts.focus()
        await pilot.press("backspace", "x", "enter")
        await pilot.pause()
        assert app.screen is dialog  # not started
        assert str(error.render()) == "rollouts must be a whole number ≥ 1"
        assert rollouts.has_class("-invalid")
        await pilot.press("backspace", "0", "enter")
        await pilot.pause()
        assert str(error.render()) == "rollouts must be a whole number ≥ 1"
        await pilot.press("backspace", "2")
        await pilot.pause()
        assert str(error.render()) == ""  # mended: the words go
        dialog.query_one("#run-seeds", Input).value = "a,b"
        dialog.query_one("#run-tasks", Input).value = "/nowhere/tasks.jsonl"
        await pilot.press("enter")
        await pilot.pause()
        words = str(error.render()).splitlines()
        assert words[0] == "task file /nowhere/tasks.jsonl: no such file"
        assert words[1].startswith("seeds 'a,b': give a count") and "--seeds" not in words[1]
        assert app.screen is dialog
