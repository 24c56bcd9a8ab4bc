"""Storage room: connection setup, migrations and the store. The only room that writes SQL."""

from .memories import MEMORY_TYPES, new_id
from .records import (
    LinkRecord,
    MemoryRecord,
    NewMemory,
    RankFields,
    Redactions,
    SuggestionRecord,
)
from .sql import now_ms
from .store import Store

__all__ = [
    "MEMORY_TYPES",
    "LinkRecord",
    "MemoryRecord",
    "NewMemory",
    "RankFields",
    "Redactions",
    "Store",
    "SuggestionRecord",
    "new_id",
    "now_ms",
]
