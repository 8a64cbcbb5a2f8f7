"""recorder: record/replay transport, cassette bundles, drift reports and the sandbox upstream."""

from .cassette import Bundle, BundleRef, CassetteStore, CorruptBundleError, Interaction, Origin, Recording
from .fingerprint import MASK, RequestKey, request_key
from .redaction import KeyScanner, SecretLeakError
from .routes import Route, Routes, UnknownRouteError
from .transport import Mode, RecorderTransport, ReplayMiss, ReplayStats

__all__ = [
    "MASK", "Bundle", "BundleRef", "CassetteStore", "CorruptBundleError", "Interaction", "KeyScanner", "Mode",
    "Origin", "RecorderTransport", "Recording", "ReplayMiss", "ReplayStats", "RequestKey", "Route", "Routes",
    "SecretLeakError", "UnknownRouteError", "request_key",
]
