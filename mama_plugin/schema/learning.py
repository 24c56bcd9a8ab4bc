"""What a caller sends to read what memory learned: the learning tools' inputs (no I/O)."""

from __future__ import annotations

from .inputs import MemoryId
from .narrative import Strict


class ConfidenceInput(Strict):
    """One memory whose confidence trajectory to tell."""

    memory_id: MemoryId
