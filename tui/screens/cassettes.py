"""Cassettes view: bundle versions with parents, sizes, signatures and coverage; verify, sign, export;
drift between two versions (the selected one against its parent, or against a marked one)."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from recorder import CorruptBundleError
from recorder.signing import SignatureError

from ..sources import BundleRow
from .errors import ShowsWorkerErrors
from .drift import DriftScreen
from .prompt import PromptScreen

ACTION_ERRORS = (CorruptBundleError, SignatureError, LookupError, ValueError, OSError)
ROW_ACTIONS = {"verify", "sign", "export", "mark", "drift"}  # they act on the highlighted version


def size_text(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f}{unit}" if unit == "B" else f"{n:.1f}{unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


class CassettesScreen(ShowsWorkerErrors, Screen):
    CSS_PATH = "cassettes.tcss"
    BINDINGS = [
        Binding("v", "verify", "Verify"),
        Binding("s", "sign", "Sign"),
        Binding("e", "export", "Export"),
        Binding("m", "mark", "Mark"),
        Binding("d", "drift", "Drift"),
        Binding("r", "refresh", "Refresh"),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        yield DataTable(id="bundles", cursor_type="row", zebra_stripes=True)
        yield Static("", id="bundle-detail")
        yield Static("", id="bundle-status", classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        self.rows: list[BundleRow] = []
        self.marked: str | None = None
        self.query_one("#bundles", DataTable).add_columns("bundle", "parent", "created", "calls", "size", "sig",
                                                          "tools")
        self.action_refresh()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """With no version to act on, its keys are not offered (nor shown in the footer)."""
        return action not in ROW_ACTIONS or bool(getattr(self, "rows", None))

    def action_refresh(self) -> None:
        self.load()

    @work(exit_on_error=False, thread=True, exclusive=True, group="bundles")
    def load(self) -> None:
        rows = self.app.source.cassettes.rows()
        self.app.call_from_thread(self._show, rows)

    def _show(self, rows: list[BundleRow]) -> None:
        self.rows = rows
        table = self.query_one("#bundles", DataTable)
        keep = table.cursor_row  # a refresh after an action stays on the row acted on
        table.clear()
        for row in rows:
            name = f"{row.name}@{row.version[:8]}" + (" ●" if row.head else "")
            table.add_row(name, (row.parent or "—")[:8], row.created_at[:16].replace("T", " "), f"{row.interactions:,}",
                          size_text(row.size_bytes), "✓" if row.signed else "", str(row.tools), key=row.ref)
        table.border_title = f"{len(rows)} bundle versions"
        self.refresh_bindings()
        if rows:
            table.move_cursor(row=min(keep or 0, len(rows) - 1), animate=False)
            self._detail(rows[table.cursor_row])
        else:
            self.query_one("#bundle-detail", Static).update(self.app.source.empty_hint("cassettes"))

    def selected(self) -> BundleRow | None:
        table = self.query_one("#bundles", DataTable)
        if not self.rows or table.cursor_row is None:
            return None
        return self.rows[table.cursor_row]

    @on(DataTable.RowHighlighted, "#bundles")
    def _highlighted(self) -> None:
        if (row := self.selected()) is not None:
            self._detail(row)

    def _detail(self, row: BundleRow) -> None:
        platforms = ", ".join(f"{p} {n}" for p, n in row.platforms.items())
        mark = f"   marked: {self.marked}" if self.marked else ""
        where = "  (shipped with the appliance)" if row.shipped else ""
        self.query_one("#bundle-detail", Static).update(Text.assemble(
            (row.ref, "bold"), f"  parent {row.parent or '—'}{where}\nsource {row.source}  platforms: {platforms}\n",
            (f"note: {row.note}" if row.note else "", "dim"), (mark, "yellow")))

    def _status(self, text: str, error: bool = False) -> None:
        self.query_one("#bundle-status", Static).update(Text(text, style="red" if error else "green"))

    def action_verify(self) -> None:
        if (row := self.selected()) is not None:
            self._status(f"verifying {row.ref} …")
            self.verify(row.ref)

    @work(exit_on_error=False, thread=True, exclusive=True, group="bundle-action")
    def verify(self, ref: str) -> None:
        try:
            text, error = self.app.source.cassettes.verify(ref), False
        except ACTION_ERRORS as exc:
            text, error = f"{ref}: {exc}", True
        self.app.call_from_thread(self._status, text, error)

    def action_sign(self) -> None:
        if (row := self.selected()) is None:
            return

        def signed(key: str | None) -> None:
            if key:
                self.sign(row.ref, Path(key).expanduser())

        self.app.push_screen(PromptScreen(f"sign {row.ref} with Ed25519 private key (PEM path):"), signed)

    @work(exit_on_error=False, thread=True, exclusive=True, group="bundle-action")
    def sign(self, ref: str, key: Path) -> None:
        try:
            text, error = f"wrote {self.app.source.cassettes.sign(ref, key)}", False
        except ACTION_ERRORS as exc:
            text, error = f"{ref}: {exc}", True
        self.app.call_from_thread(self._status, text, error)
        self.app.call_from_thread(self.load)

    def action_export(self) -> None:
        if (row := self.selected()) is None:
            return
        default = str(self.app.source.home / "exports" / f"{row.name}-{row.version[:8]}.yaml")

        def chosen(out: str | None) -> None:
            if out:
                self.export(row.ref, Path(out).expanduser())

        self.app.push_screen(PromptScreen(f"export {row.ref} as a vcrpy cassette to:", default), chosen)

    @work(exit_on_error=False, thread=True, exclusive=True, group="bundle-action")
    def export(self, ref: str, out: Path) -> None:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            text, error = f"wrote {self.app.source.cassettes.export(ref, out)}", False
        except ACTION_ERRORS as exc:
            text, error = f"{ref}: {exc}", True
        self.app.call_from_thread(self._status, text, error)

    def action_mark(self) -> None:
        if (row := self.selected()) is not None:
            self.marked = None if self.marked == row.ref else row.ref
            self._detail(row)

    def action_drift(self) -> None:
        row = self.selected()
        if row is None:
            return
        old = self.marked if self.marked and self.marked != row.ref else (
            f"{row.name}@{row.parent}" if row.parent else None)
        if old is None:
            self._status(f"{row.ref} has no parent: mark another version (m) to compare with", error=True)
            return
        self.app.push_screen(DriftScreen(old, row.ref))
