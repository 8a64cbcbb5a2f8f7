"""Episodes that ended with an error, grouped by kind: a model that failed to answer is not a wrong answer.

    from bench.report.errors import error_groups, run_error_groups
    for group in run_error_groups(Path("runs/x")):       # from episodes.jsonl
        print(group.kind, group.count, group.example)     # "endpoint timeout", 6, "agent 'local' raised …"

The kind is the episode record's ``error_kind``: ``run_episode`` writes the ``models.errors.ErrorKind`` of the
first error (set where the error was raised: the chat client, the agent step, the harness), or the exception's
class name when it has no kind. No message is read for it.

Records written before episodes kept their kind have only the ``error`` text. For them, and only for them, the
kind is read back from the message (``legacy_error_kind``, the old rules in ``LEGACY_KINDS``), and the group says
so (``ErrorGroup.from_message``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from models.errors import ErrorKind

__all__ = ["LEGACY_KINDS", "ErrorGroup", "error_groups", "error_kind", "errors_line", "legacy_error_kind",
           "run_error_groups"]

# The fallback for old records (no ``error_kind``): (kind, pattern), tried in order, the more specific first (a
# context overflow is an HTTP 400). New records never reach it.
LEGACY_KINDS: tuple[tuple[ErrorKind, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE)) for kind, pattern in (
        (ErrorKind.JUDGE_UNAVAILABLE, r"^judge unavailable"),  # the episode's own error, if any, comes first
        (ErrorKind.CONTEXT_TOO_LONG,
         r"context (window|length)|maximum context|exceeds? .*context|too many tokens|n_ctx"),
        (ErrorKind.ENDPOINT_TIMEOUT, r"no reply within"),
        (ErrorKind.ENDPOINT_UNREACHABLE, r"cannot connect|ConnectError|connection (refused|reset)"),
        (ErrorKind.ENDPOINT_HTTP, r"answered HTTP \d+"),
        (ErrorKind.ENDPOINT_BAD_REPLY, r"no chat completion|choices\[0\]\.message is"),
        (ErrorKind.TURN_LIMIT, r"TurnLimitReached|no final answer within"),
        (ErrorKind.EPISODE_TIMEOUT, r"gave no answer within|ran out before the next request"),
        (ErrorKind.MODEL_SERVER, r"ModelServerError"),
        (ErrorKind.SYSTEM_STATE, r"system[- ]state"),
    ))
_RAISED = re.compile(r"raised (\w+)")
EXAMPLE_CHARS = 300

Episode = Mapping[str, Any] | str | None  # an episode record (a line of episodes.jsonl), or an old bare message


@dataclass(frozen=True)
class ErrorGroup:
    """Episodes whose error is of one kind: how many, and the first one's message. ``from_message``: the kind of
    at least one of them was read from its message (a record older than ``error_kind``)."""

    kind: str
    count: int
    example: str
    from_message: bool = field(default=False, compare=False)


def legacy_error_kind(error: str) -> str:
    """The kind of an old record's error, read from its text (``LEGACY_KINDS``); else the exception's name in
    ``raised NAME``, else ``other``. Only for records without ``error_kind``."""
    for kind, pattern in LEGACY_KINDS:
        if pattern.search(error):
            return kind.value
    raised = _RAISED.search(error)
    return raised.group(1) if raised else "other"


def _kind(episode: Episode) -> tuple[str, str, bool] | None:
    """(kind, message, read from the message) of an episode's error; None when it has none."""
    if isinstance(episode, Mapping):
        error, kind = episode.get("error"), episode.get("error_kind")
    else:
        error, kind = episode, None
    if not error:
        return None
    if kind:
        return str(kind), error, False
    return legacy_error_kind(error), error, True


def error_kind(episode: Episode) -> str | None:
    """The kind of an episode's error: its record's ``error_kind``; for an old record (or a bare message) the
    ``legacy_error_kind`` of its text. None when it has no error."""
    found = _kind(episode)
    return found[0] if found else None


def error_groups(episodes: Iterable[Episode]) -> tuple[ErrorGroup, ...]:
    """The episodes' errors grouped by kind, most frequent first (ties in order of first appearance); episodes
    without an error are skipped. An item is an episode record or, as old callers pass, its error message."""
    counts: dict[str, int] = {}
    examples: dict[str, str] = {}
    guessed: set[str] = set()
    for episode in episodes:
        found = _kind(episode)
        if found is None:
            continue
        kind, error, from_message = found
        counts[kind] = counts.get(kind, 0) + 1
        examples.setdefault(kind, error if len(error) <= EXAMPLE_CHARS else error[:EXAMPLE_CHARS - 1] + "…")
        if from_message:
            guessed.add(kind)
    order = {kind: i for i, kind in enumerate(counts)}
    return tuple(ErrorGroup(kind, counts[kind], examples[kind], kind in guessed)
                 for kind in sorted(counts, key=lambda k: (-counts[k], order[k])))


def run_error_groups(run_dir: Path) -> tuple[ErrorGroup, ...]:
    """``error_groups`` of a run directory's ``episodes.jsonl`` (none when it has no episodes file)."""
    path = run_dir / "episodes.jsonl"
    if not path.is_file():
        return ()
    return error_groups(json.loads(text) for text in path.read_text(encoding="utf-8").splitlines() if text.strip())


def errors_line(groups: Iterable[ErrorGroup]) -> str:
    """One line: ``model errors: 6 episode(s) — endpoint timeout 5, turn limit 1`` (or ``model errors: none``)."""
    groups = tuple(groups)
    if not groups:
        return "model errors: none"
    total = sum(g.count for g in groups)
    return f"model errors: {total} episode(s) — " + ", ".join(f"{g.kind} {g.count}" for g in groups)
