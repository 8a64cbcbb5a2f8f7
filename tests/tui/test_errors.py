"""The console in an operator's hands: a gateway that is down or refuses the token, a data source that fails,
and a crash. None of them ends the console silently, and the token is shown and written nowhere."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pydantic import SecretStr
from textual.widgets import Static

from tests.tui.test_pilot import SIZE, text_of, until
from tui import ApplianceSource, KopaConsole, LocalGateway
from tui.sources import GatewayEndpoint
from tui.screens.try_tool import TryToolScreen

TOKEN = "kopa-test-token-3f9a1c77e2"  # long enough to be unmistakable in any file or screen
DEAD_URL = "http://127.0.0.1:9"  # discard port: nothing listens


def files_holding(root: Path, secret: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


async def try_a_tool(app: KopaConsole, pilot) -> str:
    """Open "try it" on search_subway_stations, call it, and return what the result pane then says."""
    tool = "search_subway_stations"
    app.push_screen(TryToolScreen(tool, app.source.search.schema(tool)))
    await until(pilot, lambda: isinstance(app.screen, TryToolScreen))
    await pilot.press("ctrl+r")
    result = app.screen.query_one("#try-result", Static)
    await until(pilot, lambda: text_of(result).startswith(("ok", "error", "gateway")), timeout_s=30)
    return text_of(result)


async def test_calling_a_tool_while_the_gateway_is_down_says_so_and_the_console_goes_on(pilot_home, tmp_path):
    app = KopaConsole(ApplianceSource.from_settings(pilot_home, GatewayEndpoint(DEAD_URL, SecretStr(TOKEN))),
                      poll_s=None)
    async with app.run_test(size=SIZE) as pilot:
        said = await try_a_tool(app, pilot)
        assert said == f"gateway: {DEAD_URL}/mcp: not answering (ConnectError); is the gateway running there?"
        assert app.is_running and app.return_code is None
        await pilot.press("escape")  # and the console is still usable
        assert not isinstance(app.screen, TryToolScreen) and app.current_mode == "gateway"
        assert TOKEN not in app.export_screenshot()
    assert files_holding(pilot_home.home_dir, TOKEN) == [] and files_holding(tmp_path, TOKEN) == []


async def test_calling_a_tool_with_a_token_the_gateway_refuses_says_so_and_shows_no_token(pilot_home, tmp_path,
                                                                                         gateway: LocalGateway):
    app = KopaConsole(ApplianceSource.from_settings(pilot_home, GatewayEndpoint(gateway.endpoint.url,
                                                                                SecretStr(TOKEN))), poll_s=None)
    async with app.run_test(size=SIZE) as pilot:
        said = await try_a_tool(app, pilot)
        assert said == (f"gateway: {gateway.endpoint.url}/mcp refused the token (HTTP 401): give the gateway's "
                        "token with --token or KOPA_TUI_TOKEN")
        assert app.is_running
        screen = app.export_screenshot()
        assert TOKEN not in screen and gateway.endpoint.token.get_secret_value() not in screen
    assert files_holding(pilot_home.home_dir, TOKEN) == [] and files_holding(tmp_path, TOKEN) == []


async def test_a_data_source_that_fails_is_a_message_in_the_view_and_the_console_goes_on(pilot_home, monkeypatch):
    app = KopaConsole(ApplianceSource.from_settings(pilot_home, GatewayEndpoint(DEAD_URL, SecretStr(TOKEN))),
                      poll_s=None)

    def broken() -> list:
        raise OSError(f"cannot read the cassettes folder (token {TOKEN} in the text)")

    monkeypatch.setattr(app.source.cassettes, "rows", broken)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await until(pilot, lambda: any("cassettes folder" in n.message for n in app._notifications))
        assert app.is_running and app.current_mode == "cassettes"
        [note] = [n for n in app._notifications if "cassettes folder" in n.message]
        assert note.message == "OSError: cannot read the cassettes folder (token •••••• in the text)"
        assert note.severity == "error"
        await pilot.press("g")  # the other views still work
        assert app.current_mode == "gateway"


CRASH = """
import sys
from pathlib import Path
from pydantic import SecretStr
import tui.app
from appliance.config import KopaSettings
from tui import ApplianceSource, KopaConsole
from tui.app import run_app
from tui.sources import GatewayEndpoint

def send(token):
    headers = {"Authorization": f"Bearer {token}"}  # what Textual's traceback used to print
    raise RuntimeError("the console broke")

class Crashing(KopaConsole):
    CSS_PATH = str(Path(tui.app.__file__).with_name("app.tcss"))  # relative paths are read beside this file

    def on_mount(self):
        send(self.source.endpoint.token.get_secret_value())

endpoint = GatewayEndpoint("http://127.0.0.1:9", SecretStr(sys.argv[2]))
run_app(Crashing(ApplianceSource.from_settings(KopaSettings(home=sys.argv[1]), endpoint), poll_s=None),
        headless=True)
"""


def test_a_crash_writes_a_report_without_locals_or_token_prints_its_path_and_exits_non_zero(tmp_path):
    script = tmp_path / "crash.py"  # a file: Textual reads an App subclass's source file
    script.write_text(CRASH)
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "home"), TOKEN], capture_output=True,
                          text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 1
    assert "The KOPA console stopped on an error: RuntimeError: the console broke" in done.stderr
    [report] = (tmp_path / "home" / "logs").glob("tui-crash-*.txt")
    assert str(report) in done.stderr.replace("\n", "")
    text = report.read_text()
    assert "RuntimeError: the console broke" in text and "in send" in text  # the frames are there
    assert "'Bearer " not in text and "'Authorization'" not in text  # their locals are not
    assert TOKEN not in text and TOKEN not in done.stderr and TOKEN not in done.stdout
    assert files_holding(tmp_path / "home", TOKEN) == []
