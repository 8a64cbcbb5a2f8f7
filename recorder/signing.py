"""Ed25519 signatures on cassette bundles: who made this bundle, and that nobody changed it since.

    generate_keypair(Path("kopa-signing.pem"), Path("kopa-signing.pub.pem"))
    sign_bundle(ref.folder, Path("kopa-signing.pem"))          # writes manifest.sig
    verify_bundle_signature(folder, Path("kopa-signing.pub.pem"))

What is signed: the exact bytes of ``manifest.json``. The manifest holds every part's SHA-256
and size, and the version id is the hash of those, so the signature covers all content once
the parts are checked against it (``verify_bundle_signature`` does both).

``manifest.sig`` is a detached signature: one line of standard base64 of the 64-byte raw
Ed25519 signature (RFC 8032), nothing else. Outside this tool: ``base64 -d manifest.sig >
sig.bin && openssl pkeyutl -verify -pubin -inkey key.pub.pem -rawin -in manifest.json
-sigfile sig.bin``. It is the one file a version folder may gain after it was written; it is
not a part, so the version id does not change. Keys are PEM: PKCS#8 private keys (unencrypted,
file mode 0600), SubjectPublicKeyInfo public keys.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import uuid
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from .cassette.bundle import MANIFEST, SIGNATURE, Manifest, verify_parts


class SignatureError(ValueError):
    """A bundle's signature is missing or does not verify, or a key file is unusable."""


def generate_keypair(private_path: Path, public_path: Path) -> str:
    """Write a new Ed25519 key pair; returns the public key's id. Refuses to overwrite either file."""
    private_path, public_path = Path(private_path), Path(public_path)
    for path in (private_path, public_path):
        if path.exists():
            raise FileExistsError(f"{path} already exists; refusing to overwrite a key file (move it away first)")
    key = Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
    public_pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo)
    # O_EXCL: created here, owner-only from the first byte (no window with a wider mode).
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(private_pem)
    try:
        fd = os.open(public_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(public_pem)
    except BaseException:
        private_path.unlink()  # no half a key pair
        raise
    return key_id(key.public_key())


def key_id(public_key: Ed25519PublicKey) -> str:
    """A short name for a public key: SHA-256 of its raw 32 bytes, first 16 hex digits."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def load_private_key(path: Path) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(Path(path).read_bytes(), password=None)
    except FileNotFoundError:
        raise SignatureError(f"{path}: no such private key file") from None
    except (ValueError, TypeError) as exc:
        raise SignatureError(f"{path}: not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SignatureError(f"{path}: a {type(key).__name__}, not an Ed25519 private key")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(Path(path).read_bytes())
    except FileNotFoundError:
        raise SignatureError(f"{path}: no such public key file") from None
    except (ValueError, TypeError) as exc:
        raise SignatureError(f"{path}: not a PEM public key ({exc})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise SignatureError(f"{path}: a {type(key).__name__}, not an Ed25519 public key")
    return key


def sign_bundle(folder: Path, private_key_path: Path) -> Path:
    """Sign ``folder``'s manifest.json (its parts are checked first: never sign damaged content)."""
    folder = Path(folder)
    verify_parts(folder, Manifest.read(folder))
    key = load_private_key(private_key_path)
    signature = base64.b64encode(key.sign((folder / MANIFEST).read_bytes())).decode("ascii") + "\n"
    # Written beside and renamed into place: a reader sees the old signature or the new, never half.
    target = folder / SIGNATURE
    tmp = folder / f".{SIGNATURE}.{uuid.uuid4().hex}"
    tmp.write_text(signature, encoding="ascii")
    tmp.chmod(0o444)
    os.replace(tmp, target)
    return target


def verify_bundle_signature(folder: Path, public_key_path: Path, *, check_parts: bool = True) -> Manifest:
    """The manifest, once its signature verifies with the public key (and its parts match it)."""
    folder = Path(folder)
    public_key = load_public_key(public_key_path)
    sig_path = folder / SIGNATURE
    if not sig_path.is_file():
        raise SignatureError(f"{folder}: unsigned bundle (no {SIGNATURE}); a signature by key "
                             f"{key_id(public_key)} is required")
    try:
        signature = base64.b64decode(sig_path.read_text(encoding="ascii").strip(), validate=True)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise SignatureError(f"{sig_path}: not a base64 Ed25519 signature") from None
    signed = (folder / MANIFEST).read_bytes() if (folder / MANIFEST).is_file() else None
    manifest = Manifest.read(folder)  # a clear error when there is no (readable) manifest
    try:
        public_key.verify(signature, signed or b"")
    except InvalidSignature:
        raise SignatureError(f"{folder}: signature does not verify with public key {key_id(public_key)} "
                             f"({public_key_path}): signed with another key, or {MANIFEST} was changed "
                             f"after signing") from None
    if (folder / MANIFEST).read_bytes() != signed:  # what was parsed must be what was verified
        raise SignatureError(f"{folder / MANIFEST}: changed while it was being verified")
    if check_parts:
        verify_parts(folder, manifest)
    return manifest


__all__ = ["SignatureError", "generate_keypair", "key_id", "load_private_key", "load_public_key", "sign_bundle",
           "verify_bundle_signature"]
