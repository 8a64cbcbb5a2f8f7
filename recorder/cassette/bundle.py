"""The bundle format: one immutable, content-addressed folder per version.

    cassettes/NAME/VERSION/
        manifest.json         name, version, parent, created, sources, counts, part hashes
        interactions.parquet  one row per interaction: request, status, headers, provenance,
                              and where its body lies in bodies.bin (zstd-compressed columns)
        bodies.bin            response bodies, each stored once (identical bodies share bytes)
          or bodies.bin.zst   the same, zstd-compressed: a bundle shipped in a repository (about 10x
                              smaller); it is decompressed into memory on open instead of mapped
        catalog.json.zst      the tool catalog served while recording (``catalog_pin.py``): per tool its
                              description and schemas; the manifest names its version. Absent in bundles
                              recorded before catalogs were pinned: they replay as ever, pinning nothing
        manifest.sig          optional Ed25519 signature over manifest.json (``signing.py``)

Why this layout (measured by ``benchmarks/cassette_lookup.py``): opening reads only the small
parquet index and memory-maps the bodies, so opening 100,000 interactions costs a column read
and one dict build; a lookup is a dict hit and a slice of the map. DuckDB reads the parquet
file directly (``kopa cassettes query``). ``VERSION`` is the SHA-256 of the part hashes, so equal
content is one version, and any changed byte is caught on open: every part is hashed against
the manifest before a single interaction is served.
"""

from __future__ import annotations

import hashlib
import json
import mmap
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..catalog_pin import CATALOG_PART, CatalogPin
from .interaction import RECORDER_VERSION, Interaction, Origin, utc_now

FORMAT = "kopa-cassette/1"
MANIFEST = "manifest.json"
INDEX = "interactions.parquet"
BODIES = "bodies.bin"
BODIES_ZST = "bodies.bin.zst"
SIGNATURE = "manifest.sig"
ZSTD_LEVEL = 19  # written once, read many times: the slow, small end of zstd

SCHEMA = pa.schema([
    ("seq", pa.int64()), ("fingerprint", pa.string()), ("query_fingerprint", pa.string()),
    ("page", pa.int64()), ("size", pa.int64()), ("method", pa.string()), ("url", pa.string()),
    ("platform", pa.string()), ("tool", pa.string()), ("request_body", pa.binary()),
    ("status", pa.int64()), ("headers", pa.string()), ("content_type", pa.string()),
    ("body_sha256", pa.string()), ("body_offset", pa.int64()), ("body_length", pa.int64()),
    ("recorded_at", pa.string()), ("source", pa.string()), ("recorder_version", pa.string()),
    ("origin", pa.string()), ("duration_ms", pa.float64()),
])


class CorruptBundleError(ValueError):
    """A bundle's files do not match its manifest (or are unreadable): nothing is served from it."""


@dataclass(frozen=True)
class Manifest:
    name: str
    version: str
    parent: str | None
    created_at: str
    sources: tuple[str, ...]
    counts: dict[str, Any]
    parts: dict[str, dict[str, Any]]
    recorder_version: str = RECORDER_VERSION
    format: str = FORMAT
    note: str | None = None
    catalog: dict[str, Any] | None = None  # the pinned catalog's format, version and tool count; None: none pinned

    def to_json(self) -> str:
        pinned = {} if self.catalog is None else {"catalog": self.catalog}  # an old manifest stays byte for byte
        return json.dumps({**pinned,
            "format": self.format, "name": self.name, "version": self.version, "parent": self.parent,
            "created_at": self.created_at, "source": self.sources[0] if len(self.sources) == 1 else list(self.sources),
            "recorder_version": self.recorder_version, "note": self.note, "counts": self.counts,
            "parts": self.parts}, ensure_ascii=False, indent=2, sort_keys=True) + "\n"

    @classmethod
    def read(cls, folder: Path) -> Manifest:
        path = folder / MANIFEST
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            source = data["source"]
            return cls(name=data["name"], version=data["version"], parent=data.get("parent"),
                       created_at=data["created_at"], sources=tuple([source] if isinstance(source, str) else source),
                       counts=data["counts"], parts=data["parts"], recorder_version=data["recorder_version"],
                       format=data["format"], note=data.get("note"), catalog=data.get("catalog"))
        except FileNotFoundError:
            raise CorruptBundleError(f"{folder}: no {MANIFEST}; not a cassette bundle") from None
        except (ValueError, KeyError, TypeError) as exc:
            raise CorruptBundleError(f"{path}: unreadable manifest ({type(exc).__name__}: {exc})") from None


