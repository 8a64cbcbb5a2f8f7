"""The cassettes folder: bundle names, their versions, HEAD, and committing new versions.

    store = CassetteStore(Path("cassettes"))
    recording = store.recording("kopa-bench")                   # collects interactions (thread-safe)
    ...                                                         # the transport adds to it (journaled)
    ref = recording.commit()                                    # a new version; HEAD moves to it
    store.unsealed()                                            # recordings a crash left unsealed
    store.recover("kopa-bench")                                 # seal them (or discard=True)

A version folder is never changed after it is renamed into place (its files are read-only).
Every interaction added is first appended to the recording's journal (``journal.py``), so a
crash at any moment leaves the sealed versions as they were and the interrupted recording on
disk, unsealed: ``recover`` seals or discards it, and ``recording(resume=True)`` continues it.
A commit takes the name's lock, reads HEAD, builds the new content (the parent's interactions,
less the fingerprints this recording answered anew, plus this recording's), scans it for keys,
writes it to a temporary folder and renames it into place, then moves HEAD. Two recorders that
commit into one name therefore both land: the later commit's parent is the earlier one.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..catalog_pin import CATALOG_PART, CatalogPin
from ..redaction import KeyScanner, SecretLeakError
from . import journal
from .bundle import MANIFEST, Bundle, CorruptBundleError, Manifest, new_manifest, write_parts
from .interaction import Interaction
from .journal import DiskFullError, JournalInfo, JournalInUseError, JournalWriter

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
        # dot folders are work in progress (a seal cut short leaves a whole manifest in its .tmp-*)
        manifests = [Manifest.read(p) for p in folder.iterdir() if not p.name.startswith(".") and (p / MANIFEST).is_file()]
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
              move_head: bool = True, compress: bool = False, catalog: CatalogPin | None = None) -> BundleRef:
        """Write one version of exactly ``interactions`` (caller holds no lock; taken here); ``catalog``: the tool
        catalog to pin in it."""
        with self.locked(name) as folder:
            return self._write_locked(folder, name, interactions, parent=parent, keys=keys, note=note,
                                      move_head=move_head, compress=compress, catalog=catalog)

    def _write_locked(self, folder: Path, name: str, interactions: list[Interaction], *, parent: str | None,
                      keys: Mapping[str, str] | Iterable[str], note: str | None, move_head: bool,
                      compress: bool = False, before_seal: Callable[[str], None] | None = None,
                      catalog: CatalogPin | None = None) -> BundleRef:
        """``before_seal(version)`` runs after every part is written and synced, just before the rename."""
        refuse_secrets(interactions, KeyScanner(keys))
        tmp = folder / f".tmp-{uuid.uuid4().hex}"
        try:
            tmp.mkdir()
            parts = write_parts(tmp, interactions, compress=compress, catalog=catalog)
            manifest = new_manifest(name, parts, interactions, parent, note, catalog)
            (tmp / MANIFEST).write_text(manifest.to_json(), encoding="utf-8")
            final = folder / manifest.version
            if final.exists():  # the same content is already a version: content addressing makes it one
                shutil.rmtree(tmp)
            else:
                sync_folder(tmp)
                if before_seal is not None:
                    before_seal(manifest.version)
                seal(tmp, final)
            if move_head:
                write_atomic(folder / HEAD, manifest.version + "\n")
        except OSError as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            if exc.errno in (errno.ENOSPC, errno.EDQUOT) and not isinstance(exc, DiskFullError):
                raise DiskFullError(f"no space left on device while writing a new version of bundle {name!r} in "
                                    f"{folder}: nothing was sealed and every earlier version is untouched") from exc
            raise
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return BundleRef(name, manifest.version, final)

    def recording(self, name: str, *, inherit: bool = True, keys: Mapping[str, str] | Iterable[str] = (),
                  note: str | None = None, stamp: str | None = None, resume: bool = False,
                  catalog: CatalogPin | None = None) -> Recording:
        """``stamp``: the ``recorded_at`` of every interaction, with timings zeroed, so that a recording of a
        deterministic upstream (the sandbox) is the same content, and the same version, every time it is made.
        ``resume``: continue the newest interrupted recording of ``name`` made with the same ``inherit``,
        ``note``, ``stamp`` and ``catalog`` (its interactions count as this recording's); otherwise start a new one.
        ``catalog``: the tool catalog served while recording, pinned in the version the commit seals."""
        return Recording(self, check_name(name), inherit=inherit, keys=keys, note=note, stamp=stamp, resume=resume,
                         catalog=catalog)

    def unsealed(self, name: str | None = None) -> list[JournalInfo]:
        """Recordings on disk that were never sealed: in progress, interrupted, or sealed but not cleaned up."""
        out = []
        for each in ([check_name(name)] if name else self.names()):
            folder = self.root / each
            sealed = {p.name for p in folder.iterdir() if (p / MANIFEST).is_file()} if folder.is_dir() else set()
            out += [journal.inspect(p, each, sealed) for p in journal.journals(folder)]
        return out

    def recover(self, name: str, *, discard: bool = False) -> list[Recovered]:
        """Seal (or ``discard``) every interrupted recording of ``name``; one outcome per journal.

        A recording still held by a live recorder is left alone (outcome ``in use``). Sealing builds the
        version exactly as the interrupted recording's commit would have (on top of the current HEAD when
        it inherits). Leftovers of cut writes (``.tmp-*``, ``.new-*``) are removed.

        Raises:
            BundleNotFoundError: no bundle folder named ``name``.
            DiskFullError: no space to seal; the journal stays for another try.
        """
        if not (self.root / check_name(name)).is_dir():
            known = ", ".join(self.names()) or "none"
            raise BundleNotFoundError(f"no bundle named {name!r} in {self.root} (bundles: {known})")
        outcomes = []
        with self.locked(name) as folder:
            for leftover in folder.iterdir():
                # .tmp-* belong to seals, which hold the lock we hold now; a .new-* is a journal being made
                # without it (a recorder's first exchange), so only an old one is a crash's leftover
                stale = leftover.name.startswith(".tmp-") or (leftover.name.startswith(journal.NEW_PREFIX)
                                                              and time.time() - leftover.stat().st_mtime > 60)
                if leftover.is_dir() and stale:
                    shutil.rmtree(leftover, ignore_errors=True)
            for path in journal.journals(folder):
                outcomes.append(self._recover_one(folder, name, path, discard))
        return outcomes

    def _recover_one(self, folder: Path, name: str, path: Path, discard: bool) -> Recovered:
        jid = path.name.removeprefix(journal.PREFIX)
        try:
            writer, items = JournalWriter.adopt(path)
        except JournalInUseError:
            return Recovered(name, jid, "in use", len(journal.read_frames(path / journal.LOG).interactions), None,
                             "a running recorder holds it; stop that recorder first")
        info = journal.inspect(path, name, set())
        if discard:
            writer.remove()
            return Recovered(name, jid, "discarded", len(items), None, "")
        marked = (info.sealing or {}).get("version")
        if marked and (folder / marked).is_dir():  # the crash came after the rename: finish, never seal twice
            head = self.head(name)
            if head in (None, (info.sealing or {}).get("parent")):
                write_atomic(folder / HEAD, marked + "\n")
            writer.remove()
            return Recovered(name, jid, "sealed", len(items), marked, "the seal was already in place; finished it")
        if not items:
            writer.remove()
            return Recovered(name, jid, "discarded", 0, None, "nothing was journaled")
        meta = info.meta
        pin = None
        if (path / CATALOG_PART).is_file():  # the catalog the interrupted recorder served is pinned as it would have
            try:
                pin = CatalogPin.from_bytes((path / CATALOG_PART).read_bytes(), where=str(path / CATALOG_PART))
            except ValueError:
                pin = None  # a pin cut short by the crash: the version pins no catalog, as an old bundle
        ref = _seal_locked(self, folder, name, items, writer, inherit=bool(meta.get("inherit", True)),
                           note=meta.get("note"), catalog=pin)
        return Recovered(name, jid, "sealed", len(items), ref.version, "")


_THREAD_LOCK = threading.RLock()


@dataclass(frozen=True)
class Recovered:
    """What ``recover`` did with one unsealed recording."""

    name: str
    id: str
    action: str  # "sealed", "discarded" or "in use"
    interactions: int
    version: str | None
    detail: str


def _seal_locked(store: CassetteStore, folder: Path, name: str, mine: list[Interaction], writer: JournalWriter | None,
                 *, inherit: bool, note: str | None, keys: Mapping[str, str] | Iterable[str] = (),
                 compress: bool = False, catalog: CatalogPin | None = None) -> BundleRef:
    """The new version (HEAD's content updated with ``mine`` when inheriting); then the journal goes."""
    parent = store.head(name)
    content = mine
    if parent and inherit:
        answered = {i.fingerprint for i in mine}
        kept = [i for i in Bundle.open(folder / parent).interactions() if i.fingerprint not in answered]
        content = kept + mine
    if writer is not None:
        writer.sync()
    ref = store._write_locked(folder, name, content, parent=parent, keys=keys, note=note, move_head=True,
                              compress=compress, catalog=catalog,
                              before_seal=None if writer is None else lambda v: writer.mark_sealing(v, parent))
    if writer is not None:
        writer.remove()
    return ref


class Recording:
    """Interactions collected for one commit into a bundle name, journaled as they come."""

    def __init__(self, store: CassetteStore, name: str, *, inherit: bool, keys: Mapping[str, str] | Iterable[str],
                 note: str | None, stamp: str | None = None, resume: bool = False, catalog: CatalogPin | None = None):
        self.store, self.name, self.inherit, self.note, self.stamp = store, name, inherit, note, stamp
        self.catalog = catalog
        self.keys = dict(keys) if isinstance(keys, Mapping) else list(keys)
        self._scanner = KeyScanner(self.keys)
        self._items: list[Interaction] = []
        self._lock = threading.Lock()
        self._writer: JournalWriter | None = None
        self._leak: SecretLeakError | None = None
        self.resumed = 0  # interactions taken over from an interrupted recording
        if resume:
            self._resume()

    def _meta(self) -> dict[str, object]:
        return {"name": self.name, "inherit": self.inherit, "note": self.note, "stamp": self.stamp,
                "catalog": None if self.catalog is None else self.catalog.version}

    def _resume(self) -> None:
        if not (self.store.root / self.name).is_dir():
            return
        with self.store.locked(self.name) as folder:
            sealed = {p.name for p in folder.iterdir() if (p / MANIFEST).is_file()}
            for path in reversed(list(journal.journals(folder))):  # newest first (ids start with the time)
                info = journal.inspect(path, self.name, sealed)
                if info.state != "interrupted" or any(info.meta.get(k) != v for k, v in self._meta().items()):
                    continue
                try:
                    self._writer, items = JournalWriter.adopt(path)
                except JournalInUseError:
                    continue
                (path / journal.SEALING).unlink(missing_ok=True)  # that seal never landed; a new one will
                self._items, self.resumed = items, len(items)
                if info.refused:  # a key met before the restart refuses the bundle just as one met now would
                    self._leak = SecretLeakError(f"{info.refused} exchange(s) recorded before the restart held a "
                                                 f"key and were refused (see {path / journal.REFUSED}); the "
                                                 f"bundle was not written")
                return

    @property
    def journal_folder(self) -> Path | None:
        """The journal this recording writes (None until its first interaction)."""
        return None if self._writer is None else self._writer.folder

    def add(self, interaction: Interaction) -> None:
        """Journal one interaction (a key in it is refused here: no byte of it is written).

        Raises:
            DiskFullError: no space for the journal; what was journaled before stays.
        """
        if self.stamp is not None:
            interaction = interaction.with_(recorded_at=self.stamp, duration_ms=0.0)
        with self._lock:
            if self._scanner:
                try:
                    refuse_secrets([interaction], self._scanner, start=len(self._items))
                except SecretLeakError as exc:
                    self._leak = self._leak or exc  # the commit refuses the bundle, as it always has
                    self._journal().refuse(interaction, str(exc))
                    return
            self._journal().append(interaction)
            self._items.append(interaction)

    def _journal(self) -> JournalWriter:
        if self._writer is None:
            self._writer = JournalWriter.create(self.store.root / self.name, self._meta())
            if self.catalog is not None:  # for `recover`: the version it seals pins what this recorder served
                (self._writer.folder / CATALOG_PART).write_bytes(self.catalog.to_bytes())
        return self._writer

    def __len__(self) -> int:
        return len(self._items)

    @property
    def interactions(self) -> list[Interaction]:
        with self._lock:
            return list(self._items)

    def commit(self, *, compress: bool = False) -> BundleRef:
        """A new version: the current HEAD's content (when inheriting) updated with this recording.

        ``compress``: store the bodies zstd-compressed (a bundle to ship; opening decompresses it in memory).

        Raises:
            SecretLeakError: an interaction held a key; nothing is sealed, and the interactions without a key
                stay journaled for ``recover``.
            DiskFullError: no space to seal; every earlier version is untouched and the journal stays.
        """
        with self._lock:  # what is added from here on goes to a new journal, which this commit leaves alone
            mine, writer, leak = list(self._items), self._writer, self._leak
            self._writer = None
        try:
            with self.store.locked(self.name) as folder:
                if leak is not None:
                    if writer is None or not mine:
                        if writer is not None:
                            writer.remove()
                        raise leak
                    # The bundle is refused, as ever; what was recorded without the key is not thrown away with it.
                    writer.close()
                    raise SecretLeakError(f"{leak}; the {len(mine):,} interaction(s) without a key stay journaled "
                                          f"in {writer.folder}: `kopa cassettes recover {self.name} --seal` seals "
                                          f"them, `--discard` drops them") from leak
                return _seal_locked(self.store, folder, self.name, mine, writer, inherit=self.inherit,
                                    note=self.note, keys=self.keys, compress=compress, catalog=self.catalog)
        except DiskFullError:
            with self._lock:  # the journal stays: this recording keeps writing it, or it is left for recover
                if self._writer is None:
                    self._writer = writer
                elif writer is not None:
                    writer.close()
            raise

    def close(self) -> None:
        """Release the journal without sealing it (it stays on disk, interrupted, for ``recover``)."""
        with self._lock:
            if self._writer is not None:
                self._writer.close()
                self._writer = None


def refuse_secrets(interactions: Iterable[Interaction], scanner: KeyScanner, *, start: int = 0) -> None:
    if not scanner:
        return
    for seq, item in enumerate(interactions, start):
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
    journal.fsync_dir(final.parent)


def sync_folder(folder: Path) -> None:
    """Every file in ``folder`` and the folder itself on disk, so the rename publishes whole files."""
    for part in folder.iterdir():
        with open(part, "rb") as f:
            os.fsync(f.fileno())
    journal.fsync_dir(folder)


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    try:
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


__all__ = ["BundleNotFoundError", "BundleRef", "CassetteStore", "CorruptBundleError", "DiskFullError", "Recording",
           "Recovered", "check_name"]
