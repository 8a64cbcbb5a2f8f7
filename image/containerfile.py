"""The Dockerfile as data: its instructions, the rules the offline image relies on, and its buildah form.

``lint(text)`` lists what breaks a rule (empty: the file keeps them all):

- ``ARG BASE`` before the first ``FROM``, and that ``FROM`` uses it (``docker build`` takes
  ``--build-arg BASE=...``; ``make image`` passes the Debian base it made);
- every ``RUN`` has ``--network=none`` (BuildKit) and fetches nothing: each ``pip install`` has ``--no-index``
  and ``--find-links /wheelhouse``, no ``pip download``, ``curl``, ``wget``, ``apt-get``, ``git clone``;
- the wheelhouse is bind-mounted into the install step, never ``COPY``-ed (it would stay in a layer),
  and nothing is ``ADD``-ed from a URL;
- the last ``USER`` is not root and comes before ``CMD``; a ``HEALTHCHECK CMD`` and a ``CMD`` are present.

``for_buildah(text)``: buildah 1.28 (Debian bookworm) refuses ``RUN --network``; the build runs the whole of
``buildah bud`` inside ``unshare -n`` instead, so the flag is dropped there (only ``--network=none``: any
other value is an error, since dropping it would change what the step may reach).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

FETCHERS = ("curl ", "wget ", "apt-get ", "apt ", "pip download", "git clone", "pip3 download")
NETWORK_NONE = "--network=none"


@dataclass(frozen=True)
class Instruction:
    keyword: str  # upper case: RUN, FROM, ...
    flags: tuple[str, ...]  # leading --flags of RUN / COPY / ADD / FROM
    args: str  # the rest, continuation lines joined
    line: int  # 1-based line of its first physical line


def instructions(text: str) -> list[Instruction]:
    """Logical instructions: continuation lines (``\\`` at the end) joined, comment lines skipped as Docker does."""
    found: list[Instruction] = []
    buffer: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not buffer and (not stripped or stripped.startswith("#")):
            continue
        if buffer and stripped.startswith("#"):
            continue  # a comment inside a continued instruction
        if not buffer:
            start = number
        if stripped.endswith("\\"):
            buffer.append(stripped[:-1].strip())
            continue
        buffer.append(stripped)
        found.append(_instruction(" ".join(part for part in buffer if part), start))
        buffer = []
    if buffer:
        found.append(_instruction(" ".join(part for part in buffer if part), start))
    return found


def _instruction(logical: str, line: int) -> Instruction:
    keyword, _, rest = logical.partition(" ")
    flags = []
    rest = rest.strip()
    while rest.startswith("--"):
        flag, _, rest = rest.partition(" ")
        flags.append(flag)
        rest = rest.strip()
    return Instruction(keyword.upper(), tuple(flags), rest, line)


def _pip_installs(command: str) -> list[str]:
    """The ``pip install ...`` segments of a shell command (split at ``&&``, ``;``, ``||``)."""
    segments = re.split(r"&&|\|\||;", command)
    return [s.strip() for s in segments if re.search(r"\bpip3?\s+install\b", s)]


def lint(text: str) -> list[str]:
    """What in this Dockerfile breaks a rule the offline image relies on; empty when nothing does."""
    found = instructions(text)
    problems: list[str] = []
    froms = [i for i in found if i.keyword == "FROM"]
    if not froms:
        return ["no FROM"]
    first_from = found.index(froms[0])
    if not any(i.keyword == "ARG" and i.args.split("=")[0].strip() == "BASE" for i in found[:first_from]):
        problems.append("no `ARG BASE` before the first FROM")
    if froms[0].args.split()[0] not in ("${BASE}", "$BASE"):
        problems.append(f"line {froms[0].line}: the first FROM does not use the BASE argument")
    for i in found:
        where = f"line {i.line}"
        if i.keyword == "RUN":
            if NETWORK_NONE not in i.flags:
                problems.append(f"{where}: RUN without --network=none")
            lowered = f" {i.args.lower()} "
            for fetcher in FETCHERS:
                if f" {fetcher}" in lowered or f"&& {fetcher}" in lowered:
                    problems.append(f"{where}: RUN fetches with `{fetcher.strip()}`")
            for install in _pip_installs(i.args):
                try:
                    words = shlex.split(install)
                except ValueError:  # an unbalanced quote: the words as they stand
                    words = install.split()
                if "--no-index" not in words:
                    problems.append(f"{where}: `pip install` without --no-index")
                if "--find-links" not in words or words[words.index("--find-links") + 1] != "/wheelhouse":
                    problems.append(f"{where}: `pip install` not from --find-links /wheelhouse")
        if i.keyword in ("COPY", "ADD") and i.args.split()[0].rstrip("/") == "wheelhouse":
            problems.append(f"{where}: the wheelhouse is copied into a layer (bind-mount it in the RUN instead)")
        if i.keyword == "ADD" and re.search(r"\b(https?|ftp)://", i.args):
            problems.append(f"{where}: ADD from a URL")
    users = [i for i in found if i.keyword == "USER"]
    if not users:
        problems.append("no USER: the image would run as root")
    elif users[-1].args.split(":")[0] in ("root", "0"):
        problems.append(f"line {users[-1].line}: the last USER is root")
    cmds = [i for i in found if i.keyword == "CMD"]
    if not cmds:
        problems.append("no CMD")
    elif users and found.index(users[-1]) > found.index(cmds[-1]):
        problems.append("USER comes after CMD")
    checks = [i for i in found if i.keyword == "HEALTHCHECK"]
    if not checks or "CMD" not in checks[-1].args.split():
        problems.append("no HEALTHCHECK CMD")
    return problems


def for_buildah(text: str) -> str:
    """The Dockerfile with ``RUN --network=none`` flags dropped (buildah 1.28 refuses RUN --network)."""
    out = []
    for raw in text.splitlines(keepends=True):
        match = re.match(r"^(\s*RUN\s+)((?:--\S+\s+)*)(.*)$", raw, flags=re.DOTALL | re.IGNORECASE)
        if not match:
            out.append(raw)
            continue
        flags = match.group(2).split()
        for flag in flags:
            if flag.startswith("--network") and flag != NETWORK_NONE:
                raise ValueError(f"{flag}: only --network=none can be dropped (the build's namespace has no network)")
        kept = [flag for flag in flags if not flag.startswith("--network")]
        out.append(match.group(1) + "".join(f"{flag} " for flag in kept) + match.group(3))
    return "".join(out)


def healthcheck_command(text: str) -> list[str]:
    """The exec-form HEALTHCHECK CMD of the Dockerfile, as an argv."""
    import json

    for i in reversed(instructions(text)):
        if i.keyword == "HEALTHCHECK":
            _, cmd, argv = i.args.partition("CMD ")
            if cmd and argv.strip().startswith("["):
                return json.loads(argv)
            raise ValueError("HEALTHCHECK is not in exec form (CMD [...])")
    raise ValueError("no HEALTHCHECK")
