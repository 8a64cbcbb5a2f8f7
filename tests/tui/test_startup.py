"""`kopa tui` when its gateway does not answer: never a silent replacement. An explicit --url that does not
answer asks the operator (start in-process / continue / quit); --start and --no-start decide without asking;
with no --url the console starts its own and says so. Starting it shows each real step as it begins."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from appliance.config import KopaSettings
from tests.conftest import TEST_DATA_DIR, TEST_SCALE
from tests.tui.test_errors import DEAD_URL, TOKEN, files_holding
from tests.tui.test_pilot import SIZE, text_of, until
from tui import LocalGateway
from tui.cli import make_console
from tui.screens.no_gateway import NoGatewayScreen

DEAD_ERROR = f"{DEAD_URL}/healthz: ConnectError"


@pytest.fixture
def world_home(tmp_path: Path, pilot_home: KopaSettings) -> KopaSettings:
    """A home of its own (audit log, DB) whose worlds/ is the test world: the in-process gateway starts in seconds
    and writes nothing into the shared test data."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "worlds").symlink_to(TEST_DATA_DIR / "worlds", target_is_directory=True)
    return pilot_home.model_copy(update={"home": home,
                                         "sandbox": pilot_home.sandbox.model_copy(update={"scale": TEST_SCALE})})


def note_of(app) -> str:
    return text_of(app.screen.query_one("#gw-note", Static))


def test_flags_decide_without_asking(pilot_home):
    ask = make_console(pilot_home, url=DEAD_URL, token=TOKEN, start=None, poll_s=None)
    assert ask.unanswered is not None and ask.unanswered.ask and not ask.start_local
    assert ask.unanswered.url == DEAD_URL and ask.unanswered.error == DEAD_ERROR
    start = make_console(pilot_home, url=DEAD_URL, token=TOKEN, start=True, poll_s=None)
    assert not start.unanswered.ask and start.start_local and start.source.endpoint is None
    wait = make_console(pilot_home, url=DEAD_URL, token=TOKEN, start=False, poll_s=None)
    assert not wait.unanswered.ask and not wait.start_local and wait.source.endpoint.url == DEAD_URL


async def test_an_answering_url_is_attached_without_a_question(pilot_home, gateway: LocalGateway):
    app = make_console(pilot_home, url=gateway.endpoint.url, token=gateway.endpoint.token.get_secret_value(),
                       start=None, poll_s=0.2)
    assert app.unanswered is None and app.source.endpoint.url == gateway.endpoint.url
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.gateway_state == "connected")
        assert not isinstance(app.screen, NoGatewayScreen) and note_of(app) == ""


async def test_an_explicit_url_that_does_not_answer_asks_and_continue_keeps_retrying_it(pilot_home, tmp_path):
    app = make_console(pilot_home, url=DEAD_URL, token=TOKEN, start=None, poll_s=0.2)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, NoGatewayScreen))
        asked = text_of(app.screen.query_one("#no-gateway-why", Static))
        assert DEAD_URL in asked and DEAD_ERROR in asked  # which URL, what error
        assert TOKEN not in app.export_screenshot()
        await pilot.press("c")
        await until(pilot, lambda: not isinstance(app.screen, NoGatewayScreen))
        assert app.source.endpoint.url == DEAD_URL and app.local is None  # nothing started behind its back
        await until(pilot, lambda: app.gateway_state == "disconnected" and DEAD_URL in app.sub_title)
        assert note_of(app).startswith(f"{DEAD_URL} did not answer ({DEAD_ERROR}): the console keeps retrying it")
        assert TOKEN not in app.export_screenshot()
    assert files_holding(pilot_home.home_dir, TOKEN) == [] and files_holding(tmp_path, TOKEN) == []


async def test_an_explicit_url_that_does_not_answer_then_quit(pilot_home):
    app = make_console(pilot_home, url=DEAD_URL, token=TOKEN, start=None, poll_s=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, NoGatewayScreen))
        await pilot.press("q")
        await until(pilot, lambda: not app.is_running)
    assert app.return_code == 0 and app.local is None


async def test_no_start_says_it_keeps_retrying(pilot_home):
    app = make_console(pilot_home, url=DEAD_URL, token=TOKEN, start=False, poll_s=None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert not isinstance(app.screen, NoGatewayScreen)
        assert note_of(app) == (f"{DEAD_URL} did not answer ({DEAD_ERROR}): the console keeps retrying it "
                                "(--no-start: no in-process gateway)")
        assert any(DEAD_URL in n.message for n in app._notifications)


async def test_choosing_start_shows_each_start_up_step_as_it_happens(world_home):
    app = make_console(world_home, url=DEAD_URL, token=TOKEN, start=None, poll_s=0.2)
    notes: list[str] = []
    titles: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        app.watch(app, "gateway_note", lambda note: notes.append(note), init=False)
        app.watch(app, "sub_title", lambda title: titles.append(title), init=False)
        await until(pilot, lambda: isinstance(app.screen, NoGatewayScreen))
        await pilot.press("s")
        await until(pilot, lambda: app.gateway_state == "connected", timeout_s=90)
        local = app.local
        assert local is not None and app.source.endpoint.url == local.endpoint.url
        final = note_of(app)
        assert final.startswith(f"{DEAD_URL} did not answer ({DEAD_ERROR}): starting the in-process gateway, as chosen")
        assert f"in-process gateway over the sandbox at {local.endpoint.url}, started in" in final
        token = local.endpoint.token.get_secret_value()
        assert token not in app.export_screenshot() and TOKEN not in app.export_screenshot()
    # the steps came one by one, in the order the start-up runs them, each named while it ran
    steps = ["sandbox world v1", "loading the tool catalog", "opening the gateway runtime over",
             "21 toolsets (/mcp, /mcp/search", "building the gateway's HTTP app", "binding the server on 127.0.0.1:",
             f"server bound on {local.endpoint.url}"]
    running = {s: [i for i, n in enumerate(notes) if any(line.startswith(f"  … {s}") for line in n.splitlines())]
               for s in steps}
    assert [s for s in steps if not running[s]] == [], notes
    firsts = [running[s][0] for s in steps]
    assert firsts == sorted(firsts) and len(set(firsts)) == len(steps)
    assert "✓ loading the tool catalog" in notes[firsts[-1]]  # a finished step is ticked, with its seconds
    assert any(t.startswith("starting the local gateway: building the gateway's HTTP app") for t in titles)


async def test_no_url_and_nothing_at_the_default_starts_in_process_and_says_so(world_home):
    settings = world_home.model_copy(update={"gateway": world_home.gateway.model_copy(update={"port": 9})})
    app = make_console(settings, url=None, token=None, start=None, poll_s=0.2)
    async with app.run_test(size=SIZE) as pilot:
        assert not isinstance(app.screen, NoGatewayScreen)
        assert any(n.message.startswith(f"{DEAD_URL} did not answer") for n in app._notifications)
        await until(pilot, lambda: app.gateway_state == "connected", timeout_s=90)
        assert note_of(app).startswith(f"{DEAD_URL} did not answer ({DEAD_ERROR}): starting the in-process "
                                       "gateway over the sandbox instead\nin-process gateway over the sandbox at ")
