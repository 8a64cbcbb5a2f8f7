"""The KOPA operator console: one Textual app, four views switched as modes, keyboard first.

    app = KopaConsole(ApplianceSource.from_settings(settings, endpoint))   # attach to a running gateway
    app = KopaConsole(source, start_local=True)    # none runs: start the in-process gateway over the sandbox
    app.run()

Start-up: a gateway that does not answer is never replaced silently. ``Unanswered`` says which URL and why
(``tui/cli.py`` probes it); with ``ask`` the operator chooses in a dialog (start the in-process gateway,
continue without one, quit), else the console says what it does instead. Starting the in-process gateway
says each step as it begins (world, catalog, runtime, toolsets, port) in the header and the Gateway view.

Keys: 1-4 (or g c b j) switch views, ? help, ctrl+p command palette, q quit. The gateway is polled
(``/healthz``, ``/metrics``) from a worker every ``poll_s`` seconds; when it goes away the header says
so and polling goes on, so the console reconnects by itself when it comes back.

Errors: a failed worker or data source is a message in the screen that asked (``screens/errors.py``); the
app goes on. Should the app crash anyway, the report is a traceback without local variables (Textual's own
prints every frame's locals, the request headers with the bearer token among them), with every known token
masked, written to ``<home>/logs/tui-crash-*.txt``; the path is printed and ``return_code`` is 1.
"""

from __future__ import annotations

import io
import tempfile
import time
from collections import deque
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from rich.console import Console
from rich.text import Text
from rich.traceback import Traceback

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.command import Hit, Hits, Provider
from textual.actions import SkipAction
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import Input
from textual.worker import Worker, WorkerState

from .messages import GatewayPolled
from .screens.bench import BenchScreen
from .screens.cassettes import CassettesScreen
from .screens.gateway import GatewayScreen
from .screens.help import HelpScreen
from .screens.jobs import JobsScreen
from .screens.no_gateway import NoGatewayScreen
from .sources import ApplianceSource, GatewayError, LocalGateway, MetricsSnapshot, calls_per_s

HISTORY = 60  # polls of calls/s kept for the sparkline
CRASH_DIR = Path("logs")  # under the appliance home
MASK = "••••••"


@dataclass(frozen=True)
class Unanswered:
    """The gateway URL the console was to attach to did not answer."""

    url: str
    error: str
    ask: bool = False  # the operator named it (--url) and no --start/--no-start decided: ask what to do


class ConsoleCommands(Provider):
    """The palette's own commands: views, help, gateway reconnect, a new benchmark run."""

    def _commands(self) -> list[tuple[str, str, object]]:
        app = self.app
        assert isinstance(app, KopaConsole)
        return [
            ("Go to Gateway", "live calls, latency, errors, audit tail, tool search", partial(app.switch_mode, "gateway")),
            ("Go to Cassettes", "bundles, verify, sign, export, drift", partial(app.switch_mode, "cassettes")),
            ("Go to Bench", "benchmark runs, episodes, compare, start a run", partial(app.switch_mode, "bench")),
            ("Go to Jobs", "EDGE graphs and datasets, training jobs", partial(app.switch_mode, "jobs")),
            ("Help", "keys of every view", app.action_help),
            ("Reconnect gateway", "poll the gateway now", app.poll_gateway),
            ("New benchmark run", "start an oracle or first-page run", app.action_new_run),
        ]

    async def discover(self) -> Hits:
        for name, help_text, callback in self._commands():
            yield Hit(1.0, name, callback, help=help_text)  # type: ignore[arg-type]

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self._commands():
            if (score := matcher.match(name)) > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)  # type: ignore[arg-type]


