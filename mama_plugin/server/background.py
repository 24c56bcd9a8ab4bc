"""The server's background tasks: the embedding queue, link suggestions, cliffhanger refreshes,
the day's backup, the day's ``gc``, Korean memories read ahead for Korean prompts, teammates'
``.mama/`` files imported after a pull (:mod:`.share_sync`).

Each runs on the event loop for the server's lifetime and does its work in worker threads. The
link suggester and the cliffhanger refresher wait on the session's queues (anyio memory object
streams, see :mod:`.queues`). The indexer loads the embedding model as the server starts, then
embeds a memory saved in this process at once (the save wakes it through
``session.embeds``); the embedding queue is a table other processes add to too (the CLI, the
hooks), so it is looked at again after ``DRAIN_IDLE_S`` of nothing to do. Before the server
exits (stdin closed, or the SIGINT Claude Code stops it with: :func:`exit_on_signal`),
:func:`drain_before_exit` embeds what is still queued for its project, for a bounded time.
"""

from __future__ import annotations

import logging
import os
import signal
import time
import traceback
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from ..config import Config
from ..errors import MamaError
from ..services.search import indexing
from ..storage.vectors import EmbeddingMismatchError
from ..team.follow import follow_in_background
from .lines_job import waiting, write_lines
from .preload import EXIT_DRAIN_S, adopt, drain_now, model_choice
from .queues import Handoff
from .share_sync import import_shared_in_background
from .state import State

log = logging.getLogger("mama.server")
DRAIN_BATCH = 16
DRAIN_IDLE_S = 2.0
# Claude Code sends SIGKILL 0.5 s after its SIGINT (see exit_on_signal): the drain stops well
# before, leaving time to close the store.
SIGNAL_DRAIN_S = 0.3
# After work arrives, the request that queued it (and the next one, often right behind it)
# answers first.
BRIEF_AFTER_S = 0.5
SUGGEST_AFTER_S = 1.0
# The day's backup copies and checks every page (60 ms at 2,000 memories): it waits until the
# session's start has settled, and runs in a worker thread, never on a hook's path.
BACKUP_AFTER_S = 10.0
# The day's gc waits for the session to settle too, then folds one session a transaction with
# a pause between them (other writers, the Stop hook's among them, get the lock in between),
# and rewrites the file only while that is quick (VACUUM holds the write lock throughout:
# 0.11 s for a 17 MB file with 3.8 MB free, 6,000 synthetic memories with vectors, load ~4.7;
# ~0.4 s at the cap, well inside the Stop hook's 3 s); a larger file is `mama gc`'s to rewrite.
GC_AFTER_S = 60.0
# Korean memories are read ahead by the model that reads Korean prompts once the session start
# has settled, a batch at a time with a pause between (a prompt's own embedding waits at most
# one batch of eight).
READ_AHEAD_AFTER_S = 5.0
READ_AHEAD_PAUSE_S = 0.05
GC_PAUSE_S = 0.05
# A session's checkpoint lines are retold by the model once its turn has been over this long
# (turns that come meanwhile join the same pass): the model's job runs between turns, and a
# turn's hooks that come anyway hold it between tokens.
LINES_AFTER_S = 20.0
GC_REWRITE_MAX_BYTES = 64 * 1024 * 1024


def start(state: State) -> tuple[Any, Any]:
    """Start the event loop in a thread of its own (an anyio blocking portal) with the
    background tasks on it; returns the portal's context manager and the portal."""
    from anyio.from_thread import start_blocking_portal

    portal_cm = start_blocking_portal(name="mama-loop")
    portal = portal_cm.__enter__()
    for task in tasks():
        portal.start_task_soon(task, state)
    return portal_cm, portal


def tasks() -> tuple[Callable[[State], Coroutine[Any, Any, None]], ...]:
    """Every background task a server runs, each started with its :class:`State` (the front's
    loop thread and ``mama serve --sdk``'s task group start the same ones)."""
    return (
        index_in_background,
        refresh_briefs_in_background,
        suggest_in_background,
        back_up_in_background,
        collect_in_background,
        read_korean_in_background,
        import_shared_in_background,
        follow_in_background,
        write_lines_in_background,
    )


