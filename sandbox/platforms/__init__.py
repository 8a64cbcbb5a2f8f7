"""The ten emulated platforms. Each module defines SPEC, create_app and fault_response."""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

from .base import PlatformSpec

# Module names in the order of the paper's Table 5 (traffic, finance, education, law, politics, district).
PLATFORM_MODULES = ("expressway", "seoul", "dart", "krx", "kdic", "edu", "hrdk", "law", "assembly", "gyeonggi")


def platform_modules() -> list[ModuleType]:
    return [import_module(f"{__name__}.{m}") for m in PLATFORM_MODULES]


def platform_specs() -> list[PlatformSpec]:
    """Every emulated platform base (a module's SPEC, then its EXTRA_SPECS), in Table 5 order."""
    specs: list[PlatformSpec] = []
    for module in platform_modules():
        specs.append(module.SPEC)
        specs.extend(getattr(module, "EXTRA_SPECS", ()))
    return specs


__all__ = ["PLATFORM_MODULES", "PlatformSpec", "platform_modules", "platform_specs"]
