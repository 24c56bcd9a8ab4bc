"""``mama status``: where the store is, how far it is migrated, what it holds."""

from __future__ import annotations

from typing import Any

from ...storage import Store
from ...storage.migrations import LATEST


def store_status(store: Store, *, project: str) -> dict[str, Any]:
    """The store's path, schema version, counts, embedding state and relationship words (read-only).

    ``project`` is the project the caller stands in; it is reported, not used as a filter.
    """
    model, dim = store.vectors.recorded_model()
    return {
        "database": str(store.path),
        "schema_version": store.schema_version,
        "schema_latest": LATEST,
        "project": project,
        **store.memories.counts(),
        "embedding": {
            "model": model,
            "dimensions": dim,
            "vectors": store.vectors.count(),
            "waiting": store.vectors.count_pending(),
        },
        "relationships": [
            {"relationship": r, "category": c, "uses": n} for r, c, n in store.links.usage()
        ],
    }
