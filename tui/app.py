"""The KOPA operator console: one Textual app, four views switched as modes, keyboard first.

    app = KopaConsole(ApplianceSource.from_settings(settings, endpoint))   # attach to a running gateway
    app = KopaConsole(source, start_local=True)    # none runs: start the in-process gateway over the sandbox
    app.run()

Keys: 1-4 (or g c b j) switch views, ? help, ctrl+p command palette, q quit. The gateway is polled
(``/healthz``, ``/metrics``) from a worker every ``poll_s`` seconds; when it goes away the header says
so and polling goes on, so the console reconnects by itself when it comes back.
"""

from __future__ import annotations

from collections import deque
from functools import partial

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.command import Hit, Hits, Provider
from textual.reactive import reactive

from .messages import GatewayPolled
from .screens.bench import BenchScreen
from .screens.cassettes import CassettesScreen
from .screens.gateway import GatewayScreen
from .screens.help import HelpScreen
from .screens.jobs import JobsScreen
from .sources import ApplianceSource, GatewayDown, LocalGateway, MetricsSnapshot, calls_per_s

HISTORY = 60  # polls of calls/s kept for the sparkline


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
    ]

    gateway_state: reactive[str] = reactive("none")  # none | starting | connected | disconnected
    gateway_tick: reactive[int] = reactive(0)  # bumped after every poll: views refresh on it

    def __init__(self, source: ApplianceSource, *, start_local: bool = False, local: LocalGateway | None = None,
                 poll_s: float | None = 1.0) -> None:
        super().__init__()
        self.source, self.local, self.start_local, self.poll_s = source, local, start_local, poll_s
        self.metrics: MetricsSnapshot | None = None
        self.rates: deque[float] = deque(maxlen=HISTORY)
        self.last_error: str | None = None
        self.health = None

    def on_mount(self) -> None:
        if self.source.endpoint is not None:
            self.gateway_state = "disconnected"  # until the first poll answers
        if self.start_local and self.source.endpoint is None:
            self.gateway_state = "starting"
            self._start_local()
        if self.poll_s:
            self.set_interval(self.poll_s, self.poll_gateway)
            self.poll_gateway()

    @work(thread=True, exclusive=True, group="local-gateway")
    def _start_local(self) -> None:
        from sandbox import InProcessSandbox

        settings = self.source.settings
        upstream = InProcessSandbox(settings.home_dir, seed=settings.sandbox.seed, version=settings.sandbox.world,
                                    scale=settings.sandbox.scale)
        try:
            local = LocalGateway.open(upstream=upstream, home=settings.home_dir, audit_file=self.source.audit_file)
            local.start()
        except (OSError, RuntimeError, ValueError) as exc:  # no world, no port: say so, keep the console up
            self.call_from_thread(self._local_failed, f"{type(exc).__name__}: {exc}")
            return
        self.call_from_thread(self._attach_local, local)

    def _local_failed(self, error: str) -> None:
        self.last_error, self.gateway_state = f"could not start the local gateway: {error}", "none"
        self.notify(self.last_error, severity="error", timeout=10)

    def _attach_local(self, local: LocalGateway) -> None:
        self.local = local
        self.source.attach(local.endpoint)
        self.poll_gateway()

    @work(exclusive=True, group="poll")
    async def poll_gateway(self) -> None:
        if self.source.endpoint is None:
            return
        try:
            health = await self.source.gateway.health()
            metrics = await self.source.gateway.metrics()
        except GatewayDown as exc:
            self.post_message(GatewayPolled(None, None, str(exc)))
            return
        self.post_message(GatewayPolled(health, metrics))

    def on_gateway_polled(self, message: GatewayPolled) -> None:
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
        self.sub_title = {"none": "no gateway", "starting": "starting the local gateway…",
                          "connected": f"● connected{where}",
                          "disconnected": f"✕ disconnected{where} (retrying)"}[state]

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_new_run(self) -> None:
        self.switch_mode("bench")
        self.call_after_refresh(lambda: self.screen.run_action("new_run"))

    async def on_unmount(self) -> None:
        if self.local is not None and self.start_local:  # only the gateway it started itself
            await self.local.aclose()


def main(source: ApplianceSource, *, start_local: bool) -> None:
    KopaConsole(source, start_local=start_local).run()
