"""The errors of ``models``: one tree, so a caller catches what it can handle and nothing else.

    ModelError                    anything about talking to a model
    ├── EndpointError             a chat endpoint gave no usable reply (timeout, connection, HTTP error, bad body)
    └── ModelServerError          a model server could not be planned, started or kept healthy

``ErrorKind`` names how a model call, or an episode a model played, ended without an answer: the client sets it
on ``EndpointError``, the bench agents pass it on, an episode's record keeps it (``error_kind``) and the report
counts by it. Its values are the labels the report and the console show.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["EndpointError", "ErrorKind", "ModelError", "ModelServerError"]


class ErrorKind(StrEnum):
    """How a model call or a model-played episode failed; the value is the label a report shows."""

    ENDPOINT_TIMEOUT = "endpoint timeout"  # no reply within the request's time, after the retries
    ENDPOINT_UNREACHABLE = "endpoint unreachable"  # no connection (refused, reset, DNS)
    CONTEXT_TOO_LONG = "context too long"  # the endpoint refused the prompt as longer than the model's context
    ENDPOINT_HTTP = "endpoint HTTP error"  # any other HTTP error status (``status`` says which)
    ENDPOINT_BAD_REPLY = "endpoint bad reply"  # a 200 whose body is no chat completion
    ENDPOINT_CLIENT = "endpoint client error"  # the SDK refused the request before sending it
    MODEL_SERVER = "model server"  # a model server could not be planned, started or kept healthy
    TURN_LIMIT = "turn limit"  # the model was still calling tools at the last turn
    BUDGET_SPENT = "budget spent"  # the episode's prompt or response token budget ran out
    EPISODE_TIMEOUT = "episode timeout"  # the episode's wall-clock time ran out
    JUDGE_UNAVAILABLE = "judge unavailable"  # the RESPONSE judge could not be asked
    SYSTEM_STATE = "system state"  # a system-state action of the task failed


class ModelError(RuntimeError):
    """Talking to a model failed; the message says why and what to do."""


class EndpointError(ModelError):
    """A chat endpoint gave no usable reply. ``kind`` says how it failed; ``status`` is the HTTP code if any."""

    def __init__(self, message: str, *, url: str = "", kind: ErrorKind = ErrorKind.ENDPOINT_CLIENT,
                 status: int | None = None) -> None:
        super().__init__(message)
        self.url, self.kind, self.status = url, kind, status


class ModelServerError(ModelError):
    """A model server cannot be planned or did not come up; the message says why and what to do."""

    kind = ErrorKind.MODEL_SERVER
    status: int | None = None
