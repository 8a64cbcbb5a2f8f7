"""The console driven with Pilot against a real gateway (``LocalGateway`` over the sandbox world, on loopback):
search a tool and call it, open a bundle and act on it, start and cancel a small oracle run, and survive the
gateway going away."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Static

from recorder.signing import generate_keypair, verify_bundle_signature
from tests.tui.conftest import SMALL_TASKS
from tui import ApplianceSource, KopaConsole, LocalGateway
from tui.screens.drift import DriftScreen
from tui.screens.try_tool import TryToolScreen

SIZE = (80, 24)


async def until(pilot: Pilot, condition: Callable[[], bool], *, timeout_s: float = 20.0, step_s: float = 0.05) -> None:
    """Let the app run until ``condition`` holds (workers, polls and posted messages need event-loop turns)."""
    for _ in range(int(timeout_s / step_s)):
        if condition():
            return
        await pilot.pause(step_s)
    raise AssertionError(f"not reached within {timeout_s:g} s")


def console(home, gateway: LocalGateway | None, poll_s: float | None = None) -> KopaConsole:
    return KopaConsole(ApplianceSource.from_settings(home, gateway.endpoint if gateway else None), poll_s=poll_s)


def text_of(widget: Static) -> str:
    return str(widget.render())


async def test_search_a_tool_in_korean_and_call_it_through_the_gateway(pilot_home, gateway: LocalGateway):
    app = console(pilot_home, gateway)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *"지하철역 정보", "enter")
        await until(pilot, lambda: bool(app.screen.hits))
        assert app.screen.hits[0].name == "search_subway_stations"
        await pilot.press("enter")  # the highlighted tool's "try it" form
        await until(pilot, lambda: isinstance(app.screen, TryToolScreen))
        app.screen.query_one("#arg-STATION_NM", Input).value = "서울역"
        await pilot.press("ctrl+r")
        result = app.screen.query_one("#try-result", Static)
        await until(pilot, lambda: text_of(result).startswith(("ok", "error", "gateway")))
        assert text_of(result).startswith("ok") and "semantic_success" in text_of(result)
        assert "서울역" in text_of(result)
        await pilot.press("escape")
        # the call went through the gateway: its /metrics and the audit log show it
        app.poll_gateway()
        await until(pilot, lambda: app.metrics is not None and app.metrics.calls_total >= 1)
        assert app.gateway_state == "connected"
        audit = app.screen.query_one("#gw-audit", DataTable)

        def the_call() -> list[str] | None:  # the audit is read again until the call's line is in (its write is
            app.screen.load_audit()  # the gateway's, not this test's: under load it came after the first read)
            rows = [[str(c) for c in audit.get_row_at(i)] for i in range(audit.row_count)]
            return next((r for r in rows if r[3] == "search_subway_stations" and r[0] == "semantic_success"), None)

        await until(pilot, lambda: audit.row_count > 5 and the_call() is not None)  # the fixture's five lines, the call
        assert the_call()[:4] == ["semantic_success", the_call()[1], "seoul", "search_subway_stations"]
        app.screen.query_one("#f-platform", Input).value = "seoul"
        await pilot.pause()
        assert audit.row_count >= 1 and all(str(audit.get_row_at(i)[2]) == "seoul" for i in range(audit.row_count))


async def test_open_a_bundle_from_the_palette_verify_sign_and_see_its_drift(pilot_home, tmp_path: Path):
    app = console(pilot_home, None)
    private, public = tmp_path / "k.pem", tmp_path / "k.pub.pem"
    generate_keypair(private, public)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p", *"cassettes")  # through the command palette
        await until(pilot, lambda: "Go to Cassettes" in str(app.screen.query_one("CommandList").get_option_at_index(0)
                                                             .prompt))
        await pilot.press("enter")
        await until(pilot, lambda: app.current_mode == "cassettes")
        table = app.screen.query_one("#bundles", DataTable)
        await until(pilot, lambda: table.row_count >= 2)  # the home's two, then the appliance's shipped ones
        await pilot.press("down", "v")
        status = app.screen.query_one("#bundle-status", Static)
        await until(pilot, lambda: "verified" in text_of(status))
        assert "9 interactions" in text_of(status)
        await pilot.press("s")
        await pilot.pause()
        app.screen.query_one("#prompt-input", Input).value = str(private)
        await pilot.press("enter")
        await until(pilot, lambda: "✓" in [str(c) for c in table.get_row_at(1)])
        ref = app.screen.rows[1]
        assert verify_bundle_signature(pilot_home.cassettes_dir / ref.name / ref.version, public).version == ref.version
        await pilot.press("d")  # the head against its parent
        await until(pilot, lambda: isinstance(app.screen, DriftScreen))
        platforms = app.screen.query_one("#drift-platforms", DataTable)
        await until(pilot, lambda: platforms.row_count == 3)
        rows = {str(platforms.get_row_at(i)[0]): [str(c) for c in platforms.get_row_at(i)[1:]] for i in range(3)}
        assert rows == {"edu": ["0", "2", "0", "0"], "gg": ["0", "0", "1", "613"], "law": ["0", "0", "0", "0"]}


async def test_start_a_small_oracle_run_then_cancel_a_long_one(pilot_home):
    app = console(pilot_home, None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("b")
        runs = app.screen.query_one("#runs", DataTable)
        await until(pilot, lambda: runs.row_count == 2)
        bench = app.screen

        async def start(seeds: str, rollouts: str) -> None:
            await pilot.press("n")
            await pilot.pause()
            app.screen.query_one("#run-tasks", Input).value = str(SMALL_TASKS)
            app.screen.query_one("#run-seeds", Input).value = seeds
            app.screen.query_one("#run-rollouts", Input).value = rollouts
            await pilot.press("enter")

        await start("1", "1")  # two tasks, one episode each: runs to the end
        label = bench.query_one("#job-label", Static)
        await until(pilot, lambda: text_of(label).startswith("done"), timeout_s=60)
        assert text_of(label) == "done: 2 episodes, pass@1 100.0; model errors: none"
        await until(pilot, lambda: runs.row_count == 3)
        newest = app.source.records.bench_runs()[0]
        assert (newest.agent, newest.n_episodes, newest.complete, newest.pass_at_1) == ("oracle", 2, True, 1.0)

        await start("100", "4")  # 800 episodes: cancelled after the first few
        await until(pilot, lambda: bench.job is not None and "episodes," in text_of(label), timeout_s=60)
        await pilot.press("x")
        await until(pilot, lambda: text_of(label).startswith("cancelled"), timeout_s=60)
        assert bench.job is None
        cancelled = app.source.records.bench_runs()[0]
        assert cancelled.episodes_total == 800 and 0 < cancelled.n_episodes < 800 and not cancelled.complete
        await until(pilot, lambda: runs.row_count == 4)


async def test_the_console_shows_the_gateway_going_away_and_reconnects_never_showing_the_token(pilot_home, gateway: LocalGateway):
    app = console(pilot_home, gateway, poll_s=0.2)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.gateway_state == "connected")
        assert app.sub_title.startswith("● connected")
        gateway.stop()
        try:
            await until(pilot, lambda: app.gateway_state == "disconnected")
            assert "disconnected" in app.sub_title
            await pilot.pause()
            assert text_of(app.screen.query_one("#gw-stats", Static)).startswith("gateway not answering")
        finally:
            gateway.start()  # the same port: what an operator's restart looks like
        await until(pilot, lambda: app.gateway_state == "connected")
        assert app.sub_title.startswith("● connected")
        assert "calls/s" in text_of(app.screen.query_one("#gw-stats", Static))
        token = gateway.endpoint.token.get_secret_value()  # shown nowhere, connected or not
        assert token not in app.export_screenshot() and token not in app.sub_title
        assert token not in repr(gateway.endpoint) and gateway.endpoint.masked_token != token


async def test_with_nothing_running_the_console_starts_its_own_gateway_and_closes_it_on_quit(pilot_home, tmp_path):
    """`kopa tui` with no gateway answering: the console starts the in-process gateway over the sandbox on a
    loopback port (a worker: the UI is up meanwhile), connects to it, and closes it when it quits."""
    import httpx

    from tests.conftest import TEST_DATA_DIR, TEST_SCALE

    settings = pilot_home.model_copy(update={
        "home": TEST_DATA_DIR, "sandbox": pilot_home.sandbox.model_copy(update={"scale": TEST_SCALE})})
    app = KopaConsole(ApplianceSource.from_settings(settings, None, audit_file=tmp_path / "audit.jsonl"),
                      start_local=True, poll_s=0.2)
    async with app.run_test(size=SIZE) as pilot:
        assert app.gateway_state in ("starting", "connected")
        await until(pilot, lambda: app.gateway_state == "connected", timeout_s=90)
        origin = app.local.endpoint.url
        assert httpx.get(origin + "/healthz", timeout=5).status_code == 200
        token = app.local.endpoint.token.get_secret_value()
        assert token not in app.sub_title and token not in str(app.screen.query_one("#gw-stats", Static).render())
    with pytest.raises(httpx.TransportError):  # quitting closed the gateway it started
        httpx.get(origin + "/healthz", timeout=2)
