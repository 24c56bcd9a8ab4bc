"""The server's background tasks: the embedding queue, link suggestions, cliffhanger refreshes.

Each runs on the event loop for the server's lifetime and does its work in worker threads. The
link suggester and the cliffhanger refresher wait on the session's queues (anyio memory object
streams, see :mod:`.queues`); the embedding queue is a table other processes add to too (the
CLI, the hooks), so it is looked at again after ``DRAIN_IDLE_S`` of nothing to do.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from ..errors import MamaError
from ..services import indexing
from .queues import Handoff
from .state import State

log = logging.getLogger("mama.server")
DRAIN_BATCH = 16
DRAIN_IDLE_S = 2.0
STARTUP_GRACE_S = 1.0
# After work arrives, the request that queued it (and the next one, often right behind it)
# answers first.
BRIEF_AFTER_S = 0.5
SUGGEST_AFTER_S = 1.0


async def index_in_background(state: State) -> None:
    """Load the embedding model off the event loop, then keep the embedding queue drained."""
    from ..embeddings import open_embedder

    await anyio.sleep(STARTUP_GRACE_S)  # let initialize and tools/list go first
    try:
        state.embedder = await anyio.to_thread.run_sync(open_embedder, state.config)
    except Exception as exc:  # no model: search stays keyword-only
        log.warning("embedding model unavailable, keyword search only: %s", exc)
        return

    def step() -> int:
        store, embedder = state.store, state.embedder
        store.vectors.check_model(embedder.name, embedder.dim)
        return indexing.embed_batch(store, embedder, DRAIN_BATCH)

    while True:
        try:
            if await anyio.to_thread.run_sync(step):
                continue  # more may wait: the next batch at once
        except MamaError as exc:  # e.g. a model mismatch: needs `mama reindex`
            log.warning("embedding paused: %s", exc)
            await anyio.sleep(60)
        except Exception:
            log.error("embedding failed:\n%s", traceback.format_exc())
            await anyio.sleep(30)
        await anyio.sleep(DRAIN_IDLE_S)


async def suggest_in_background(state: State) -> None:
    """Judge link candidates for each saved memory, off the request path (pending only)."""
    from ..assist import suggest

    def run(memory_id: str) -> None:
        env = state.env()
        if not env.config.settings.link_suggestions:
            return
        made = suggest.suggest_for(
            env.store, memory_id, assistant=env.assistant, embedder=env.embedder
        )
        log.info("link suggestions for %s: %d new", memory_id, len(made))

    await _consume(state.session.suggestions, SUGGEST_AFTER_S, run, "link suggestions for %s")


async def refresh_briefs_in_background(state: State) -> None:
    """Re-render the session-start cliffhanger after a turn's checkpoint, off the hook's path.

    The Stop hook only marks the project; the next session then finds the text cached. If
    the session ends first, the next SessionStart renders it itself (slower, still correct).
    """
    from ..services import briefing

    def refresh(project: str) -> None:
        briefing.refresh(state.store, project, state.config)

    await _consume(state.session.briefs, BRIEF_AFTER_S, refresh, "cliffhanger refresh for %s")


async def _consume(
    queue: Handoff[str], after_s: float, work: Callable[[str], None], what: str
) -> None:
    """Run ``work`` in a worker thread for each item of ``queue``, ``after_s`` after it arrives.

    What arrives meanwhile joins the same pass, each item once; a failure is logged as ``what``.
    """
    async with queue.serving() as items:
        async for first in items:
            await anyio.sleep(after_s)
            for item in _with_waiting(first, items):
                try:
                    await anyio.to_thread.run_sync(work, item)
                except Exception:
                    log.error(what + " failed:\n%s", item, traceback.format_exc())


def _with_waiting(first: str, items: MemoryObjectReceiveStream[str]) -> list[str]:
    """``first`` and whatever else is already queued, each once, oldest first."""
    found = [first]
    while True:
        try:
            found.append(items.receive_nowait())
        except anyio.WouldBlock:
            return list(dict.fromkeys(found))
