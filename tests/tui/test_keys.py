"""Keys in an operator's hands: Esc leaves an input, text typed into an input never triggers a binding, and a
view's footer keys work from each of its tabs."""

from __future__ import annotations

from textual.widgets import DataTable, Input, TabbedContent

from tests.tui.test_pilot import SIZE, console, until


async def test_footer_keys_work_from_every_tab_of_the_gateway_view(pilot_home):
    app = console(pilot_home, None)
    async with app.run_test(size=SIZE) as pilot:
        tabs = app.screen.query_one(TabbedContent)
        await pilot.press("slash", *"버스", "enter")
        await until(pilot, lambda: bool(app.screen.hits))
        assert tabs.active == "tools" and isinstance(app.focused, DataTable)
        await pilot.press("l")
        assert tabs.active == "live"
        await pilot.press("slash")
        assert tabs.active == "tools" and app.focused.id == "tool-query"
        await pilot.press("escape", "l")  # from the query field: Esc first, then the key
        assert tabs.active == "live"
        tabs.active = "tools"  # with the mouse: the tab itself
        await pilot.pause()
        app.screen.query_one("#tool-hits", DataTable).focus()
        await pilot.press("l")
        assert tabs.active == "live"


async def test_digits_and_q_typed_into_an_input_stay_text_and_esc_leaves_it(pilot_home):
    app = console(pilot_home, None)
    async with app.run_test(size=SIZE) as pilot:
        field = app.screen.query_one("#f-platform", Input)
        field.focus()
        await pilot.press(*"1234q")
        assert field.value == "1234q"
        assert app.current_mode == "gateway" and app.is_running  # no view switched, no quit
        await pilot.press("escape")
        assert not isinstance(app.focused, Input) and field.value == "1234q"
        await pilot.press("2")  # out of the field, the keys are the view's again
        assert app.current_mode == "cassettes"


async def test_esc_in_a_dialogs_field_closes_the_dialog(pilot_home):
    app = console(pilot_home, None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("b", "n")
        await until(pilot, lambda: app.screen.query("#run-seeds"))
        app.screen.query_one("#run-seeds", Input).focus()
        await pilot.press(*"12", "escape")
        await until(pilot, lambda: app.current_mode == "bench" and not app.screen.query("#run-seeds"))
