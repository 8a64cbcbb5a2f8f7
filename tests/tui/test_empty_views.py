"""Empty views say what they read and how to fill it; a fresh home shows the bundles shipped with the
appliance; and a key that would do nothing where the operator is is not offered there (nor in the footer)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static, TabbedContent

from appliance.config import KopaSettings
from bench.taskset.build import DEFAULT_CASSETTES
from recorder import CassetteStore
from tests.tui.test_pilot import SIZE, console, text_of, until
from tui.sources import Cassettes


TABLES = {"graphs": "graph-runs", "datasets": "dataset-runs", "training": "train-runs"}


def keys(app) -> set[str]:
    """The keys the current screen offers (what its footer shows, hidden app keys aside)."""
    return set(app.screen.active_bindings)


async def test_a_fresh_home_shows_the_shipped_bundles_and_says_where_they_are_from(tmp_path: Path):
    app = console(KopaSettings(home=tmp_path / "fresh"), None)
    shipped = CassetteStore(DEFAULT_CASSETTES)
    versions = [m.version for n in shipped.names() for m in shipped.versions(n)]
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        table = app.screen.query_one("#bundles", DataTable)
        await until(pilot, lambda: table.row_count == len(versions) > 0)
        assert [r.version for r in app.screen.rows] == versions and all(r.shipped for r in app.screen.rows)
        assert "(shipped with the appliance)" in text_of(app.screen.query_one("#bundle-detail", Static))
        assert {"v", "s", "e", "m", "d"} <= keys(app)
    # the shipped bundle opens through the same store the drift view uses
    head = shipped.head("kopa-default")
    assert app.source.cassettes.store.resolve("kopa-default").folder == DEFAULT_CASSETTES / "kopa-default" / head


async def test_no_bundles_anywhere_names_the_folders_and_offers_no_bundle_keys(tmp_path: Path):
    settings = KopaSettings(home=tmp_path / "fresh")
    app = console(settings, None)
    app.source.cassettes = Cassettes(settings.cassettes_dir, shipped=tmp_path / "none-shipped")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        detail = app.screen.query_one("#bundle-detail", Static)
        await until(pilot, lambda: "no bundle versions" in text_of(detail))
        said = text_of(detail)
        assert str(settings.cassettes_dir) in said and str(tmp_path / "none-shipped") in said
        assert "kopa record --tasks FILE --bundle NAME" in said
        assert not {"v", "s", "e", "m", "d"} & keys(app) and "r" in keys(app)
        await pilot.press("v", "d")  # nothing happens, and nothing breaks
        assert text_of(app.screen.query_one("#bundle-status", Static)) == "" and app.is_running


async def test_empty_jobs_tabs_name_what_they_read_and_the_kopa_command(tmp_path: Path):
    settings = KopaSettings(home=tmp_path / "fresh")
    app = console(settings, None)
    expected = {"graphs": (settings.home_dir / "edge" / "graphs", "kopa edge graph build"),
                "datasets": (settings.home_dir / "edge" / "datasets", "kopa edge synth --graph RUN"),
                "training": (settings.home_dir / "kopa.db", "kopa train sft")}
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("j")
        for tab, key in (("graphs", "e"), ("datasets", "s"), ("training", "t")):
            await pilot.press(key)
            hint = app.screen.query_one(f"#{tab}-empty", Static)
            await until(pilot, lambda: hint.display)  # noqa: B023 - awaited here, in this iteration
            where, command = expected[tab]
            assert str(where) in text_of(hint) and command in text_of(hint), text_of(hint)
            assert hint.region.height > 0  # shown, in place of the empty table
            assert not app.screen.query_one(f"#{TABLES[tab]}", DataTable).display


async def test_a_jobs_tab_key_is_not_offered_on_its_own_tab(pilot_home):
    app = console(pilot_home, None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("j")
        await pilot.pause()
        assert {"s", "t"} <= keys(app) and "e" not in keys(app)
        await pilot.press("s")
        await until(pilot, lambda: app.screen.query_one(TabbedContent).active == "datasets")
        await pilot.pause()
        assert {"e", "t"} <= keys(app) and "s" not in keys(app)
        assert not app.screen.query_one("#graphs-empty", Static).display  # a home with runs shows no hint


async def test_gateway_offers_live_only_off_live_and_try_it_only_with_a_tool(pilot_home):
    app = console(pilot_home, None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "l" not in keys(app) and "t" not in keys(app) and "slash" in keys(app)
        await pilot.press("slash", *"버스", "enter")
        await until(pilot, lambda: bool(app.screen.hits))
        await pilot.pause()
        assert {"l", "t"} <= keys(app)
        await pilot.press("l")
        await pilot.pause()
        assert "l" not in keys(app) and "t" not in keys(app)


async def test_no_benchmark_runs_names_the_database_and_how_to_start_one(tmp_path: Path):
    settings = KopaSettings(home=tmp_path / "fresh")
    app = console(settings, None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("b")
        chart = app.screen.query_one("#domains", Static)
        await until(pilot, lambda: "no benchmark runs" in text_of(chart))
        said = text_of(chart)
        assert str(settings.home_dir / "kopa.db") in said and "kopa bench run --agent oracle" in said, said
