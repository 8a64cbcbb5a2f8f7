"""Start-up work a server does once, so that no call pays it: ``warm_up(runtime)``.

The HTTP app's lifespan and ``run_stdio`` call it before the first request is read. Measured on the shipped
bundle (2 shared cores, see docs/benchmarks.md): the first calls otherwise paid

* sympy's import (~0.4 s) on the first ``evaluate_expression``;
* in a replay, the reading of whole-result bodies (the corpCode.xml ZIP of 8,513 companies: ~0.2–0.8 s on the
  first ``find_dart_corp_code``): ``ClientSet.prime_replay`` reads them into the reading cache, as the first call
  would (the same reader, the same key);
* a full garbage collection over the ~760,000 objects the catalog, its search indexes and the bundle index leave
  behind (0.5 s, at whichever call crosses the collector's threshold). ``gc.freeze()`` after a ``gc.collect()``
  moves what start-up built out of the collector's sight (the standard remedy for long-lived servers); later
  collections look only at what calls allocate. It is process-wide, so it is done only when the server runs on
  the process's main thread (``kopa serve``), never for a gateway started inside another program's thread (the
  pytest plugin's).
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

logger = logging.getLogger(__name__)

PRIME_BUDGET_S = 3.0  # reading ahead stops after this long (start-up must stay fast); calls read the rest


@dataclass
class WarmReport:
    expression: bool = False  # sympy imported
    primed: int = 0  # replayed bodies read ahead
    frozen: int = 0  # objects moved out of the collector's sight (0: not frozen)
    seconds: float = 0.0


def warm_up(runtime: Any, *, freeze: bool | None = None, prime_budget_s: float = PRIME_BUDGET_S) -> WarmReport:
    """Do now what the first calls would pay: see the module's docstring. ``freeze``: None → on the main thread only.

    Never raises for what it warms: a failure is logged and left to the call that meets it."""
    started, report = time.perf_counter(), WarmReport()
    try:
        if "evaluate_expression" in getattr(runtime, "_builtins", {}):
            from ..runtime.expression import evaluate_expression

            evaluate_expression("1+1")
            report.expression = True
        clients = getattr(runtime, "clients", None)
        if hasattr(clients, "prime_replay"):
            report.primed = clients.prime_replay(lambda tool: _endpoint(runtime, tool), budget_s=prime_budget_s)
    except Exception as exc:  # noqa: BLE001 - warming is an optimisation; the calls still work without it
        logger.warning("warm-up stopped early (%s); the first calls will do the rest", type(exc).__name__)
    if freeze is None:
        freeze = threading.current_thread() is threading.main_thread()
    if freeze:
        gc.collect()
        gc.freeze()
        report.frozen = gc.get_freeze_count()
    report.seconds = time.perf_counter() - started
    logger.info("warm-up: %s", report)
    return report


def _endpoint(runtime: Any, tool: str) -> Any:
    try:
        return runtime.catalog.get(tool).endpoint
    except KeyError:  # UnknownToolError: a bundle recorded with another catalog
        return None
