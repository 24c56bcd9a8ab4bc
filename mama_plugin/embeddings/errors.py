"""The local models' exceptions: subclasses of the package base."""

from __future__ import annotations

from ..errors import MamaError


class EmbeddingError(MamaError):
    """Raised when the embedding model cannot be found, built or run; says what to fix."""


class PackageMissing(MamaError):
    """Raised when a model's package is missing or its file cannot be assembled; says how to
    install it."""
