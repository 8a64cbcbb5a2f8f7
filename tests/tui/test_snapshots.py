"""Every view of the console at 80×24 on the fixture home, compared with the committed SVG snapshots.

Regenerate after a deliberate change: ``pytest tests/tui/test_snapshots.py --snapshot-update``, then read the
SVGs under ``__snapshots__/`` before committing them.
"""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Input

SIZE = (80, 24)
SETTLE_TRIES = 60  # repaints, 50 ms or more apart, before a screen that keeps changing fails the test


async def settle(pilot: Pilot) -> None:
    """Let every worker finish and the screen repaint until two pictures in a row agree. A DataTable sizes its
    columns to new rows on idle cycles after the rows arrive, and on a busy machine a fixed number of idle
    turns was not always enough (a column stayed at its header's width; once in CI the jobs view differed)."""
    previous = None
    for _ in range(SETTLE_TRIES):
        await pilot.pause(0.05)
        await pilot.app.workers.wait_for_complete()
        for field in pilot.app.screen.query(Input):  # a blinking cursor would make no two pictures agree for long
            field.cursor_blink = False
        await pilot.pause()
        picture = pilot.app.export_screenshot()
        if picture == previous:
            return
        previous = picture
    raise AssertionError(f"the screen kept changing for {SETTLE_TRIES} repaints")


def press_then_settle(*keys: str):
    async def run(pilot: Pilot) -> None:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)

    return run


def test_gateway_view_without_a_gateway_shows_the_audit_tail(snap_compare, make_snapshot_app):
    assert snap_compare(make_snapshot_app(), terminal_size=SIZE, run_before=press_then_settle())


def test_gateway_tool_search_in_korean_shows_a_schema(snap_compare, make_snapshot_app):
    assert snap_compare(make_snapshot_app(), terminal_size=SIZE,
                        run_before=press_then_settle("slash", *"전환사채 발행", "enter"))


def test_try_it_dialog_has_a_field_per_parameter(snap_compare, make_snapshot_app):
    assert snap_compare(make_snapshot_app(), terminal_size=SIZE,
                        run_before=press_then_settle("slash", *"지하철역", "enter", "enter"))


def test_cassettes_view_lists_versions(snap_compare, make_snapshot_app):
    assert snap_compare(make_snapshot_app(), terminal_size=SIZE, run_before=press_then_settle("c"))


def test_drift_view_between_two_versions(snap_compare, make_snapshot_app):
    assert snap_compare(make_snapshot_app(), terminal_size=SIZE, run_before=press_then_settle("c", "down", "d"))


def test_bench_view_lists_runs_with_domain_bars(snap_compare, make_snapshot_app):
    assert snap_compare(make_snapshot_app(), terminal_size=SIZE, run_before=press_then_settle("b"))


def test_bench_episodes_with_a_transcript(snap_compare, make_snapshot_app):
    assert snap_compare(make_snapshot_app(), terminal_size=SIZE, run_before=press_then_settle("b", "enter"))


def test_bench_compare_two_runs(snap_compare, make_snapshot_app):
    assert snap_compare(make_snapshot_app(), terminal_size=SIZE,
                        run_before=press_then_settle("b", "down", "m", "up", "C"))


def test_bench_new_run_dialog(snap_compare, make_snapshot_app):
    assert snap_compare(make_snapshot_app(), terminal_size=SIZE, run_before=press_then_settle("b", "n"))


def test_jobs_view_edge_graph_with_figure_4(snap_compare, make_snapshot_app):
    assert snap_compare(make_snapshot_app(), terminal_size=SIZE, run_before=press_then_settle("j"))


def test_jobs_view_dataset_funnel_and_table_12(snap_compare, make_snapshot_app):
    assert snap_compare(make_snapshot_app(), terminal_size=SIZE, run_before=press_then_settle("j", "s"))


def test_jobs_view_training_steps(snap_compare, make_snapshot_app):
    assert snap_compare(make_snapshot_app(), terminal_size=SIZE, run_before=press_then_settle("j", "t"))


def test_help_screen(snap_compare, make_snapshot_app):
    assert snap_compare(make_snapshot_app(), terminal_size=SIZE, run_before=press_then_settle("question_mark"))
