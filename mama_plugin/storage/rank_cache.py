"""The ranking columns of memories, kept in memory between searches and dropped when they change.

Every search reads the columns ranking needs (confidence, outcome, status, event time, use
count, type, project, session) and the session order of several hundred candidates. SQLite
gives them at ~2 µs a row (the columns sit past a wide row's narrative JSON), 2–4 ms a search
at 10k memories; a dictionary gives them at ~0.1 µs. One copy per store, shared by its threads; it
holds only rows searches asked for (at most ``KEPT``), so a cold search costs what it did.

It stays true through ``rank_log`` (storage/migrations.py): triggers log the seq of every
memory inserted, deleted or changed in one of those columns, in any process. Before a read the
copy drops the rows (and the sessions) the log names past the last entry it saw: one statement
when nothing changed. It starts over when the log was trimmed past that entry, when
``meta.rank_epoch`` moved (a restore) and for a reader whose snapshot is older than the copy's
state (rows of two states are never mixed). Inside a write transaction it is bypassed and
SQLite read directly: that transaction's log entries may still roll back, and their ids be
used again for other changes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import apsw

from .records import RankFields
from .sql import select_in

KEPT = 200_000  # rows kept (~300 bytes each, ~60 MB at most); past it the copy starts over
Member = tuple[str, str, int]  # a memory's session, project and event time
SELECT_MEMBER = "SELECT seq, session_id, project, created_at FROM memories"  # (seq, Member)
_STATE = (
    "SELECT (SELECT value FROM meta WHERE key = 'rank_epoch'), "
    "(SELECT min(id) FROM rank_log), (SELECT max(id) FROM rank_log)"
)


class RankCache:
    """Ranking fields by seq and sessions' members in time order, as of ``rank_log``'s ``last``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._epoch: Any = None
        self._last = 0
        self._fields: dict[int, RankFields] = {}
        self._sessions: dict[str, list[tuple[int, str]]] = {}  # session → [(seq, project)]
        self._member_of: dict[int, Member] = {}  # every member of a kept session

    def fields(
        self,
        conn: apsw.Connection,
        seqs: Sequence[int],
        read: Callable[[list[int]], dict[int, RankFields]],
    ) -> dict[int, RankFields]:
        """The ranking fields of each of ``seqs`` that exists; ``read`` reads rows the copy
        does not hold (all of them when the copy cannot be used)."""
        with self._lock:
            if not self._in_step(conn):
                return read(list(seqs))
            have = self._fields
            out = {s: have[s] for s in seqs if s in have}
            missing = [s for s in seqs if s not in have]
            if missing:
                found = read(missing)
                if len(have) + len(found) > KEPT:
                    self._forget()
                have.update(found)
                out.update(found)
            return out

    def sessions(
        self,
        conn: apsw.Connection,
        names: Sequence[str],
        read: Callable[[list[str]], dict[str, list[tuple[int, Member]]]],
    ) -> dict[str, list[tuple[int, str]]]:
        """The members (seq, project) of each session in ``names``, in time order; ``read``
        gives (seq, (session, project, event time)) of the sessions the copy does not hold."""
        with self._lock:
            if not self._in_step(conn):
                return {
                    n: [(seq, m[1]) for seq, m in members]
                    for n, members in read(list(names)).items()
                }
            kept = self._sessions
            out = {n: kept[n] for n in names if n in kept}
            missing = [n for n in names if n not in kept]
            if missing:
                if len(self._member_of) > KEPT:
                    kept.clear()
                    self._member_of.clear()
                for name, members in read(missing).items():
                    kept[name] = out[name] = [(seq, m[1]) for seq, m in members]
                    self._member_of.update(members)
            return {n: out[n] for n in names if n in out}

    def _in_step(self, conn: apsw.Connection) -> bool:
        """Bring the copy up to the caller's state; False when the caller must read SQLite."""
        if conn.txn_state("main") == apsw.SQLITE_TXN_WRITE:
            return False
        try:
            epoch, low, high = conn.execute(_STATE).fetchall()[0]
        except apsw.SQLError:  # a schema without the log (read before its upgrade)
            return False
        high, low = int(high or 0), int(low or 0)
        if epoch != self._epoch or high < self._last or low > self._last + 1:
            # Another database under the same store, or the log went past where we stopped.
            self._forget()
            self._epoch, self._last = epoch, high
            return True
        if high > self._last:
            rows = conn.execute(
                "SELECT DISTINCT seq FROM rank_log WHERE id > ?", (self._last,)
            ).fetchall()
            self._drop(conn, [int(r[0]) for r in rows])  # type: ignore[arg-type]
            self._last = high
        return True

    def _drop(self, conn: apsw.Connection, seqs: list[int]) -> None:
        """Forget the fields of ``seqs``, and each kept session they left, joined or moved in."""
        rows = select_in(
            conn,
            "SELECT seq, session_id, project, created_at FROM memories WHERE seq IN ({})",
            seqs,
        )
        now: dict[int, Member] = {int(r[0]): (str(r[1]), str(r[2]), int(r[3])) for r in rows}
        for seq in seqs:
            self._fields.pop(seq, None)
            before, after = self._member_of.get(seq), now.get(seq)
            if before is not None and before != after:
                self._forget_session(before[0])  # left it, or moved within it
            if after is not None and after[0] in self._sessions and before != after:
                self._forget_session(after[0])  # joined it

    def _forget_session(self, name: str) -> None:
        for seq, _ in self._sessions.pop(name, []):
            self._member_of.pop(seq, None)

    def _forget(self) -> None:
        self._fields.clear()
        self._sessions.clear()
        self._member_of.clear()
