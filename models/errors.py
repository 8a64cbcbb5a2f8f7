"""The errors of ``models``: one tree, so a caller catches what it can handle and nothing else.

    ModelError                    anything about talking to a model
    ├── EndpointError             a chat endpoint gave no usable reply (timeout, connection, HTTP error, bad body)
    └── ModelServerError          a model server could not be planned, started or kept healthy
"""

from __future__ import annotations

from typing import Literal

__all__ = ["EndpointError", "EndpointFailureKind", "ModelError", "ModelServerError"]

EndpointFailureKind = Literal["timeout", "connection", "http", "invalid", "client"]


class ModelError(RuntimeError):
    """Talking to a model failed; the message says why and what to do."""


class EndpointError(ModelError):
    """A chat endpoint gave no usable reply. ``kind`` says how it failed; ``status`` is the HTTP code if any."""

    def __init__(self, message: str, *, url: str = "", kind: EndpointFailureKind = "client",
                 status: int | None = None) -> None:
        super().__init__(message)
        self.url, self.kind, self.status = url, kind, status


class ModelServerError(ModelError):
    """A model server cannot be planned or did not come up; the message says why and what to do."""