async def index_in_background(state: State) -> None:
    """Load the embedding model at once (off the event loop), then keep the queue drained.

    ``state.embedder_ready`` is set when the model is loaded and the project's leftovers are
    embedded, or when it cannot load (``state.embedder`` stays None: keyword search only).
    """
    if state.embedder_loading:  # the front's warm-up started the load (preload.adopt)
        await anyio.to_thread.run_sync(state.embedder_ready.wait, abandon_on_cancel=True)
    else:
        state.embedder_loading = True
        await anyio.to_thread.run_sync(adopt, state)
    if state.embedder is None:
        return

    def step() -> int:
        store, embedder = state.store, state.embedder
        if store.damage is not None:  # nothing is written until `mama doctor` repairs it
            return 0
        try:
            store.vectors.check_model(embedder.name, embedder.dim)
        except EmbeddingMismatchError:
            if not _still_chosen(state):
                raise  # a server of the old choice: the new one's re-embeds
            with store.transaction():  # another server of the new choice may have just reset
                recorded = store.vectors.recorded_model()
                if recorded != (embedder.name, embedder.dim):
                    log.warning(
                        "the store's vectors came from %s: re-embedding every memory with %s",
                        recorded[0],
                        embedder.name,
                    )
                    store.vectors.reset(embedder.name, embedder.dim)
        # This project's memories first: a backlog elsewhere must not hold up a fresh save.
        return indexing.embed_batch(
            store, embedder, DRAIN_BATCH, project=state.project
        ) or indexing.embed_batch(store, embedder, DRAIN_BATCH)

    async with state.session.embeds.serving() as wakes:
        while True:
            try:
                if await anyio.to_thread.run_sync(step):
                    continue  # more may wait: the next batch at once
            except MamaError as exc:  # e.g. the vectors of a model chosen since this loaded
                log.warning("embedding paused: %s", exc)
                await anyio.sleep(60)
            except Exception:
                log.error("embedding failed:\n%s", traceback.format_exc())
                await anyio.sleep(30)
            with anyio.move_on_after(DRAIN_IDLE_S):  # a save here wakes it sooner
                await wakes.receive()
                _with_waiting("", wakes)  # the next step serves every wake-up waiting now


def _still_chosen(state: State) -> bool:
    """Whether the home's config, read now, still chooses the model this server loaded.

    After ``embedding_model`` changed, the new model's server re-embeds the store; a server
    of the old choice, still running, must not re-embed it back (each would drop the
    other's vectors in turn): it pauses until its session ends.
    """
    return model_choice(Config(state.config.home, strict=False)) == state.embedder_chosen_by


async def drain_before_exit(state: State, budget_s: float = EXIT_DRAIN_S) -> int:
    """:func:`drain_now` off the event loop, once the client is done; never raises.

    So a short ``-p`` session leaves no memory waiting for its vector. Returns how many
    memories it embedded.
    """
    done = 0
    try:
        # A batch already running may overrun the budget a little; past this, it is left.
        with anyio.move_on_after(budget_s + 0.5):
            done, left = await anyio.to_thread.run_sync(
                drain_now, state, budget_s, abandon_on_cancel=True
            )
            if left >= 0:
                log.info("before exit: embedded %d memories, %d still queued", done, left)
    except Exception as exc:
        log.warning("embedding before exit failed: %s", exc)
    return done


async def exit_on_signal(state: State) -> None:
    """On SIGINT or SIGTERM: :func:`drain_before_exit`, then end the process at once.

    Claude Code (2.1.197) stops a stdio server with SIGINT, SIGTERM 100 ms later and SIGKILL
    400 ms after that, without closing stdin first: the drain has ``SIGNAL_DRAIN_S``. The
    process is then ended with :func:`end_process`, as the thread blocked reading stdin can
    neither be cancelled nor joined. Must run on the main thread's event loop (signals).
    """
    try:
        receiver = anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM)
        with receiver as signals:
            async for received in signals:
                log.info("signal %s: embedding what is queued, then exiting", received)
                await drain_before_exit(state, SIGNAL_DRAIN_S)
                end_process(state)
                return
    except NotImplementedError:  # an event loop without signal handlers (Windows)
        log.info("no signal handling here: the queue is drained when stdin closes")


def end_process(state: State) -> None:
    """Close the store (its WAL checkpoints) and the log, then exit with status 0 at once."""
    try:
        state.close()
    except Exception as exc:  # a worker thread may still hold its connection: SQLite copes
        log.warning("closing the store at exit: %s", exc)
    logging.shutdown()
    os._exit(0)


async def suggest_in_background(state: State) -> None:
    """Judge link candidates for each saved memory, off the request path (pending only); then
    tidy the relationship words when enough links were added since the last pass, and archive
    the weak links once a day."""
    from ..assist import suggest
    from ..assist.models import link_judge
    from ..services.graph.tidy import tidy_if_due
    from ..services.graph.upkeep import prune_if_due

    def run(memory_id: str) -> None:
        env = state.env()
        if not env.config.settings.link_suggestions:
            return
        made = suggest.suggest_for(
            env.store,
            memory_id,
            assistant=link_judge(env.config, env.assistant),
            embedder=env.embedder,
        )
        log.info("link suggestions for %s: %d new", memory_id, len(made))
        if env.embedder is not None and (tidied := tidy_if_due(env.store, env.embedder)):
            log.info("relationship words tidied: %d clusters", len(tidied.clusters))
        if pruned := prune_if_due(env.store):
            log.info("weak links archived: %d", len(pruned.pruned))

    await _consume(state.session.suggestions, SUGGEST_AFTER_S, run, "link suggestions for %s")


