"""Catalog rules a single ToolSpec's pydantic model cannot see on its own.

Each check returns human-readable problems; the loader refuses a file with any, naming the
file and the tool, so a bad spec is found at start-up rather than on the first call.
"""

from __future__ import annotations

from collections import Counter

from .generic import PLATFORMS
from .spec import ParamKind, ToolSpec


def _duplicates(names: list[str]) -> list[str]:
    return sorted(n for n, c in Counter(names).items() if c > 1)


def spec_problems(spec: ToolSpec) -> list[str]:
    problems: list[str] = []
    params = [p.name for p in spec.params]
    if dup := _duplicates(params):
        problems.append(f"duplicate parameter(s) {dup}")
    if dup := _duplicates([f.name for f in spec.output]):
        problems.append(f"duplicate output field(s) {dup}")
    for p in spec.params:
        if p.enum and p.default is not None and str(p.default) not in p.enum:
            problems.append(f"default {p.default!r} of {p.name!r} is not one of its enum values")
    ep = spec.endpoint
    if ep is None:
        return problems
    if ep.platform not in PLATFORMS or ep.platform != spec.platform:
        problems.append(f"endpoint platform {ep.platform!r} must be a known platform equal to the tool's {spec.platform!r}")
    if (ep.family == "schoolinfo") != (ep.base == "schoolinfo"):
        problems.append("the schoolinfo family goes with base 'schoolinfo' and only with it")
    normal = {p.name for p in spec.params if p.kind is ParamKind.NORMAL}
    for what, names in (("path_params", ep.path_params), ("local_filters", tuple(ep.local_filters))):
        if missing := [n for n in names if n not in normal]:
            problems.append(f"endpoint {what} {missing} are not parameters of the tool")
    if ep.path_params and ep.family != "seoul":
        problems.append("path_params are for the seoul family only")
    kinds = {p.kind for p in spec.params}
    if ParamKind.API_KEY not in kinds:
        problems.append("an upstream tool needs its KEY parameter")
    if spec.paged and not {ParamKind.PAGE_NO, ParamKind.PAGE_SIZE} <= kinds:
        problems.append("a paged tool needs pageNo and numOfRows")
    return problems
