"""Work handed to the server's background tasks: an anyio memory object stream per queue.

A producer may be a tool handler on the event loop or a hook's worker thread; the consumer is
a background task on the event loop. While no task consumes a queue (before the server starts
them, or in a test or the demo that builds a ``Session`` by hand) items wait in a backlog the
caller can read, which the task takes over first when it starts and gets back when it stops.
anyio is imported when a task consumes, not before: the front's hook lane builds sessions
without it.
"""

from __future__ import annotations

import math
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from anyio.lowlevel import EventLoopToken
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

T = TypeVar("T")


class Handoff(Generic[T]):
    """One queue of work: ``put`` from any thread, consumed by one task through :meth:`serving`."""

    def __init__(self, backlog: set[T] | list[T]) -> None:
        self.backlog = backlog  # what waits while no task consumes (a set collapses repeats)
        self._keep: Callable[[T], None] = (
            backlog.add if isinstance(backlog, set) else backlog.append
        )
        self._guard = threading.Lock()  # held only to read or swap the fields below
        self._send: MemoryObjectSendStream[T] | None = None
        self._token: EventLoopToken | None = None
        self._loop: threading.Thread | None = None

    def put(self, item: T) -> None:
        """Queue ``item`` for the consuming task, or in the backlog when none runs."""
        with self._guard:
            send, token, loop = self._send, self._token, self._loop
            if send is None:
                self._keep(item)
                return
        import anyio.from_thread  # a consumer runs: anyio is loaded already

        try:
            if threading.current_thread() is loop:
                send.send_nowait(item)
            else:  # a worker thread: the stream belongs to the event loop
                anyio.from_thread.run_sync(send.send_nowait, item, token=token)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, RuntimeError):
            with self._guard:  # the task stopped meanwhile (or the loop is gone)
                self._keep(item)

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[MemoryObjectReceiveStream[T]]:
        """The stream of items for the calling task, the backlog first; unread ones go back."""
        import anyio
        from anyio.lowlevel import current_token

        send, receive = anyio.create_memory_object_stream[T](math.inf)
        with self._guard:
            if self._send is not None:
                raise RuntimeError("this queue already has a consumer")
            for item in self.backlog:
                send.send_nowait(item)
            self.backlog.clear()
            self._send, self._token, self._loop = send, current_token(), threading.current_thread()
        try:
            yield receive
        finally:
            with self._guard:
                self._send = self._token = self._loop = None
                send.close()
                while True:
                    try:
                        self._keep(receive.receive_nowait())
                    except (anyio.WouldBlock, anyio.EndOfStream):
                        break
                receive.close()
