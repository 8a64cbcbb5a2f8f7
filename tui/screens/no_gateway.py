"""Asked at start-up when the gateway named with ``--url`` does not answer: the operator chooses what the
console does (``--start`` / ``--no-start`` decide without asking). Dismissed with ``start``, ``wait`` or ``quit``."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option


class NoGatewayScreen(ModalScreen[str]):
    CSS_PATH = "no_gateway.tcss"
    BINDINGS = [
        Binding("s", "choose('start')", "Start in-process"),
        Binding("c,escape", "choose('wait')", "Continue"),
        Binding("q", "choose('quit')", "Quit"),
    ]

    def __init__(self, url: str, error: str) -> None:
        super().__init__()
        self.url, self.error = url, error

    def compose(self) -> ComposeResult:
        with Vertical(id="no-gateway-box"):
            yield Label(Text.assemble("No gateway answers at ", (self.url, "bold"), "\n", (self.error, "red")),
                        id="no-gateway-why")
            yield OptionList(
                Option("s  start an in-process gateway over the sandbox", id="start"),
                Option(f"c  continue without a gateway (keep retrying {self.url})", id="wait"),
                Option("q  quit", id="quit"),
                id="no-gateway-choices")

    @on(OptionList.OptionSelected, "#no-gateway-choices")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)
