"""What one session was shown at its start and by its earlier prompts: nothing twice.

:func:`session_shown` starts a session's record from the ids of the memories the session
start told (recorded with its cached text: :func:`.brief_cache.shown_at_start`);
:func:`..prompt_context.prompt_context` skips a hit the record holds unchanged and adds what
it injects.
The records live in a :class:`Sessions` the server's per-session state owns
(``server.base.Session.shown``). Read-only on the store.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable

from ...config import Config
from ...errors import MamaError
from ...storage import Store
from .brief_cache import shown_at_start


class Shown:
    """What one session has been shown: memory id → row version (thread-safe)."""

    def __init__(self, ids: Iterable[str] = ()) -> None:
        self._lock = threading.Lock()
        self._versions: dict[str, int | None] = dict.fromkeys(ids)  # None: any version

    def holds(self, memories: dict[str, int]) -> bool:
        """Whether every one of ``memories`` was shown already, at that version."""
        with self._lock:
            return all(
                memory_id in self._versions and self._versions[memory_id] in (None, version)
                for memory_id, version in memories.items()
            )

    def add(self, memories: dict[str, int]) -> None:
        with self._lock:
            self._versions.update(memories)


class Sessions:
    """The :class:`Shown` of each session this process served (the newest ``limit``)."""

    def __init__(self, limit: int = 64) -> None:
        self._lock = threading.Lock()
        self._limit = limit
        self._sessions: OrderedDict[str, Shown] = OrderedDict()

    def get(self, session_id: str, started: Callable[[], Iterable[str] | None]) -> Shown:
        """The session's record; a new one starts with the ids ``started()`` gives (the
        memories the session start told)."""
        with self._lock:
            known = self._sessions.get(session_id)
        if known is None:
            fresh = Shown(started() or ())
            with self._lock:
                known = self._sessions.setdefault(session_id, fresh)
                while len(self._sessions) > self._limit:
                    self._sessions.popitem(last=False)
        with self._lock:
            if session_id in self._sessions:
                self._sessions.move_to_end(session_id)
        return known


def session_shown(
    sessions: Sessions, store: Store, project: str, session_id: str, config: Config
) -> Shown | None:
    """This session's :class:`Shown` in ``sessions``, started from what the session start told
    (None: no session).

    Read once, at the session's first prompt: the cached session start is what the session
    start injected until a turn ends and refreshes it.
    """
    if not session_id:
        return None

    def started() -> list[str] | None:
        try:
            return shown_at_start(store, project, config, "startup")
        except MamaError:
            return None

    return sessions.get(session_id, started)
