"""The warm state the services keep for one open store: their caches, in one object.

Built once a store, on first use (``store.kept(Warm)``), so it lives exactly as long as the
store a composition root opened and passed down, and never in a module global
(``tests/test_layers.py`` holds that line). Each cache guards itself.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from ..storage import Store
from .view_cache import ViewCache
from .walk_cache import WalkCache


@dataclass
class Warm:
    """One store's caches: graph walks, the vector index, later memories' evidence, views,
    cited files' hashes and histories."""

    # services.graph.traverse: walks by (start, options), least recently used first, for one links
    # version (services.walk_cache; it guards itself).
    walks: WalkCache = field(default_factory=WalkCache)
    # services.search.vector_index: the in-memory copy of the vectors (synced under its guard), and
    # whether any vector exists, by the vectors' state.
    vectors: Any = None
    vectors_guard: threading.Lock = field(default_factory=threading.Lock)
    any_vectors: tuple[tuple[int, int], bool] | None = None
    # services.story.freshness: what each later memory shows, by (id, version, updated_at,
    # personal data kept).
    later: dict[tuple[str, int, int, bool], Any] = field(default_factory=dict)
    # services.search.views: vectors of memory views, and those embedded here, not yet stored.
    views: ViewCache = field(default_factory=ViewCache)
    # services.learning.verify: git blob hashes by (path, size, mtime_ns), and what git said of
    # a cited file's history by (project, path, recorded commit, HEAD): (commits, last day), -1
    # unknown.
    blobs: dict[tuple[str, int, int], str] = field(default_factory=dict)
    file_logs: dict[tuple[str, str, str, str], tuple[int, str]] = field(default_factory=dict)
    files_guard: threading.Lock = field(default_factory=threading.Lock)


def warm(store: Store) -> Warm:
    """The warm state of ``store`` (made on first use)."""
    return store.kept(Warm)
