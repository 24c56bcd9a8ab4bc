"""What one server process holds: config, project, store, embedder, exposure, session."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any

from ..config import KEYS, Config
from ..storage import Store
from .base import Env, Session
from .context import detect
from .exposure import Exposure

log = logging.getLogger("mama.server")


class State:
    """Everything one server process holds: config, project, store, embedder, exposure.

    Shared by the event loop and worker threads (hook tools, slow tools, background work).
    The store gives each thread its own connection, so no lock is held around store work; the
    small locks here only make the lazy opening and the tool-list growth happen once.
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
        # Set once the embedder is loaded (and this project's leftovers embedded) or cannot
        # load; a prompt waits on it, bounded, only while a loader runs (embedder_loading).
        self.embedder_ready = threading.Event()
        self.embedder_loading = False
        self._assistant: Any = None
        self.session = Session()
        self._opening = threading.Lock()  # the store opens once, whichever thread asks first
        self._making = threading.Lock()  # likewise the assistant
        self._observing = threading.Lock()  # a context grows the tool list once

    @property
    def store(self) -> Store:
        """The store, opened (and migrated) on first use."""
        with self._opening:
            if self._store is None:
                self._store = Store.open(self.db, config=self.config)
            return self._store

    @property
    def assistant(self) -> Any:
        """The local generative model's runtime (its model loads on first use, not here)."""
        from ..assist.runtime import Assistant

        with self._making:
            if self._assistant is None or self._assistant.config.settings.assist_model_path != (
                self.config.settings.assist_model_path
            ):
                if self._assistant is not None:
                    self._assistant.close()
                self._assistant = Assistant(self.config)
            self._assistant.config = self.config  # threads, context and timeout apply next load
            return self._assistant

    def env(self, *, call_id: str = "") -> Env:
        """What the tool handlers need (with config.json re-read if it changed)."""
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
            lambda: self.assistant,
            call_id,
            self.embedder_within,
        )

    def embedder_within(self, timeout_s: float) -> Any:
        """The embedder, waiting up to ``timeout_s`` while it loads; None when unavailable.

        Returns at once when no loader runs (no background task, or it finished or failed).
        """
        if self.embedder_loading:
            self.embedder_ready.wait(timeout_s)
        return self.embedder

    def observe(self, prompt: str) -> tuple[str | None, list[str]]:
        """Detect the prompt's context and grow the tool list for it; return both."""
        context = detect(prompt)
        with self._observing:
            return context, self.exposure.grow(context)

    def close(self) -> None:
        """Close the store if it was opened, and free the assist model if it was loaded."""
        if self._assistant is not None:
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
    override = os.environ.get("MAMA_DYNAMIC_TOOLS", "").strip()
    if override:
        try:
            return str(KEYS["dynamic_tools"].parse(override))
        except ValueError as exc:
            log.error("MAMA_DYNAMIC_TOOLS=%r ignored: %s", override, exc)
    return str(config.settings.dynamic_tools)
