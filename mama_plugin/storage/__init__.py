"""Storage room: connection setup, migrations and the store. The only room that writes SQL.

The names below load on first use (PEP 562): ``storage.peek``, which the MCP front reads its
first tool list with, must not pay for apsw and the repositories.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .memories import MEMORY_TYPES, new_id
    from .records import (
        LinkRecord,
        MemoryRecord,
        NewMemory,
        RankFields,
        Redactions,
        SuggestionRecord,
    )
    from .sql import Scope, now_ms
    from .store import Store

_WHERE = {
    "MEMORY_TYPES": "memories",
    "new_id": "memories",
    "LinkRecord": "records",
    "MemoryRecord": "records",
    "NewMemory": "records",
    "RankFields": "records",
    "Redactions": "records",
    "SuggestionRecord": "records",
    "now_ms": "sql",
    "Scope": "sql",
    "Store": "store",
}
__all__ = [
    "MEMORY_TYPES",
    "LinkRecord",
    "MemoryRecord",
    "NewMemory",
    "RankFields",
    "Redactions",
    "Scope",
    "Store",
    "SuggestionRecord",
    "new_id",
    "now_ms",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value
    return value
