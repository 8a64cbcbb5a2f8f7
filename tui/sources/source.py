"""The one object the console's screens read from: the gateway over HTTP, the appliance home, the metadata DB.

    source = ApplianceSource.from_settings(KopaSettings(), endpoint=GatewayEndpoint(url, SecretStr(token)))
    await source.gateway.health(); source.audit_tail(200)
    source.search.find("지하철역"); source.cassettes.rows(); source.records.bench_runs(); source.edge.graphs()

An empty view says what it read and how to fill it: ``source.empty_hint("graphs")`` (cassettes, graphs,
datasets, training, bench).

Tests point it at a fixture home (``ApplianceSource(home=..., metadb_url=..., ...)``). Heavy parts (the
catalog and its search index) load on first use, from a worker, never on the UI thread.
"""

from __future__ import annotations

from functools import cache, cached_property
from pathlib import Path

from appliance.config import KopaSettings
from bench.taskset.build import DEFAULT_CASSETTES, DEFAULT_TASKS
from mcp_gateway.catalog import Catalog, load_catalog

from .audit import AuditLine, read_audit_tail
from .cassettes import Cassettes
from .catalog_search import ToolSearch
from .edge_jobs import EdgeJobs
from .gateway_http import GatewayClient, GatewayEndpoint
from .records import Records

AUDIT_FILE = Path("logs") / "audit.jsonl"  # under the appliance home


@cache
def shared_catalog() -> Catalog:
    """One catalog per process: it is immutable, and loading it (and indexing it) takes seconds."""
    return load_catalog()


@cache
def shared_search() -> ToolSearch:
    return ToolSearch(shared_catalog())


@cache
def platform_of() -> dict[str, str]:
    return {s.name: s.platform for s in shared_catalog()}


class ApplianceSource:
    def __init__(self, settings: KopaSettings, endpoint: GatewayEndpoint | None, *, audit_file: Path | None = None
                 ) -> None:
        self.settings = settings
        self.home = settings.home_dir
        self.endpoint = endpoint
        self.audit_file = audit_file or self.home / AUDIT_FILE
        self.records = Records(settings.metadb_url)
        self.cassettes = Cassettes(settings.cassettes_dir, shipped=DEFAULT_CASSETTES)  # a fresh home has none
        self.default_tasks: Path = DEFAULT_TASKS  # what the new-run dialog offers

    @classmethod
    def from_settings(cls, settings: KopaSettings | None = None, endpoint: GatewayEndpoint | None = None,
                      audit_file: Path | None = None) -> ApplianceSource:
        return cls(settings or KopaSettings(), endpoint, audit_file=audit_file)

    def attach(self, endpoint: GatewayEndpoint | None) -> None:
        self.endpoint = endpoint
        self.__dict__.pop("gateway", None)

    def detach(self) -> None:
        self.attach(None)

    @cached_property
    def gateway(self) -> GatewayClient:
        if self.endpoint is None:
            raise RuntimeError("no gateway attached: give --url and --token, or let the console start one")
        return GatewayClient(self.endpoint)

    @property
    def catalog(self) -> Catalog:
        return shared_catalog()

    @property
    def search(self) -> ToolSearch:
        return shared_search()

    @cached_property
    def edge(self) -> EdgeJobs:
        return EdgeJobs(self.home, self.catalog)

    @property
    def metadb_shown(self) -> str:
        """The metadata DB's URL as it may be shown: without its password."""
        from sqlalchemy.engine import make_url

        return make_url(self.settings.metadb_url).render_as_string(hide_password=True)

    def empty_hint(self, view: str) -> str:
        """What ``view`` reads, when it found nothing there, and the ``kopa`` command that fills it."""
        if view == "cassettes":
            home, *shipped = self.cassettes.folders
            also = f", nor in {shipped[0]} (shipped with the appliance)" if shipped else ""
            return (f"no bundle versions in {home}{also}.\nRecord one: kopa record --tasks FILE --bundle NAME "
                    "(or --calls FILE); or bring one: kopa cassettes import PATH; then r to refresh")
        home = self.home
        return {
            "graphs": f"no EDGE graph runs in {home / 'edge' / 'graphs'}.\n"
                      "Build one: kopa edge graph build --sandbox; then r to refresh",
            "datasets": f"no synthesis datasets in {home / 'edge' / 'datasets'}.\n"
                        "Make one: kopa edge synth --graph RUN, then kopa edge filter DIR; then r to refresh",
            "training": f"no training runs in the metadata DB ({self.metadb_shown}).\n"
                        "Start one: kopa train sft, or kopa train grpo --config NAME (kopa train status lists them)",
            "bench": f"no benchmark runs in the metadata DB ({self.metadb_shown}).\n"
                     "Start one: n here, or kopa bench run --agent oracle --tasks FILE",
        }[view]

    def audit_tail(self, limit: int) -> list[AuditLine]:
        return read_audit_tail(self.audit_file, limit, platform_of())