async def write_lines_in_background(state: State, after_s: float = LINES_AFTER_S) -> None:
    """:func:`.lines_job.write_lines` for each session its Stop hook queued, ``after_s`` after
    it came; first those still waiting in the store for this project (queued before a server
    that stopped could run them: :func:`.lines_job.waiting`)."""
    for session_id in await anyio.to_thread.run_sync(waiting, state):
        state.session.lines.put(session_id)  # no consumer yet: the backlog it starts with

    def run(session_id: str) -> None:
        write_lines(state, session_id)

    await _consume(state.session.lines, after_s, run, "checkpoint lines for %s")


async def refresh_briefs_in_background(state: State) -> None:
    """Re-render the session-start cliffhanger after a turn's checkpoint, off the hook's path.

    The Stop hook only marks the project; the next session then finds the text cached. If
    the session ends first, the front's exit renders it (``preload.refresh_briefs``).
    """
    from ..services.story import briefing

    def refresh(project: str) -> None:
        briefing.refresh(state.store, project, state.config)

    await _consume(state.session.briefs, BRIEF_AFTER_S, refresh, "cliffhanger refresh for %s")


async def back_up_in_background(state: State, after_s: float = BACKUP_AFTER_S) -> None:
    """Take the day's backup of the store once, ``after_s`` after the loop starts, in a worker
    thread (``storage.backup.daily_backup``: when the newest is a day old; the newest three
    kept). Never raises: a failure is logged."""
    from ..storage.backup import daily_backup

    await anyio.sleep(after_s)
    keep = state.config.settings.backups_max_count
    try:
        taken = await anyio.to_thread.run_sync(lambda: daily_backup(state.store, keep=keep))
    except MamaError as exc:
        log.warning("no backup today: %s", exc)
    except Exception:
        log.error("the day's backup failed:\n%s", traceback.format_exc())
    else:
        if taken is not None:
            log.info("the day's backup: %s", taken)


async def collect_in_background(state: State, after_s: float = GC_AFTER_S) -> None:
    """Run ``mama gc`` once, ``after_s`` after the loop starts, when it is due (the last run
    a day old) and ``gc_in_background`` is on, in a worker thread at a bounded pace (see
    ``GC_PAUSE_S``, ``GC_REWRITE_MAX_BYTES``). Never raises: a failure is logged."""
    from ..services.hygiene import gc
    from ..storage.space import vacuum_pays

    settings = state.config.settings
    if not settings.gc_in_background:
        return
    await anyio.sleep(after_s)

    def run() -> gc.Collected | None:
        store = state.store
        if store.read_only is not None or store.damage is not None or not gc.due(store):
            return None
        return gc.collect(
            store,
            settings,
            pause=lambda: time.sleep(GC_PAUSE_S),
            rewrite=lambda s: s.file_bytes <= GC_REWRITE_MAX_BYTES and vacuum_pays(s),
        )

    try:
        done = await anyio.to_thread.run_sync(run)
    except Exception:
        log.error("the day's gc failed:\n%s", traceback.format_exc())
    else:
        if done is not None:
            log.info("the day's gc: %s", done.as_dict())


async def read_korean_in_background(state: State, after_s: float = READ_AHEAD_AFTER_S) -> None:
    """When the store's model cannot read Korean and the project holds Korean memories, make
    the reader of Korean prompts and embed what it reads of them (``services.read_ahead``),
    ``after_s`` after the loop starts and once the embedding model has loaded, in a worker
    thread. Never raises: a failure is logged."""
    from ..embeddings.cards import reads_korean
    from ..services.recall import read_ahead

    await anyio.sleep(after_s)
    await anyio.to_thread.run_sync(state.embedder_ready.wait, abandon_on_cancel=True)
    embedder = state.embedder
    if embedder is None or reads_korean(embedder.name):
        return

    def run() -> int:
        store = state.store
        if store.read_only is not None or store.damage is not None:
            return 0
        memories = read_ahead.to_read(store, state.project)
        reader = state.reader() if memories else None
        if reader is None:
            return 0
        return read_ahead.read_ahead(store, reader, memories, pause=_read_ahead_pause)

    try:
        stored = await anyio.to_thread.run_sync(run)
    except Exception:
        log.error("reading Korean memories ahead failed:\n%s", traceback.format_exc())
    else:
        if stored:
            log.info("read %d texts of Korean memories ahead with the Korean reader", stored)


def _read_ahead_pause() -> None:
    time.sleep(READ_AHEAD_PAUSE_S)


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
