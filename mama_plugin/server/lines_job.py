"""The checkpoint-lines job of the server's background: the sessions waiting, and one job.

The Stop hook queues a session twice: in the running server's memory (the wake-up) and in
the store (``pending_lines``, :mod:`mama_plugin.storage.pending_lines`), so that a session
closed before the job's delay leaves its wait to the next server started on the project:
:func:`waiting` is what that server finds as it starts. :func:`write_lines` runs one job for
a session that still waits in the store, with the lines the profile in force earned, then
clears the session's row — whether the model wrote, grounding dropped its lines, or no model
was asked (a profile that earned neither line: nothing is loaded) — so nothing piles up. A
row queued again while the job ran (a newer turn) stays for the next pass; a server stopped
mid-job leaves its row for the next. Both run in worker threads, never on a hook's path.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..storage.pending_lines import PendingLines
from .state import State

if TYPE_CHECKING:
    from ..assist.stopped import Lines

log = logging.getLogger("mama.server")


def waiting(state: State) -> list[str]:
    """The sessions of the server's project whose checkpoint lines wait in the store, oldest
    first; [] when the store cannot be read (logged)."""
    try:
        return [p.session_id for p in PendingLines(state.store).of_project(state.project)]
    except Exception as exc:  # the task that waits on the queue must not end with it
        log.warning("checkpoint lines waiting in the store: not read (%s)", exc)
        return []


def write_lines(state: State, session_id: str) -> Lines | None:
    """Have the model retell a stopped session's checkpoint lines ("where I stopped", "next
    step") — those the profile in force earned — grounded, as one model job
    (:mod:`..assist.stopped`), then clear its wait in the store.

    Returns the :class:`~..assist.stopped.Lines`, or None when no model was asked: nothing
    waits for the session in the store (another server ran it), its lines were retold already,
    or the profile earned neither line (nothing is loaded, the extractor's lines stand). A
    checkpoint changed since it was queued is retold as it is now, and one changed while the
    model writes is left as the newer turn wrote it (:func:`..assist.stopped.polish`).
    """
    from ..assist import stopped
    from ..assist.models import earned_lines, lines_writer

    env = state.env()
    pending = PendingLines(env.store)
    queued = pending.get(session_id)
    if queued is None:
        return None
    try:
        model = lines_writer(env.config, env.assistant)
        if model is None:
            log.info(
                "checkpoint lines for %s: no line earned by the profile, none asked", session_id
            )
            return None
        now = stopped.rolling_of(env.store, session_id)
        if now is not None and (now.id, now.version) != (queued.memory_id, queued.version):
            log.info(
                "checkpoint lines for %s: queued at version %d, now %s at %d: told as it is now",
                session_id,
                queued.version,
                now.id,
                now.version,
            )
        lines = stopped.polish(env.store, session_id, model, lines=earned_lines(env.config, model))
        if lines is not None:
            log.info("checkpoint lines for %s: %s (%s)", session_id, lines.sources, lines.note)
            if lines.by_model:
                state.session.brief_stale(state.project)
        return lines
    finally:
        # Run, failed or not asked: the wait is over (a newer turn's row stays).
        pending.clear(queued)
