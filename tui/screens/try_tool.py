"""The "try it" dialog: one field per input parameter of a tool, called through the gateway over MCP."""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from ..sources import GatewayError
from .errors import ShowsWorkerErrors

RESULT_CHARS = 4000  # a big page is cut here: the operator sees its shape, not all of it


def parse_arguments(schema: dict[str, Any], values: dict[str, str]) -> dict[str, Any]:
    """Typed arguments from the form's text fields; an empty field is left out.

    Raises:
        ValueError: a field that its schema types as a number or boolean holds something else.
    """
    out: dict[str, Any] = {}
    for name, text in values.items():
        text = text.strip()
        if not text:
            continue
        kind = schema.get("properties", {}).get(name, {}).get("type")
        try:
            if kind == "integer":
                out[name] = int(text)
            elif kind == "number":
                out[name] = float(text)
            elif kind == "boolean":
                out[name] = {"true": True, "false": False}[text.lower()]
            else:
                out[name] = text
        except (ValueError, KeyError):
            raise ValueError(f"{name}: {text!r} is not a {kind}") from None
    return out


class TryToolScreen(ShowsWorkerErrors, ModalScreen[None]):
    CSS_PATH = "try_tool.tcss"
    BINDINGS = [Binding("escape", "dismiss", "Close"), Binding("ctrl+r", "call", "Call")]

    def __init__(self, tool: str, schema: dict[str, Any]) -> None:
        super().__init__()
        self.tool, self.schema = tool, schema

    def compose(self) -> ComposeResult:
        required = set(self.schema.get("required", []))
        with Vertical(id="try-box"):
            yield Label(Text.assemble(("try ", "dim"), (self.tool, "bold"), ("  (ctrl+r calls, esc closes)", "dim")))
            with VerticalScroll(id="try-fields"):
                for name, prop in self.schema.get("properties", {}).items():
                    star = "*" if name in required else ""
                    yield Input(placeholder=f"{name}{star} ({prop.get('type', 'string')}) "
                                            f"{prop.get('description', '')}"[:70],
                                id=f"arg-{name}", name=name, classes="arg")
            yield Button("Call", id="try-call", variant="primary")
            with VerticalScroll(id="try-result-box"):
                yield Static("", id="try-result")

    def show_error(self, text: str) -> None:
        """In the result pane: the operator is looking there."""
        self.query_one("#try-result", Static).update(Text(f"gateway: {text}", style="red"))

    def values(self) -> dict[str, str]:
        return {str(i.name): i.value for i in self.query(".arg").results(Input)}

    @on(Button.Pressed, "#try-call")
    @on(Input.Submitted, ".arg")
    def action_call(self) -> None:
        try:
            arguments = parse_arguments(self.schema, self.values())
        except ValueError as exc:
            self.query_one("#try-result", Static).update(Text(str(exc), style="red"))
            return
        self.query_one("#try-result", Static).update(Text(f"calling {self.tool} …", style="dim"))
        self.call(arguments)

    @work(exit_on_error=False, exclusive=True, group="try")
    async def call(self, arguments: dict[str, Any]) -> None:
        try:
            outcome = await self.app.source.gateway.call_tool(self.tool, arguments)
        except (GatewayError, RuntimeError) as exc:  # down, refused, timed out, or none attached
            self.show_error(self.app.describe_error(exc))
            return
        body = json.dumps(outcome.structured, ensure_ascii=False, indent=1) if outcome.structured else outcome.text
        head = f"{'error' if outcome.is_error else 'ok'} · {outcome.ms:.0f} ms"
        if outcome.structured:
            head += f" · {outcome.structured.get('outcome', '?')}"
        self.query_one("#try-result", Static).update(
            Text.assemble((head + "\n", "red" if outcome.is_error else "green"), body[:RESULT_CHARS]))
