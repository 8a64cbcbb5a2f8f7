"""recorder: the record/replay transport and what it keeps.

The httpx transport (``transport``) with request fingerprints (``fingerprint``), platform routes
(``routes``) and key redaction (``redaction``); cassette bundles (``cassette``) with their pinned tool
catalog (``catalog_pin``), signatures (``signing``), import from elsewhere (``transfer``), SQL over
bundles (``query``) and vcrpy interchange (``vcr``); drift reports between recordings (``drift``).
"""

from .cassette import Bundle, BundleRef, CassetteStore, CorruptBundleError, Interaction, Origin, Recording
from .capture import Capture
from .catalog_pin import CatalogDiff, CatalogMismatchError, CatalogPin, ToolChange, diff_catalogs
from .fingerprint import MASK, RequestKey, request_key
from .redaction import KeyScanner, SecretLeakError
from .routes import Route, Routes, UnknownRouteError
from .transport import Mode, RecorderTransport, ReplayMiss, ReplayStats

__all__ = [
    "MASK", "Bundle", "BundleRef", "Capture", "CassetteStore", "CatalogDiff", "CatalogMismatchError", "CatalogPin",
    "CorruptBundleError", "Interaction", "KeyScanner", "Mode",
    "Origin", "RecorderTransport", "Recording", "ReplayMiss", "ReplayStats", "RequestKey", "Route", "Routes",
    "SecretLeakError", "ToolChange", "UnknownRouteError", "diff_catalogs", "request_key",
]
