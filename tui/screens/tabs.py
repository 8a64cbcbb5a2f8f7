"""Switching a ``TabbedContent`` from a key, whatever is focused."""

from __future__ import annotations

from textual.widgets import DataTable, TabbedContent, TabPane


def show_tab(tabs: TabbedContent, tab: str) -> None:
    """Make ``tab`` active and focus its first table (or nothing).

    Setting ``active`` alone is undone when the focused widget sits in another pane: Textual keeps the pane of
    the focused widget showing. So focus leaves it first.
    """
    pane = tabs.get_pane(tab)
    assert isinstance(pane, TabPane)
    tables = [t for t in pane.query(DataTable) if t.focusable]
    if tables:
        tables[0].focus()
    else:
        tabs.screen.set_focus(None)
    tabs.active = tab
