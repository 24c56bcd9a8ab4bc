"""What every part of the store shares: the store it belongs to, its connection, transactions."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import apsw

from ..errors import NotFoundError

if TYPE_CHECKING:
    from .store import Store


class Repository:
    """One concept's rows (memories, links, …), reached as an attribute of a :class:`Store`.

    It owns no connection: every statement runs on the calling thread's connection of the
    store, inside the store's transactions; another concept is reached through the store.
    """

    def __init__(self, store: Store) -> None:
        self._store = store

    @property
    def conn(self) -> apsw.Connection:
        """The calling thread's connection of the store."""
        return self._store.conn

    @property
    def masks_personal(self) -> bool:
        """Whether personal data is masked on write and read (``keep_personal_data`` off)."""
        return self._store.masks_personal_data

    def transaction(self) -> AbstractContextManager[Store]:
        """The store's transaction (a savepoint when one is open already)."""
        return self._store.transaction()

    def one(self, sql: str, params: tuple[Any, ...], missing: str) -> Any:
        """The first row ``sql`` reads; NotFoundError saying ``missing`` when it reads none."""
        rows = self.conn.execute(sql, params).fetchall()
        if not rows:
            raise NotFoundError(missing)
        return rows[0]
