"""What a screen does when one of its workers fails: it says so, in the screen, and the console goes on.

Every ``@work`` in the console runs with ``exit_on_error=False``; its failure arrives here as a
``Worker.StateChanged`` (which does not bubble: each screen handles its own workers' failures).
"""

from __future__ import annotations

from textual.worker import Worker, WorkerState


class ShowsWorkerErrors:
    """Mixin for a ``Screen``: a failed worker becomes an error notification (``show_error`` can say it elsewhere)."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        error = event.worker.error
        if event.state is WorkerState.ERROR and error is not None:
            self.show_error(self.app.describe_error(error))  # type: ignore[attr-defined]

    def show_error(self, text: str) -> None:
        self.notify(text, title="error", severity="error", timeout=12)  # type: ignore[attr-defined]
