"""Disjoint groups: which items a chain of pairings joins (union–find with path halving)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T", bound=Hashable)


class Groups(Generic[T]):
    """Each item starts alone; :meth:`join` puts two items' groups together."""

    def __init__(self, items: Iterable[T]) -> None:
        self._parent: dict[T, T] = {item: item for item in items}

    def root(self, item: T) -> T:
        """The item that stands for ``item``'s group."""
        parent = self._parent
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    def join(self, keep: T, other: T) -> T:
        """Put ``other``'s group into ``keep``'s; the root that stands for both."""
        kept, joined = self.root(keep), self.root(other)
        if kept != joined:
            self._parent[joined] = kept
        return kept

    def members(self) -> dict[T, list[T]]:
        """Each group's items by its root, in the order the items were given."""
        out: dict[T, list[T]] = {}
        for item in self._parent:
            out.setdefault(self.root(item), []).append(item)
        return out