def content_version(parts: dict[str, dict[str, Any]]) -> str:
    """The version id: SHA-256 over the parts' hashes (first 20 hex digits are plenty to name it)."""
    text = json.dumps({name: part["sha256"] for name, part in sorted(parts.items())}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def counts_of(interactions: Sequence[Interaction]) -> dict[str, Any]:
    return {
        "interactions": len(interactions),
        "platforms": dict(sorted(Counter(i.platform for i in interactions).items())),
        "tools": dict(sorted(Counter(i.tool or "(none)" for i in interactions).items())),
        "origins": dict(sorted(Counter(str(i.origin) for i in interactions).items())),
        "fingerprints": len({i.fingerprint for i in interactions}),
    }


def parts_of(parts: Mapping[str, Any]) -> tuple[str, str]:
    """The index and the bodies part a manifest's ``parts`` list (the bodies compressed or not)."""
    return INDEX, BODIES_ZST if BODIES_ZST in parts else BODIES


def stored_parts(parts: Mapping[str, Any]) -> tuple[str, ...]:
    """Every part file a manifest's ``parts`` lists: the index, the bodies, and the catalog pin when there is one."""
    return parts_of(parts) + ((CATALOG_PART,) if CATALOG_PART in parts else ())


def write_parts(folder: Path, interactions: Sequence[Interaction], *, compress: bool = False,
                catalog: CatalogPin | None = None) -> dict[str, dict[str, Any]]:
    """Write the index and the bodies (zstd-compressed with ``compress``) into ``folder``, and the ``catalog`` pin
    when given; their hashes and sizes."""
    offsets: dict[str, tuple[int, int]] = {}
    columns: dict[str, list[Any]] = defaultdict(list)
    with open(folder / BODIES, "wb") as bodies:
        position = 0
        for seq, item in enumerate(interactions):
            digest = hashlib.sha256(item.body).hexdigest()
            if digest not in offsets:
                bodies.write(item.body)
                offsets[digest] = (position, len(item.body))
                position += len(item.body)
            offset, length = offsets[digest]
            row = {
                "seq": seq, "fingerprint": item.fingerprint, "query_fingerprint": item.query_fingerprint,
                "page": item.page, "size": item.size, "method": item.method, "url": item.url,
                "platform": item.platform, "tool": item.tool, "request_body": item.request_body,
                "status": item.status, "headers": item.headers_json(), "content_type": item.content_type,
                "body_sha256": digest, "body_offset": offset, "body_length": length,
                "recorded_at": item.recorded_at, "source": item.source, "recorder_version": item.recorder_version,
                "origin": str(item.origin), "duration_ms": item.duration_ms,
            }
            for name, value in row.items():
                columns[name].append(value)
    table = pa.table({name: pa.array(columns.get(name, []), type=SCHEMA.field(name).type) for name in SCHEMA.names},
                     schema=SCHEMA)
    pq.write_table(table, folder / INDEX, compression="zstd")
    extra: dict[str, dict[str, Any]] = {}
    if compress:
        raw = (folder / BODIES).read_bytes()
        (folder / BODIES_ZST).write_bytes(pa.Codec("zstd", compression_level=ZSTD_LEVEL).compress(raw, asbytes=True))
        (folder / BODIES).unlink()
        extra[BODIES_ZST] = {"raw_bytes": len(raw)}
    names: tuple[str, ...] = parts_of(extra)
    if catalog is not None:
        (folder / CATALOG_PART).write_bytes(catalog.to_bytes())
        names += (CATALOG_PART,)
    return {name: {"sha256": file_sha256(folder / name), "bytes": (folder / name).stat().st_size, **extra.get(name, {})}
            for name in names}


def file_sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def new_manifest(name: str, parts: dict[str, dict[str, Any]], interactions: Sequence[Interaction],
                 parent: str | None, note: str | None = None, catalog: CatalogPin | None = None) -> Manifest:
    sources = tuple(sorted({i.source for i in interactions})) or ("empty",)
    return Manifest(name=name, version=content_version(parts), parent=parent, created_at=utc_now(),
                    sources=sources, counts=counts_of(interactions), parts=parts, note=note,
                    catalog=None if catalog is None else catalog.summary())


@dataclass(frozen=True)
class Recorded:
    """A response ready to serve."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes
    row: int


LOOKUP_COLUMNS = ["fingerprint", "status", "headers", "body_offset", "body_length"]  # what serving needs


class Bundle:
    """An opened, verified bundle version: lookups by fingerprint, pages by query."""

    def __init__(self, folder: Path, manifest: Manifest, table: pa.Table, bodies: bytes | mmap.mmap):
        self.folder, self.manifest, self.table = folder, manifest, table
        self._bodies = bodies
        self._status: list[int] = table.column("status").to_pylist()
        self._headers: list[str] = table.column("headers").to_pylist()
        self._offset: list[int] = table.column("body_offset").to_pylist()
        self._length: list[int] = table.column("body_length").to_pylist()
        # First row per fingerprint, plus the few fingerprints recorded more than once: 100,000
        # one-element lists would cost more to build (and to garbage-collect) than the lookups save.
        self._first: dict[str, int] = {}
        self._repeats: dict[str, list[int]] = {}
        for row, fp in enumerate(table.column("fingerprint").to_pylist()):
            if fp not in self._first:
                self._first[fp] = row
            elif fp in self._repeats:
                self._repeats[fp].append(row)
            else:
                self._repeats[fp] = [self._first[fp], row]
        self._full: pa.Table | None = None  # the other index columns, read when first needed
        self._pages: dict[str, dict[int, dict[int, str]]] | None = None  # query fp → size → page → fp

    @classmethod
    def open(cls, folder: Path | str, *, verify: bool = True) -> Bundle:
        folder = Path(folder)
        manifest = Manifest.read(folder)
        if manifest.format != FORMAT:
            raise CorruptBundleError(f"{folder}: format {manifest.format!r}, this recorder reads {FORMAT!r}")
        if verify:
            verify_parts(folder, manifest)
        try:
            table = pq.read_table(folder / INDEX, columns=LOOKUP_COLUMNS)
        except (OSError, pa.ArrowException) as exc:
            raise CorruptBundleError(f"{folder / INDEX}: unreadable ({exc})") from None
        _, body_part = parts_of(manifest.parts)
        if body_part == BODIES_ZST:
            bodies = _decompress(folder / BODIES_ZST, manifest.parts[BODIES_ZST].get("raw_bytes"))
        else:
            bodies = _map(folder / BODIES)
        return cls(folder, manifest, table, bodies)

    def catalog_pin(self) -> CatalogPin | None:
        """The tool catalog this version was recorded with; None for a bundle recorded before catalogs were pinned.

        Raises:
            CorruptBundleError: the pin is unreadable or is not the catalog the manifest names.
        """
        if self.manifest.catalog is None:
            return None
        path = self.folder / CATALOG_PART
        try:
            pin = CatalogPin.from_bytes(path.read_bytes(), where=str(path))
        except (OSError, ValueError) as exc:
            raise CorruptBundleError(str(exc)) from None
        if pin.version != self.manifest.catalog.get("version"):
            raise CorruptBundleError(f"{path}: catalog {pin.version}, the manifest pins {self.manifest.catalog.get('version')}")
        return pin

    def column(self, name: str) -> list[Any]:
        """One index column as a list (the ones serving does not need are read on first use)."""
        if name in LOOKUP_COLUMNS:
            return self.table.column(name).to_pylist()
        if self._full is None:
            self._full = pq.read_table(self.folder / INDEX, columns=[n for n in SCHEMA.names
                                                                     if n not in LOOKUP_COLUMNS])
        return self._full.column(name).to_pylist()

    @property
    def version(self) -> str:
        return self.manifest.version

    def __len__(self) -> int:
        return len(self._status)

    def response(self, row: int) -> Recorded:
        start = self._offset[row]
        headers = [tuple(h) for h in json.loads(self._headers[row])]
        return Recorded(self._status[row], headers, bytes(self._bodies[start:start + self._length[row]]), row)

    @property
    def fingerprints(self) -> int:
        """How many distinct requests the bundle answers."""
        return len(self._first)

    def rows(self, fingerprint: str) -> list[int]:
        """Rows recorded for ``fingerprint``, in recorded order."""
        repeated = self._repeats.get(fingerprint)
        if repeated is not None:
            return repeated
        row = self._first.get(fingerprint)
        return [] if row is None else [row]

    def pages(self, query_fingerprint: str) -> dict[int, dict[int, str]]:
        """Recorded pages of a query: size → page → fingerprint of that page's request."""
        if self._pages is None:
            pages: dict[str, dict[int, dict[int, str]]] = defaultdict(lambda: defaultdict(dict))
            cols = {n: self.column(n) for n in ("query_fingerprint", "page", "size", "fingerprint")}
            for qfp, page, size, fp in zip(cols["query_fingerprint"], cols["page"], cols["size"], cols["fingerprint"]):
                if qfp is not None and page is not None and size is not None:
                    pages[qfp][size][page] = fp
            self._pages = pages
        return {size: dict(p) for size, p in self._pages.get(query_fingerprint, {}).items()}

    def interactions(self) -> Iterable[Interaction]:
        """Every interaction, in recorded order (reads the full index, request bodies included)."""
        table = pq.read_table(self.folder / INDEX)
        for row in table.to_pylist():
            start, length = row["body_offset"], row["body_length"]
            yield Interaction(
                fingerprint=row["fingerprint"], method=row["method"], url=row["url"], platform=row["platform"],
                status=row["status"], body=bytes(self._bodies[start:start + length]),
                headers=tuple(tuple(h) for h in json.loads(row["headers"])),
                query_fingerprint=row["query_fingerprint"], page=row["page"], size=row["size"], tool=row["tool"],
                request_body=row["request_body"], recorded_at=row["recorded_at"], source=row["source"],
                recorder_version=row["recorder_version"], origin=Origin(row["origin"]), duration_ms=row["duration_ms"])

    def urls(self) -> list[str]:
        return self.column("url")


def verify_parts(folder: Path, manifest: Manifest) -> None:
    """Every part present with the size and SHA-256 the manifest says, and the version matching them."""
    names = stored_parts(manifest.parts)
    if manifest.catalog is not None and CATALOG_PART not in names:  # a pinned catalog is a part like the others
        names += (CATALOG_PART,)
    for name in names:
        expected = manifest.parts.get(name)
        path = folder / name
        if expected is None:
            raise CorruptBundleError(f"{folder}: manifest lists no part {name!r}")
        if not path.is_file():
            raise CorruptBundleError(f"{folder}: part {name} is missing")
        if path.stat().st_size != expected["bytes"] or file_sha256(path) != expected["sha256"]:
            raise CorruptBundleError(f"{path}: content does not match the manifest's SHA-256 "
                                     f"(the bundle was changed or damaged; refusing all of it)")
    if content_version(manifest.parts) != manifest.version:
        raise CorruptBundleError(f"{folder}: manifest version {manifest.version} does not match its part hashes")


def _decompress(path: Path, raw_bytes: Any) -> bytes:
    if not isinstance(raw_bytes, int) or raw_bytes < 0:
        raise CorruptBundleError(f"{path}: the manifest does not give the bodies' uncompressed size")
    if raw_bytes == 0:
        return b""
    try:
        return pa.Codec("zstd").decompress(path.read_bytes(), decompressed_size=raw_bytes, asbytes=True)
    except (OSError, pa.ArrowException) as exc:
        raise CorruptBundleError(f"{path}: not a zstd stream of {raw_bytes} bytes ({exc})") from None


def _map(path: Path) -> bytes | mmap.mmap:
    with open(path, "rb") as f:
        if path.stat().st_size == 0:
            return b""
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
