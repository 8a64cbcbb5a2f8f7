"""Episodes that ended with an error, grouped by kind: a model that failed to answer is not a wrong answer.

    from bench.report.errors import error_groups, run_error_groups
    for group in run_error_groups(Path("runs/x")):       # from episodes.jsonl
        print(group.kind, group.count, group.example)     # "endpoint timeout", 6, "agent 'local' raised …"

The kind is read from the episode's ``error`` text (``run_episode`` writes ``agent 'NAME' raised TYPE: message``,
``agent 'NAME' gave no answer within N s``, ``judge unavailable: …``; the endpoint client's messages say
``no reply within``, ``cannot connect``, ``answered HTTP``). The first rule of ``KINDS`` that matches names the
kind; an error no rule knows is grouped under the exception's name, else ``other``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["KINDS", "ErrorGroup", "error_groups", "error_kind", "errors_line", "run_error_groups"]

# (kind, pattern), in the order they are tried: the more specific first (a context overflow is an HTTP 400).
KINDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((kind, re.compile(pattern, re.IGNORECASE)) for kind, pattern in (
    ("judge unavailable", r"^judge unavailable"),  # the episode's own error, if any, comes first in the text
    ("context too long", r"context (window|length)|maximum context|exceeds? .*context|too many tokens|n_ctx"),
    ("endpoint timeout", r"no reply within"),
    ("endpoint unreachable", r"cannot connect|ConnectError|connection (refused|reset)"),
    ("endpoint HTTP error", r"answered HTTP \d+"),
    ("endpoint bad reply", r"no chat completion|choices\[0\]\.message is"),
    ("turn limit", r"TurnLimitReached|no final answer within"),
    ("episode timeout", r"gave no answer within|ran out before the next request"),
    ("model server", r"ModelServerError"),
    ("system state", r"system[- ]state"),
))
_RAISED = re.compile(r"raised (\w+)")
EXAMPLE_CHARS = 300


@dataclass(frozen=True)
class ErrorGroup:
    """Episodes whose error is of one kind: how many, and the first one's message."""

    kind: str
    count: int
    example: str


def error_kind(error: str) -> str:
    """The kind of one episode error (see ``KINDS``)."""
    for kind, pattern in KINDS:
        if pattern.search(error):
            return kind
    raised = _RAISED.search(error)
    return raised.group(1) if raised else "other"


def error_groups(errors: Iterable[str | None]) -> tuple[ErrorGroup, ...]:
    """The errors grouped by kind, most frequent first (ties in order of first appearance); None and "" skipped."""
    counts: dict[str, int] = {}
    examples: dict[str, str] = {}
    for error in errors:
        if not error:
            continue
        kind = error_kind(error)
        counts[kind] = counts.get(kind, 0) + 1
        examples.setdefault(kind, error if len(error) <= EXAMPLE_CHARS else error[:EXAMPLE_CHARS - 1] + "…")
    order = {kind: i for i, kind in enumerate(counts)}
    return tuple(ErrorGroup(kind, counts[kind], examples[kind])
                 for kind in sorted(counts, key=lambda k: (-counts[k], order[k])))


def run_error_groups(run_dir: Path) -> tuple[ErrorGroup, ...]:
    """``error_groups`` of a run directory's ``episodes.jsonl`` (none when it has no episodes file)."""
    path = run_dir / "episodes.jsonl"
    if not path.is_file():
        return ()
    lines = (json.loads(text) for text in path.read_text(encoding="utf-8").splitlines() if text.strip())
    return error_groups(line.get("error") for line in lines)


def errors_line(groups: Iterable[ErrorGroup]) -> str:
    """One line: ``model errors: 6 episode(s) — endpoint timeout 5, turn limit 1`` (or ``model errors: none``)."""
    groups = tuple(groups)
    if not groups:
        return "model errors: none"
    total = sum(g.count for g in groups)
    return f"model errors: {total} episode(s) — " + ", ".join(f"{g.kind} {g.count}" for g in groups)
