"""The templates that write the task set: one async function per family of tasks, a few instances each.

    @template("traffic", count=4)
    async def busiest_tollbooth(t: Draft) -> None: ...

Instance ``i`` of a template gets ``t.variant == i`` and ``t.rng`` seeded by (template, i), so the same
template, instance and recorded data always write the same task. ``t.pick(values)`` hands instance ``i``
the i-th value of a fixed shuffle of ``values``, so the instances of a template ask about different
entities. Templates live in ``bench.taskset.templates.<domain>``; importing that package registers them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from .draft import Draft

__all__ = ["TEMPLATES", "Template", "template"]

TemplateFn = Callable[[Draft], Awaitable[None]]


@dataclass(frozen=True)
class Template:
    name: str
    domain: str
    count: int
    fn: TemplateFn


TEMPLATES: list[Template] = []


def template(domain: str, count: int = 1) -> Callable[[TemplateFn], TemplateFn]:
    """Register ``fn`` as ``count`` tasks of ``domain``; the function's name is the template's name."""

    def register(fn: TemplateFn) -> TemplateFn:
        if any(t.name == fn.__name__ for t in TEMPLATES):
            raise ValueError(f"template {fn.__name__!r} is registered twice")
        TEMPLATES.append(Template(fn.__name__, domain, count, fn))
        return fn

    return register
