"""The cassettes folder: bundle names, their versions, HEAD, and committing new versions.

    store = CassetteStore(Path("cassettes"))
    recording = store.recording("kopa-bench", parent="head")   # collects interactions (thread-safe)
    ...                                                         # the transport adds to it
    ref = recording.commit()                                    # a new version; HEAD moves to it

A version folder is never changed after it is renamed into place (its files are read-only).
A commit takes the name's lock, reads HEAD, builds the new content (the parent's interactions,
less the fingerprints this recording answered anew, plus this recording's), scans it for keys,
writes it to a temporary folder and renames it into place, then moves HEAD. Two recorders that
commit into one name therefore both land: the later commit's parent is the earlier one.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import threading
import uuid
from collections.abc import Iterable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..redaction import KeyScanner, SecretLeakError
from .bundle import MANIFEST, Bundle, CorruptBundleError, Manifest, new_manifest, write_parts
from .interaction import Interaction

NAME_RULE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
HEAD = "HEAD"


class BundleNotFoundError(LookupError):
    """No such bundle name or version in the cassettes folder."""


def check_name(name: str) -> str:
    """A bundle name is one plain folder name: it cannot climb out of the cassettes folder."""
    if not NAME_RULE.match(name) or ".." in name:
        raise ValueError(f"invalid bundle name {name!r}: use 1-64 letters, digits, '.', '_' or '-', starting with a "
                         f"letter or digit (no '/', no '..')")
    return name


@dataclass(frozen=True)
class BundleRef:
    name: str
    version: str
    folder: Path

    def __str__(self) -> str:
        return f"{self.name}@{self.version}"


class CassetteStore:
    def __init__(self, root: Path | str):
        self.root = Path(root)

    def names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and NAME_RULE.match(p.name))

    def versions(self, name: str) -> list[Manifest]:
        """Every version of ``name``, oldest first."""
        folder = self.root / check_name(name)
        if not folder.is_dir():
            return []
        manifests = [Manifest.read(p) for p in folder.iterdir() if (p / MANIFEST).is_file()]
        return sorted(manifests, key=lambda m: (m.created_at, m.version))

    def head(self, name: str) -> str | None:
        try:
            return (self.root / check_name(name) / HEAD).read_text().strip() or None
        except FileNotFoundError:
            return None

    def resolve(self, ref: str) -> BundleRef:
        """``NAME`` (its HEAD), ``NAME@VERSION`` (a unique prefix will do), or a version folder's path."""
        path = Path(ref)
        if (path / MANIFEST).is_file():
            manifest = Manifest.read(path)
            return BundleRef(manifest.name, manifest.version, path)
        name, _, version = ref.partition("@")
        check_name(name)
        if not version:
            version = self.head(name) or ""
            if not version:
                known = ", ".join(self.names()) or "none"
                raise BundleNotFoundError(f"no bundle named {name!r} in {self.root} (bundles: {known})")
        folder = self.root / name
        matches = [p for p in folder.iterdir() if p.name.startswith(version) and (p / MANIFEST).is_file()] \
            if folder.is_dir() else []
        if len(matches) != 1:
            what = "is ambiguous" if matches else "does not exist"
            raise BundleNotFoundError(f"version {version!r} of bundle {name!r} {what} in {self.root}")
        return BundleRef(name, matches[0].name, matches[0])

    def open(self, ref: str, *, verify: bool = True) -> Bundle:
        return Bundle.open(self.resolve(ref).folder, verify=verify)

    @contextmanager
    def locked(self, name: str):
        folder = self.root / check_name(name)
        folder.mkdir(parents=True, exist_ok=True)
        with _THREAD_LOCK, open(folder / ".lock", "w") as lock:  # threads of one process, then processes
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield folder

    def write(self, name: str, interactions: list[Interaction], *, parent: str | None,
              keys: Mapping[str, str] | Iterable[str] = (), note: str | None = None,
              move_head: bool = True, compress: bool = False) -> BundleRef:
        """Write one version of exactly ``interactions`` (caller holds no lock; taken here)."""
        with self.locked(name) as folder:
            return self._write_locked(folder, name, interactions, parent=parent, keys=keys, note=note,
                                      move_head=move_head, compress=compress)

    def _write_locked(self, folder: Path, name: str, interactions: list[Interaction], *, parent: str | None,
                      keys: Mapping[str, str] | Iterable[str], note: str | None, move_head: bool,
                      compress: bool = False) -> BundleRef:
        refuse_secrets(interactions, KeyScanner(keys))
        tmp = folder / f".tmp-{uuid.uuid4().hex}"
        tmp.mkdir()
        try:
            parts = write_parts(tmp, interactions, compress=compress)
            manifest = new_manifest(name, parts, interactions, parent, note)
            (tmp / MANIFEST).write_text(manifest.to_json(), encoding="utf-8")
            final = folder / manifest.version
            if final.exists():  # the same content is already a version: content addressing makes it one
                shutil.rmtree(tmp)
            else:
                seal(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        if move_head:
            write_atomic(folder / HEAD, manifest.version + "\n")
        return BundleRef(name, manifest.version, final)

    def recording(self, name: str, *, inherit: bool = True, keys: Mapping[str, str] | Iterable[str] = (),
                  note: str | None = None, stamp: str | None = None) -> Recording:
        """``stamp``: the ``recorded_at`` of every interaction, with timings zeroed, so that a recording of a
        deterministic upstream (the sandbox) is the same content, and the same version, every time it is made."""
        return Recording(self, check_name(name), inherit=inherit, keys=keys, note=note, stamp=stamp)


_THREAD_LOCK = threading.RLock()


class Recording:
    """Interactions collected for one commit into a bundle name."""

    def __init__(self, store: CassetteStore, name: str, *, inherit: bool, keys: Mapping[str, str] | Iterable[str],
                 note: str | None, stamp: str | None = None):
        self.store, self.name, self.inherit, self.note, self.stamp = store, name, inherit, note, stamp
        self.keys = dict(keys) if isinstance(keys, Mapping) else list(keys)
        self._items: list[Interaction] = []
        self._lock = threading.Lock()

    def add(self, interaction: Interaction) -> None:
        if self.stamp is not None:
            interaction = interaction.with_(recorded_at=self.stamp, duration_ms=0.0)
        with self._lock:
            self._items.append(interaction)

    def __len__(self) -> int:
        return len(self._items)

    @property
    def interactions(self) -> list[Interaction]:
        with self._lock:
            return list(self._items)

    def commit(self, *, compress: bool = False) -> BundleRef:
        """A new version: the current HEAD's content (when inheriting) updated with this recording.

        ``compress``: store the bodies zstd-compressed (a bundle to ship; opening decompresses it in memory).
        """
        mine = self.interactions
        with self.store.locked(self.name) as folder:
            parent = self.store.head(self.name)
            content = mine
            if parent and self.inherit:
                answered = {i.fingerprint for i in mine}
                kept = [i for i in Bundle.open(folder / parent).interactions() if i.fingerprint not in answered]
                content = kept + mine
            return self.store._write_locked(folder, self.name, content, parent=parent, keys=self.keys,
                                            note=self.note, move_head=True, compress=compress)


def refuse_secrets(interactions: Iterable[Interaction], scanner: KeyScanner) -> None:
    if not scanner:
        return
    for seq, item in enumerate(interactions):
        for what, data in (("request URL", item.url), ("request body", item.request_body or b""),
                           ("response headers", item.headers_json()), ("response body", item.body),
                           ("tool name", item.tool or "")):
            found = scanner.find(data)
            if found:
                raise SecretLeakError(f"interaction {seq} ({item.platform} {item.method} {item.url.split('?')[0]}): "
                                      f"its {what} holds {found}; the bundle was not written")


def seal(tmp: Path, final: Path) -> None:
    """Make a finished version folder read-only and move it into place in one rename."""
    for part in tmp.iterdir():
        part.chmod(0o444)
    os.rename(tmp, final)


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    tmp.write_text(text)
    os.replace(tmp, path)


__all__ = ["BundleNotFoundError", "BundleRef", "CassetteStore", "CorruptBundleError", "Recording", "check_name"]
