"""Cassette bundles: immutable, content-addressed, versioned recordings of upstream exchanges."""

from .bundle import BODIES, INDEX, MANIFEST, SIGNATURE, Bundle, CorruptBundleError, Manifest, Recorded, verify_parts
from .interaction import RECORDER_VERSION, Interaction, Origin
from .journal import DiskFullError, JournalError, JournalInfo, JournalInUseError
from .store import BundleNotFoundError, BundleRef, CassetteStore, Recording, Recovered, check_name

__all__ = [
    "BODIES", "INDEX", "MANIFEST", "RECORDER_VERSION", "SIGNATURE", "Bundle", "BundleNotFoundError", "BundleRef",
    "CassetteStore", "CorruptBundleError", "DiskFullError", "Interaction", "JournalError", "JournalInUseError",
    "JournalInfo", "Manifest", "Origin", "Recorded", "Recording", "Recovered", "check_name", "verify_parts",
]
