"""The embedding runtime's exception: one subclass of the package base."""

from __future__ import annotations

from ..errors import MamaError


class EmbeddingError(MamaError):
    """Raised when the embedding model cannot be found, built or run; says what to fix."""
