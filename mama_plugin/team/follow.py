"""Keeping a connected project in step with its team, for a long-running process.

A :class:`Follower` runs one sync pass when the outbox holds something, when the team
database announces a change of the project (``NOTIFY mama_changes``, sent by every push that
wrote), and every ``FULL_EVERY_S`` anyway (a notification missed while offline). Between
passes it waits on the database's notifications at most ``poll_s``. It never raises: an
unreachable database is retried after ``RETRY_S`` and the outbox waits. The MCP server's
background loop calls :meth:`Follower.step` from a worker thread; the ``team`` benchmark
drives two of them.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from ..errors import TeamError
from ..storage.team import outbox
from .sync import SyncReport, sync_project

if TYPE_CHECKING:
    from ..server.state import State
    from ..storage import Store

log = logging.getLogger("mama.team")
CHANNEL = "mama_changes"
# How often the outbox is looked at: one indexed SQLite read, so a save here is pushed within
# 0.2 s (at 1 s, the team benchmark's lag was 1.04 s at p50).
POLL_S = 0.2
IDLE_S = 5.0  # how often a project not connected is looked at again
FULL_EVERY_S = 60.0
RETRY_S = 30.0
BATCH = 100  # smaller than the CLI's: a hook waiting for the write lock waits one batch at most


class Follower:
    """One project's background sync: a listening connection and when to pass next."""

    def __init__(self, store: Store, project: str, *, poll_s: float = POLL_S) -> None:
        self.store = store
        self.project = project
        self.poll_s = poll_s
        self._listener: Any = None
        self._remote = ""
        self._next_full = 0.0
        self._retry_at = 0.0
        self._pending = False  # a teammate's change was announced while we waited
        # Set by close(): a step still running (its thread abandoned by a cancelled task)
        # opens no listener and closes the one it holds.
        self._closed = False
        self.last: SyncReport | None = None

    def step(self) -> SyncReport | None:
        """Sync if something is due, then wait for a teammate's change at most ``poll_s``;
        the pass's report, or None when none ran."""
        try:
            return self._step()
        finally:
            if self._closed:
                self._close()

    def _step(self) -> SyncReport | None:
        if self._closed:
            return None
        now = time.monotonic()
        joined = outbox.projects(self.store, self.project)
        if not joined:
            time.sleep(self.poll_s)
            return None
        if now < self._retry_at:
            time.sleep(self.poll_s)
            return None
        report = None
        waiting = outbox.outbox_count(self.store, self.project)
        if now >= self._next_full or waiting["memory"] or waiting["link"] or self._woken():
            report = self._pass()
        if report is None or not report.error:
            self._wait(joined[0])
        return report

    def _pass(self) -> SyncReport:
        report = sync_project(self.store, self.project, batch=BATCH)
        self.last = report
        self._next_full = time.monotonic() + FULL_EVERY_S
        if report.error:
            log.warning("team sync of %s stopped: %s", self.project, report.error)
            self._retry_at = time.monotonic() + RETRY_S
            self._close()
        return report

    def _wait(self, joined: outbox.TeamProject) -> None:
        """Wait for a notification of this project at most ``poll_s`` (sleep when none can be
        listened to)."""
        try:
            listener = self._listen(joined)
            self._pending = any(
                n.payload == joined.remote
                for n in listener.notifies(timeout=self.poll_s, stop_after=1)
            )
        except Exception as exc:  # a dropped listener: reconnect on the next step
            log.info("team listener of %s lost: %s", self.project, exc)
            self._close()
            time.sleep(self.poll_s)

    def _woken(self) -> bool:
        woken, self._pending = self._pending, False
        return woken

    def _listen(self, joined: outbox.TeamProject) -> Any:
        if self._closed:
            raise TeamError("the follower was closed")
        if self._listener is None or self._remote != joined.remote:
            import psycopg

            self._close()
            try:
                self._listener = psycopg.connect(joined.url, autocommit=True, connect_timeout=5)
            except psycopg.OperationalError as exc:
                raise TeamError(str(exc)) from None
            self._listener.execute(f"LISTEN {CHANNEL}")
            self._remote = joined.remote
        return self._listener

    def _close(self) -> None:
        if self._listener is not None:
            try:
                self._listener.close()
            finally:
                self._listener = None

    def close(self) -> None:
        """Close the listening connection; later steps do nothing."""
        self._closed = True
        self._close()


async def follow_in_background(state: State, after_s: float = 3.0) -> None:
    """The MCP server's task: keep the session's project in step with its team database, if
    it is connected, from a worker thread; waits ``after_s`` first (the session's start
    settles). Never raises: every failure is logged and retried."""
    import anyio

    await anyio.sleep(after_s)
    follower: Follower | None = None
    try:
        while True:
            try:
                store = state.store
                if store.read_only is not None or store.damage is not None:
                    await anyio.sleep(RETRY_S)
                    continue
                joined = await anyio.to_thread.run_sync(outbox.projects, store, state.project)
                if not joined:  # waited for on the loop: no worker thread kept asleep
                    await anyio.sleep(IDLE_S)
                    continue
                if follower is None:
                    follower = Follower(store, state.project)
                await anyio.to_thread.run_sync(follower.step, abandon_on_cancel=True)
            except Exception as exc:
                log.error("team sync failed: %s", exc, exc_info=True)
                await anyio.sleep(RETRY_S)
    finally:
        if follower is not None:
            follower.close()
