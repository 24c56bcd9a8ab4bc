"""The embedding model, loading in its own thread from the server's first moments.

A session's first prompt is matched by meaning only if the model is loaded when the
UserPromptSubmit hook calls ``observe_prompt``, ~0.3–0.5 s after Claude Code spawns the
server. Loading it after the warm-up's imports (pydantic, the handlers: ~0.3 s) made every
first prompt wait for both in turn. The front starts a :class:`Preload` before it reads its
first line, beside the warm-up: llama.cpp's bindings alone are imported (not ``Llama``), then
it reads the model and builds its context in C calls that release the GIL, and numpy is
imported after that, so most of the load overlaps the front's answers and imports. The
indexer (:func:`.background.index_in_background`) takes the model from here.

Standard library only at import: numpy and llama.cpp are imported in the loading thread.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Config
from ..errors import MamaError, StoreBusyError
from .process import leave_signals_to_the_main_thread

if TYPE_CHECKING:
    from .state import State

log = logging.getLogger("mama.server")
SERVER_THREADS = 1  # the server's embedder, while embedding_threads is 0 (auto)
# Embedding the project's leftovers (memories an earlier session left queued) before a prompt
# may use the vectors: a short session's shutdown drain normally leaves none.
LEFTOVERS_S = 1.0
EXIT_DRAIN_S = 1.0  # after the client closed stdin
ROOT = Path(__file__).resolve().parents[2]  # the plugin's root, for the builder's PYTHONPATH


def build_outliving(config: Config) -> None:
    """Build the default embedding model in a process of its own when none is cached, and
    wait for it (blocking; never raises).

    The build takes 2–4 s of wall time on this machine; a short ``claude -p`` session closes
    the server before that, so a build in this process died with it, left a temporary file
    and started over in the next session, and a new user's first sessions all matched on
    keywords only. A detached ``mama models`` (its own session, so Claude Code's signals to
    the server do not reach it) finishes whatever happens to the server; the next server
    finds the model cached. When the builder cannot run, :func:`load_model` builds in this
    process as before.
    """
    from ..embeddings.kinds import chosen, kind_of

    if kind_of(chosen(config)).ready(config):  # nothing to build or extract
        return
    import subprocess  # only now: its import is 10–15 ms of the prompt's wait for the model

    env = {**os.environ, "PYTHONPATH": str(ROOT), "MAMA_HOME": str(config.home)}
    try:
        builder = subprocess.Popen(
            [sys.executable, "-P", "-m", "mama_plugin.cli", "models"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as exc:
        log.warning("cannot start the embedding model's builder (%s); building here", exc)
        return
    log.info("building the embedding model in process %d", builder.pid)
    status = builder.wait()
    if status != 0:
        log.warning("the embedding model's builder exited with status %d; building here", status)


def load_model(config: Config) -> Any:
    """Open the configured embedding model and make its first call (blocking; raises).

    One short text at a time: one thread unless ``embedding_threads`` says otherwise. With
    two on a busy two-core machine (load 7.9) llama.cpp's spinning barrier made an embedding
    4x slower (median 110 vs 25 ms) and the first one take 2.8 s (vs 0.03 s). llama.cpp's
    first context sets up its compute graph (~0.1 s, ~0.8 s on a busy machine): paid here,
    not by the first prompt or the first save. Between calls the model rests (each call
    opens a context sized to it, :class:`.embeddings.Embedder`): a server waiting for the
    next prompt holds ~50–60 MB of the model, not ~125 (MiniLM) or ~510 (EmbeddingGemma),
    and each call pays for its context (a prompt: MiniLM ~9 ms, EmbeddingGemma ~20–40).
    """
    from ..embeddings import open_embedder

    build_outliving(config)
    threads = config.settings.embedding_threads or SERVER_THREADS
    embedder = open_embedder(config, threads=threads)
    embedder.embed(["warm up"])
    return embedder


class Preload:
    """One model load in a daemon thread; :meth:`result` waits for it and hands it over."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.started = self.loaded = 0.0  # monotonic seconds
        self._done = threading.Event()
        self._embedder: Any = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Preload:
        """Start loading (once); returns self."""
        if self._thread is None:
            self.started = time.monotonic()
            self._thread = threading.Thread(target=self._run, name="mama-model", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        leave_signals_to_the_main_thread()
        try:
            self._embedder = load_model(self.config)
        except BaseException as exc:  # handed to whoever takes the result
            self._error = exc
        finally:
            self.loaded = time.monotonic()
            self._done.set()

    def result(self) -> Any:
        """The loaded embedder, waiting for the load; raises what the load raised."""
        self.start()
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._embedder


def model_choice(config: Config) -> tuple[str, str]:
    """The settings that choose the embedding model: its name and its own GGUF path."""
    settings = config.settings
    return settings.embedding_model, settings.embedding_model_path


def adopt(state: State) -> None:
    """Take the embedder (``state.preload``'s, else loaded now), then embed the project's
    leftovers; set ``state.embedder_ready`` whatever happens (blocking, for a thread)."""
    started = time.monotonic()
    try:
        if state.preload is not None:  # loading since the front answered initialize
            embedder = state.preload.result()
            started = state.preload.started
            chosen_by = model_choice(state.preload.config)
        else:
            embedder = load_model(state.config)
            chosen_by = model_choice(state.config)
        state.embedder_chosen_by = chosen_by
        state.embedder = embedder
        loaded = time.monotonic()
        done = _leftovers(state, embedder)
        log.info(
            "embedding model loaded in %.2f s, warm; %d queued memories embedded in %.2f s",
            (state.preload.loaded if state.preload is not None else loaded) - started,
            done,
            time.monotonic() - loaded,
        )
    except MamaError as exc:  # no model (keyword search only), or a model mismatch
        log.warning("embedding model unavailable or unusable: %s", exc)
    except Exception:
        log.error("embedding model failed to load:\n%s", traceback.format_exc())
    finally:
        state.embedder_ready.set()


def _leftovers(state: State, embedder: Any) -> int:
    """Embed the project's leftovers for ``LEFTOVERS_S`` at most, lock waits included (a
    prompt waits for this); what another writer's lock keeps queued waits for the drain."""
    from ..services.search import indexing
    from ..storage.connection import waits_until

    deadline = time.monotonic() + LEFTOVERS_S
    try:
        with waits_until(deadline):
            return indexing.drain_until(state.store, embedder, deadline, project=state.project)
    except StoreBusyError as exc:
        log.info("leftovers left queued for now: %s", exc)
        return 0


def drain_now(state: State, budget_s: float = EXIT_DRAIN_S) -> tuple[int, int]:
    """Embed what is still queued for the server's project, for about ``budget_s`` at most.

    Blocking, for a worker thread (or a front's own shutdown path). Waits for a model still
    loading within the same budget; without a model it does nothing. Returns (embedded, still
    queued); still queued is -1 when there is no model. Raises what the store raises.
    """
    from ..services.search import indexing
    from ..storage.connection import waits_until

    deadline = time.monotonic() + budget_s
    if state.embedder_loading:
        state.embedder_ready.wait(max(0.0, deadline - time.monotonic()))
    embedder = state.embedder
    if embedder is None:  # no model: nothing can be embedded (and no store to open)
        return 0, -1
    with waits_until(deadline):  # another writer's lock must not hold the exit up
        store = state.store
        done = indexing.drain_until(store, embedder, deadline, project=state.project)
    return done, store.vectors.count_pending(project=state.project)


def drain_quietly(state: State, budget_s: float) -> None:
    """:func:`drain_now` for the front's exit, beside :func:`refresh_briefs` in a thread of
    its own (the embedding runs in llama.cpp, off the GIL): what goes wrong is logged, never
    raised, and neither waits past ``budget_s``."""
    started = time.monotonic()
    deadline = started + budget_s
    briefs = threading.Thread(target=refresh_briefs, args=(state,), name="mama-briefs", daemon=True)
    briefs.start()
    embedded = left = 0
    try:
        embedded, left = drain_now(state, budget_s)
    except Exception:
        log.error("the exit drain failed:\n%s", traceback.format_exc())
    briefs.join(max(0.0, deadline - time.monotonic()))
    log.info(
        "exit: %d memories embedded (%d left queued), cliffhanger %s, in %.0f ms",
        embedded,
        max(left, 0),
        "refreshed" if not briefs.is_alive() else "still rendering",
        (time.monotonic() - started) * 1000,
    )


def refresh_briefs(state: State) -> None:
    """Render the session-start cliffhanger of the projects this session's writes made stale
    and no background task refreshed (a short session ends before it would): the next
    SessionStart hook then serves it from the cache instead of importing Jinja and rendering
    it itself (~60 ms of the next session's start). Never raises."""
    projects = list(state.session.stale_briefs)
    state.session.stale_briefs.difference_update(projects)
    if not projects:
        return
    try:
        from ..services.story import briefing

        for project in projects:
            briefing.brief(state.store, project, state.config, "startup")
    except Exception:
        log.error("the exit's cliffhanger refresh failed:\n%s", traceback.format_exc())
