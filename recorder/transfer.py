"""Bringing a bundle version into a cassettes folder from elsewhere (a USB stick, an air gap).

    ref = import_bundle(store, Path("/media/usb/kopa-bench/3f2a…"), public_key=Path("team.pub.pem"))
    if not ref.head_moved: print(ref.head_note)

The source is checked before the store is touched (manifest readable, format known, every
part's SHA-256 and size, the version id matching the part hashes, the signature when a public
key is given: then an unsigned bundle is refused), so a refusal writes nothing. The checked
files are copied into a temporary folder inside the name's folder, checked again there (the
stick may change or fail under us), made read-only and renamed into place: a version folder
appears whole or not at all. HEAD moves to the imported version only when the name has no
HEAD yet or the version's parent is the current HEAD; otherwise HEAD stays and the returned
``ImportedBundle`` says so. A version already in the store is verified and returned as is.
The manifest keeps the name it was recorded under even when imported under another ``name``.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

from .cassette.bundle import FORMAT, MANIFEST, SIGNATURE, CorruptBundleError, Manifest, stored_parts, verify_parts
from .cassette.store import HEAD, BundleRef, CassetteStore, check_name, seal, write_atomic
from .signing import SignatureError, key_id, load_public_key, verify_bundle_signature


@dataclass(frozen=True)
class ImportedBundle(BundleRef):
    """The imported version, and what the import did to the name's HEAD."""

    head: str | None = None  # the name's HEAD after the import
    head_moved: bool = False  # HEAD was set to this version by this import
    already_present: bool = False  # the version was in the store already; nothing was copied
    signed_by: str | None = None  # id of the public key whose signature verified (None: not checked)
    head_note: str = ""  # why HEAD was left where it was


def import_bundle(store: CassetteStore, source_folder: Path, *, name: str | None = None,
                  public_key: Path | None = None) -> ImportedBundle:
    """Copy one bundle version folder into ``store`` as ``NAME/VERSION`` once it checks out."""
    source = Path(source_folder)
    if not source.is_dir():
        raise CorruptBundleError(f"{source}: no such bundle version folder")
    manifest, signed = _check(source, public_key)
    name = check_name(name or manifest.name)
    signer = key_id(load_public_key(public_key)) if public_key is not None else None
    with store.locked(name) as folder:
        final = folder / manifest.version
        already = final.is_dir()
        if already:
            verify_parts(final, Manifest.read(final))  # never vouch for a damaged copy already there
            _adopt_signature(source, final, signed)
        else:
            _copy_in(source, folder, final, signed, public_key)
        head, moved, note = _update_head(store, folder, name, manifest)
    return ImportedBundle(name, manifest.version, final, head=head, head_moved=moved, already_present=already,
                          signed_by=signer, head_note=note)


def _check(folder: Path, public_key: Path | None) -> tuple[Manifest, bytes]:
    """The manifest and its exact bytes, once the folder holds a whole, undamaged (signed) bundle."""
    manifest = Manifest.read(folder)
    if manifest.format != FORMAT:
        raise CorruptBundleError(f"{folder}: format {manifest.format!r}, this recorder reads {FORMAT!r}")
    signed = (folder / MANIFEST).read_bytes()
    if public_key is not None:
        manifest = verify_bundle_signature(folder, public_key)  # parts too
    else:
        verify_parts(folder, manifest)
    if (folder / MANIFEST).read_bytes() != signed:
        raise CorruptBundleError(f"{folder / MANIFEST}: changed while it was being checked")
    return manifest, signed


def _copy_in(source: Path, folder: Path, final: Path, signed: bytes, public_key: Path | None) -> None:
    tmp = folder / f".import-{uuid.uuid4().hex}"
    tmp.mkdir()
    try:
        (tmp / MANIFEST).write_bytes(signed)  # the very bytes that were checked
        for part in stored_parts(json.loads(signed)["parts"]):  # the checked manifest says which parts there are
            shutil.copyfile(source / part, tmp / part)
        if (source / SIGNATURE).is_file():  # kept even when not checked: a later import may check it
            shutil.copyfile(source / SIGNATURE, tmp / SIGNATURE)
        try:
            _check(tmp, public_key)
        except (CorruptBundleError, SignatureError) as exc:
            raise type(exc)(f"{source}: the copy does not match what was checked (the source changed or "
                            f"could not be read back): {exc}") from None
        seal(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _adopt_signature(source: Path, final: Path, signed: bytes) -> None:
    """An unsigned copy of the same manifest gains the source's signature (it signs these very bytes)."""
    if (final / SIGNATURE).exists() or not (source / SIGNATURE).is_file():
        return
    if (final / MANIFEST).read_bytes() == signed:
        tmp = final / f".{SIGNATURE}.{uuid.uuid4().hex}"
        shutil.copyfile(source / SIGNATURE, tmp)
        tmp.chmod(0o444)
        os.replace(tmp, final / SIGNATURE)


def _update_head(store: CassetteStore, folder: Path, name: str, manifest: Manifest) -> tuple[str | None, bool, str]:
    current = store.head(name)
    if current == manifest.version:
        return current, False, ""
    if current is None or manifest.parent == current:
        write_atomic(folder / HEAD, manifest.version + "\n")
        return manifest.version, True, ""
    note = (f"HEAD of {name!r} stays at {current}: the imported version {manifest.version} descends from "
            f"{manifest.parent or 'nothing'}, not from the current HEAD (open it as {name}@{manifest.version})")
    return current, False, note


__all__ = ["ImportedBundle", "import_bundle"]
