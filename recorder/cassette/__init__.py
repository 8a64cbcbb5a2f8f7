"""Cassette bundles: immutable, content-addressed, versioned recordings of upstream exchanges."""

from .bundle import BODIES, INDEX, MANIFEST, SIGNATURE, Bundle, CorruptBundleError, Manifest, Recorded, verify_parts
from .interaction import RECORDER_VERSION, Interaction, Origin
from .store import BundleNotFoundError, BundleRef, CassetteStore, Recording, check_name

__all__ = [
    "BODIES", "INDEX", "MANIFEST", "RECORDER_VERSION", "SIGNATURE", "Bundle", "BundleNotFoundError", "BundleRef",
    "CassetteStore", "CorruptBundleError", "Interaction", "Manifest", "Origin", "Recorded", "Recording",
    "check_name", "verify_parts",
]