class KopaConsole(App):
    CSS_PATH = "app.tcss"
    TITLE = "KOPA console"
    MODES = {"gateway": GatewayScreen, "cassettes": CassettesScreen, "bench": BenchScreen, "jobs": JobsScreen}
    DEFAULT_MODE = "gateway"
    COMMANDS = App.COMMANDS | {ConsoleCommands}
    BINDINGS = [
        Binding("1,g", "switch_mode('gateway')", "Gateway", show=False),
        Binding("2,c", "switch_mode('cassettes')", "Cassettes", show=False),
        Binding("3,b", "switch_mode('bench')", "Bench", show=False),
        Binding("4,j", "switch_mode('jobs')", "Jobs", show=False),
        Binding("question_mark,f1", "help", "Help"),
        Binding("q", "quit", "Quit"),
        Binding("escape", "leave_input", "Leave the field", show=False),  # views bind no escape; dialogs do
    ]

    gateway_state: reactive[str] = reactive("none")  # none | starting | connected | disconnected
    gateway_tick: reactive[int] = reactive(0)  # bumped after every poll: views refresh on it
    gateway_note: reactive[str] = reactive("")  # why this gateway (or none), and the start-up steps

    def __init__(self, source: ApplianceSource, *, start_local: bool = False, local: LocalGateway | None = None,
                 poll_s: float | None = 1.0, unanswered: Unanswered | None = None) -> None:
        super().__init__()
        self.source, self.local, self.start_local, self.poll_s = source, local, start_local, poll_s
        self.unanswered = unanswered
        self._why = ""  # the first line of gateway_note: why the console uses the gateway it uses
        self._steps: list[tuple[str, float]] = []  # the in-process gateway's start-up: (step, began at)
        self._step_timer = None
        self.metrics: MetricsSnapshot | None = None
        self.rates: deque[float] = deque(maxlen=HISTORY)
        self.last_error: str | None = None
        self.health = None
        self.crash_report: Path | None = None
        self._crash: BaseException | None = None

    def on_mount(self) -> None:
        if self.source.endpoint is not None:
            self.gateway_state = "disconnected"  # until the first poll answers
        if (gone := self.unanswered) is not None:
            if gone.ask:
                self.push_screen(NoGatewayScreen(gone.url, gone.error), self._chosen)
            else:
                self._say(f"{gone.url} did not answer ({gone.error}): " + (
                    "starting the in-process gateway over the sandbox instead" if self.start_local
                    else "the console keeps retrying it (--no-start: no in-process gateway)"))
        if self.start_local and self.source.endpoint is None:
            self._begin_local()
        if self.poll_s:
            self.set_interval(self.poll_s, self.poll_gateway)
            self.poll_gateway()

    # ---- errors ----
    def _secrets(self) -> list[str]:
        endpoints = [self.source.endpoint, self.local.endpoint if self.local is not None else None]
        return [e.token.get_secret_value() for e in endpoints if e is not None and e.token.get_secret_value()]

    def scrub(self, text: str) -> str:
        """``text`` with every token the console knows masked."""
        for secret in self._secrets():
            text = text.replace(secret, MASK)
        return text

    def describe_error(self, error: BaseException) -> str:
        """One line for the operator: a gateway error's own words, else the exception's type and text."""
        if isinstance(error, GatewayError):
            return self.scrub(str(error))
        return self.scrub(f"{type(error).__name__}: {error}")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:  # the app's own workers
        error = event.worker.error
        if event.state is not WorkerState.ERROR or error is None:
            return
        if event.worker.group == "local-gateway":
            self._local_failed(self.describe_error(error))
        else:
            self.notify(self.describe_error(error), title="error", severity="error", timeout=12)

    def _handle_exception(self, error: Exception) -> None:
        self._crash = error  # _fatal_error gets no argument
        super()._handle_exception(error)

    def _fatal_error(self) -> None:
        """Textual 8.2.8 always renders ``show_locals=True`` here and has no setting for it: this replaces it."""
        error = self._crash
        self.bell()
        buffer = io.StringIO()
        report = Console(file=buffer, width=120, color_system=None, force_terminal=False)
        if error is not None:
            report.print(Traceback.from_exception(type(error), error, error.__traceback__, show_locals=False,
                                                  width=120, suppress=[]))
        text = self.scrub(buffer.getvalue())
        self.crash_report = self._write_crash_report(text)
        what = self.describe_error(error) if error is not None else "unknown error"
        self._exit_renderables.append(Text(
            f"The KOPA console stopped on an error: {what}\n"
            f"Report (no local variables, tokens masked): {self.crash_report}", style="red"))
        self._close_messages_no_wait()

    def _write_crash_report(self, text: str) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for folder in (self.source.home / CRASH_DIR, Path(tempfile.gettempdir())):
            try:
                folder.mkdir(parents=True, exist_ok=True)
                path = folder / f"tui-crash-{stamp}-{id(self):x}.txt"
                path.write_text(text, encoding="utf-8")
                return path
            except OSError:
                continue
        raise OSError("could not write the crash report anywhere")

    # ---- which gateway: the operator's choice, the in-process one's start-up ----
    def _say(self, why: str) -> None:
        """Why the console uses the gateway it uses: in a notification now, and on the Gateway view for good."""
        self._why = why
        self.notify(why, title="gateway", severity="warning", timeout=15)
        self._show_note()

    def _chosen(self, choice: str | None) -> None:
        gone = self.unanswered
        assert gone is not None
        if choice == "quit":
            self.exit()
        elif choice == "start":
            self.source.detach()
            self.start_local = True  # it is the console's own: closed on quit
            self._say(f"{gone.url} did not answer ({gone.error}): starting the in-process gateway, as chosen")
            self._begin_local()
        else:
            self._say(f"{gone.url} did not answer ({gone.error}): the console keeps retrying it; "
                      "everything that needs no gateway works meanwhile")

    def _begin_local(self) -> None:
        self.gateway_state, self._steps = "starting", []
        self._step_timer = self.set_interval(1.0, self._show_note)  # the running step's seconds tick on
        self._start_local()

    @work(exit_on_error=False, thread=True, exclusive=True, group="local-gateway")
    def _start_local(self) -> None:
        def step(text: str) -> None:
            self.call_from_thread(self._step, text)

        try:
            local = LocalGateway.over_sandbox(self.source.settings, audit_file=self.source.audit_file,
                                              catalog=lambda: self.source.catalog, progress=step)
            local.start(progress=step)
        except (OSError, RuntimeError, ValueError) as exc:  # no world, no port: say so, keep the console up
            self.call_from_thread(self._local_failed, f"{type(exc).__name__}: {exc}")
            return
        self.call_from_thread(self._attach_local, local)

    def _step(self, text: str) -> None:
        self._steps.append((text, time.monotonic()))
        self.watch_gateway_state(self.gateway_state)  # the header names the step too
        self._show_note()

    def _stop_steps(self) -> None:
        if self._step_timer is not None:
            self._step_timer.stop()
            self._step_timer = None

    def _show_note(self) -> None:
        lines = [self._why] if self._why else []
        now = time.monotonic()
        if self.local is None and self.gateway_state == "starting" and self._steps:
            lines.append(f"starting the in-process gateway ({now - self._steps[0][1]:.0f} s):")
            ends = [began for _, began in self._steps[1:]] + [None]
            for (text, began), end in zip(self._steps, ends, strict=True):
                lines.append(f"  ✓ {text} ({end - began:.1f} s)" if end else f"  … {text} ({now - began:.0f} s)")
        elif self.local is not None and self._steps:
            lines.append(f"in-process gateway over the sandbox at {self.local.endpoint.url}, started in "
                         f"{self._steps[-1][1] - self._steps[0][1]:.1f} s")
        self.gateway_note = "\n".join(lines)

    def _local_failed(self, error: str) -> None:
        self._stop_steps()
        at = f" (at: {self._steps[-1][0]})" if self._steps else ""
        self.last_error, self.gateway_state = f"could not start the local gateway: {error}{at}", "none"
        self.notify(self.last_error, severity="error", timeout=10)
        self._show_note()

    def _attach_local(self, local: LocalGateway) -> None:
        self._stop_steps()
        self.local = local
        self.source.attach(local.endpoint)
        self._show_note()
        self.poll_gateway()

    @work(exit_on_error=False, exclusive=True, group="poll")
    async def poll_gateway(self) -> None:
        endpoint = self.source.endpoint
        if endpoint is None:
            return
        try:
            health = await self.source.gateway.health()
            metrics = await self.source.gateway.metrics()
        except (GatewayError, ValueError) as exc:  # ValueError: an answer that is not what /healthz gives
            polled = GatewayPolled(None, None, self.describe_error(exc))
        else:
            polled = GatewayPolled(health, metrics)
        if self.source.endpoint is endpoint:  # a poll of a URL given up meanwhile (for the in-process one) is stale
            self.post_message(polled)

    def on_gateway_polled(self, message: GatewayPolled) -> None:
        if self.source.endpoint is None:
            return  # detached since it was polled
        if message.error is not None:
            self.gateway_state, self.last_error = "disconnected", message.error
        else:
            if message.metrics is not None:
                self.rates.append(calls_per_s(self.metrics, message.metrics))
            self.health, self.metrics, self.last_error = message.health, message.metrics, None
            self.gateway_state = "connected"
        self.gateway_tick += 1

    def watch_gateway_state(self, state: str) -> None:
        endpoint = self.source.endpoint
        where = f" {endpoint.url}" if endpoint else ""
        step = f": {self._steps[-1][0]}" if self._steps else ""
        self.sub_title = {"none": "no gateway", "starting": f"starting the local gateway{step}…",
                          "connected": f"● connected{where}",
                          "disconnected": f"✕ disconnected{where} (retrying)"}[state]

    def action_leave_input(self) -> None:
        """Esc in a view's input moves focus to the next widget that is not one, so the view's keys work again.

        In a dialog Esc goes on to the dialog (it closes it), as its title says.
        """
        focused = self.focused
        if not isinstance(focused, Input) or isinstance(self.screen, ModalScreen):
            raise SkipAction()
        chain = self.screen.focus_chain
        at = chain.index(focused) if focused in chain else -1
        after = [w for w in chain[at + 1:] + chain[:at] if not isinstance(w, Input)]
        self.screen.set_focus(after[0] if after else None)

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_new_run(self) -> None:
        self.switch_mode("bench")
        self.call_after_refresh(lambda: self.screen.run_action("new_run"))

    async def on_unmount(self) -> None:
        if self.local is not None and self.start_local:  # only the gateway it started itself
            await self.local.aclose()


def run_app(app: KopaConsole, *, headless: bool = False) -> None:
    """Run ``app``; leave with its return code when it crashed (the report's path is printed on stderr).

    Raises:
        SystemExit: the app ended on an error (code 1).
    """
    app.run(headless=headless)
    if app.return_code:
        raise SystemExit(app.return_code)


def main(source: ApplianceSource, *, start_local: bool) -> None:
    run_app(KopaConsole(source, start_local=start_local))
