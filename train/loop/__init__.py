"""``kopa train loop``: show that EDGE data makes the small model better, staged and resumable (``train.loop.run``).

* ``settings``: what a loop run is made of (``LoopSettings``, ``LoopSettings.quick()``);
* ``stages``: a run folder's stages, each done, refused when corrupt, or cleared and run;
* ``evaluate``: a model (torch, greedy) or a baseline over the eval split on the bench harness;
* ``report``: base against tuned with 95 % t-intervals over seeds, as JSON, Markdown and HTML;
* ``run``: the stages in order (``run_loop``).
"""

from .run import STAGES, loop_status, run_loop
from .settings import LoopSettings
from .stages import LoopError

__all__ = ["STAGES", "LoopError", "LoopSettings", "loop_status", "run_loop"]
