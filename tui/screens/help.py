"""The help dialog: every view's keys on one page."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

KEYS = [
    ("everywhere", "1 g / 2 c / 3 b / 4 j", "Gateway / Cassettes / Bench / Jobs"),
    ("", "ctrl+p", "command palette"),
    ("", "? f1 · q", "this help · quit"),
    ("Gateway", "/ · l", "search tools (Korean or English) · live view"),
    ("", "enter · t", "try the highlighted tool through the gateway"),
    ("", "r", "poll the gateway now (it reconnects by itself too)"),
    ("Cassettes", "v · s · e", "verify · sign (Ed25519 key) · export (vcrpy)"),
    ("", "m · d", "mark a version · drift against the mark (or the parent)"),
    ("Bench", "enter", "the run's episodes and transcripts"),
    ("", "m · C", "mark run A · compare the highlighted run B with it"),
    ("", "n · x", "start a run (agent, tasks, seeds) · cancel it"),
    ("Jobs", "e · s · t", "EDGE graphs · datasets · training"),
    ("dialogs", "esc", "close / back"),
    ("start-up", "s · c · q", "--url does not answer: start the in-process gateway · continue · quit"),
    ("", "", "the footer shows the keys that act where you are"),
]


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "help.tcss"
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        table = Table("view", "keys", "does", box=None, title="KOPA console keys", title_justify="left")
        for row in KEYS:
            table.add_row(*row)
        with VerticalScroll(id="help-box"):
            yield Static(table)
