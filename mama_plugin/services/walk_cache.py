"""The graph walks one store remembers: least recently used first, for one links version.

A walk's answer holds while the graph it walked holds: the cache is tagged with the store's
``links_version`` (moved by triggers on every link insert and delete, cascades included, in
any process) and emptied the first time it is asked under another version, so a write frees
every slot at once instead of leaving stale answers to age out. Within a version, a hit moves
its walk to the newest end and an insert past ``bound`` evicts from the oldest end. Safe to
share between threads: its own lock, held only to look up, insert or evict.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any


class WalkCache:
    """An LRU of walks keyed by their options, valid for one ``links_version``."""

    def __init__(self) -> None:
        self._walks: OrderedDict[Hashable, tuple[Any, ...]] = OrderedDict()
        self._version: object = None
        self._guard = threading.Lock()

    def get(self, version: object, key: Hashable) -> tuple[Any, ...] | None:
        """The walk kept for ``key`` at ``version`` (now the most recently used), or None."""
        with self._guard:
            self._follow(version)
            found = self._walks.get(key)
            if found is not None:
                self._walks.move_to_end(key)
            return found

    def put(self, version: object, key: Hashable, steps: tuple[Any, ...], bound: int) -> None:
        """Keep ``steps`` for ``key`` at ``version``; evict the least recently used walks
        while more than ``bound`` are kept."""
        with self._guard:
            self._follow(version)
            self._walks[key] = steps
            self._walks.move_to_end(key)
            while len(self._walks) > bound:
                self._walks.popitem(last=False)

    def clear(self) -> None:
        """Forget every walk (a benchmark changing how strength is computed, between runs)."""
        with self._guard:
            self._walks.clear()

    def order(self) -> list[Hashable]:
        """The keys kept, least recently used first."""
        with self._guard:
            return list(self._walks)

    def __len__(self) -> int:
        with self._guard:
            return len(self._walks)

    def _follow(self, version: object) -> None:
        """Forget every walk when the graph moved on (caller holds the guard)."""
        if version != self._version:
            self._walks.clear()
            self._version = version
