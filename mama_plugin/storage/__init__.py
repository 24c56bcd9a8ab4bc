"""Storage room: connection setup, migrations and the store. The only room that writes SQL."""

from .records import LinkRecord, MemoryRecord, RankFields, Redactions, SuggestionRecord
from .sql import now_ms
from .store import MEMORY_TYPES, Store, new_id

__all__ = [
    "MEMORY_TYPES",
    "LinkRecord",
    "MemoryRecord",
    "RankFields",
    "Redactions",
    "Store",
    "SuggestionRecord",
    "new_id",
    "now_ms",
]
