"""Cassette bundles for the console: versions with parents, sizes, signatures and coverage; verify, sign,
export; and a drift report between two versions summed up per platform.

    bundles = Cassettes(home / "cassettes", shipped=REPO / "cassettes")
    bundles.rows()                                    # every version of every bundle, newest last per name
    bundles.folders                                   # what it reads: the home's folder, then the shipped one
    bundles.verify("tiny@e1c4"); bundles.sign(ref, key); bundles.export(ref, out)
    bundles.drift("tiny@e1c4", "tiny@8434")            # DriftView: per platform status/schema/cardinality/values
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_gateway.cassette_reader import cassette_reader
from recorder import Bundle, BundleRef, CassetteStore, Routes
from recorder.cassette.bundle import SIGNATURE
from recorder.drift import DriftReport, compare
from recorder.signing import sign_bundle, verify_bundle_signature
from recorder.vcr import export_vcr

# The drift report's kinds, grouped as the operator reads them.
DRIFT_GROUPS = {
    "status": ("endpoint_gone", "status_changed"),
    "schema": ("field_removed", "field_added", "field_renamed", "field_retyped"),
    "cardinality": ("cardinality_changed",),
    "values": ("record_added", "record_removed", "record_changed"),
}


class BundleShelf:
    """The home's cassette store, with the shipped bundles it has no bundle of that name for.

    The same rule as ``kopa bench run`` (``appliance.bench_cli.bundle_folder``): a name is read from the home's
    folder when it is there, else from the folder shipped with the appliance (``kopa-default``, the default task
    set's bundle). So a fresh install, with no bundles of its own yet, shows the ones its benchmark replays.
    """

    def __init__(self, root: Path, shipped: Path | None = None) -> None:
        self.root = root
        self.home = CassetteStore(root)
        self.shipped = CassetteStore(shipped) if shipped is not None and shipped.resolve() != root.resolve() else None

    def store_of(self, name: str) -> CassetteStore:
        if self.shipped is None or name in self.home.names() or name not in self.shipped.names():
            return self.home
        return self.shipped

    def names(self) -> list[str]:
        own = self.home.names()
        return own + [n for n in (self.shipped.names() if self.shipped else []) if n not in own]

    def resolve(self, ref: str) -> BundleRef:
        return self.store_of(ref.partition("@")[0]).resolve(ref)

    def open(self, ref: str, *, verify: bool = True) -> Bundle:
        return Bundle.open(self.resolve(ref).folder, verify=verify)


@dataclass(frozen=True)
class BundleRow:
    name: str
    version: str
    parent: str | None
    head: bool
    created_at: str
    source: str
    interactions: int
    platforms: dict[str, int]
    tools: int  # coverage: distinct tools recorded
    size_bytes: int
    signed: bool
    note: str | None
    shipped: bool = False  # read from the folder shipped with the appliance, not the home's

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"


@dataclass(frozen=True)
class DriftView:
    old: str
    new: str
    summary: dict[str, Any]
    per_platform: dict[str, dict[str, int]]  # platform -> group -> entries
    tools: list[tuple[str, str, str, int]]  # (platform, tool, kind, entries)
    markdown: str


class Cassettes:
    def __init__(self, root: Path, shipped: Path | None = None) -> None:
        self.store = BundleShelf(root, shipped)

    @property
    def folders(self) -> list[Path]:
        """What is read, in order: the home's folder, then the shipped one."""
        return [self.store.root] + ([self.store.shipped.root] if self.store.shipped else [])

    def rows(self) -> list[BundleRow]:
        rows = []
        for name in self.store.names():
            store = self.store.store_of(name)
            head = store.head(name)
            for m in store.versions(name):
                folder = store.root / name / m.version
                rows.append(BundleRow(
                    name=name, version=m.version, parent=m.parent, head=m.version == head, created_at=m.created_at,
                    source=", ".join(m.sources), interactions=int(m.counts.get("interactions", 0)),
                    platforms=dict(m.counts.get("platforms", {})), tools=len(m.counts.get("tools", {})),
                    size_bytes=sum(int(p.get("bytes", 0)) for p in m.parts.values()),
                    signed=(folder / SIGNATURE).is_file(), note=m.note, shipped=store is self.store.shipped))
        return rows

    def verify(self, ref: str, public_key: Path | None = None) -> str:
        """Check every part against the manifest (and the signature with ``public_key``).

        Raises:
            recorder.CorruptBundleError, recorder.signing.SignatureError, LookupError: what failed, named.
        """
        found = self.store.resolve(ref)
        bundle = self.store.open(ref)
        if public_key is not None:
            verify_bundle_signature(found.folder, public_key)
        return f"{found}: {len(bundle):,} interactions, every part{' and signature' if public_key else ''} verified"

    def sign(self, ref: str, private_key: Path) -> Path:
        return sign_bundle(self.store.resolve(ref).folder, private_key)

    def export(self, ref: str, out: Path) -> Path:
        """A stock vcrpy cassette with the live hosts' URLs."""
        return export_vcr(self.store.open(ref), out, Routes.live())

    def drift(self, old: str, new: str) -> DriftView:
        a, b = self.store.open(old), self.store.open(new)
        report: DriftReport = compare(a, b, cassette_reader())
        group_of = {kind: group for group, kinds in DRIFT_GROUPS.items() for kind in kinds}
        per_platform: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(DRIFT_GROUPS, 0))
        for platform in {**a.manifest.counts.get("platforms", {}), **b.manifest.counts.get("platforms", {})}:
            per_platform[platform]  # a platform recorded on either side shows, with or without drift
        for entry in report.entries:
            per_platform[entry.platform][group_of[entry.kind]] += 1
        tools = Counter((e.platform, e.tool or "", e.kind) for e in report.entries)
        data = report.to_json()
        return DriftView(report.old, report.new, data["summary"], dict(sorted(per_platform.items())),
                         [(p, t, k, n) for (p, t, k), n in sorted(tools.items())], report.to_markdown())
