"""The front's heavy half: loaded after its first answers, drained and stopped at its end.

A mixin of :class:`~.front.Front` that owns what it loads: after ``initialize`` the warm-up
waits for the first ``tools/list`` (``LIST_WAIT_S`` at most), then in one thread builds
the :class:`~.state.State` and starts the hook tools' lanes (:mod:`.hook_lane`: no pydantic),
then, on a listed tool's call or ``HOLD_S`` later, the handlers and the anyio event loop
(:mod:`.dispatch`, :mod:`.background`). A failure is logged and leaves ``state`` or ``portal``
None: a listed tool's call then answers that the server could not load, a hook's call ``{}``.
At the end :meth:`WarmUp.drain` embeds what the project queued and :meth:`WarmUp.finish`
lets the calls finish, stops the loop and closes the store, within a deadline.
Light at module level (the standard library and the front's light modules): the front
imports it before its first list.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Config
from .exposure import Exposure
from .preload import Preload
from .process import leave_signals_to_the_main_thread

if TYPE_CHECKING:
    from .state import State

STARTED = time.monotonic()  # about the process's start under bin/mama-server (python -m)
log = logging.getLogger("mama.server")
DRAIN_S = 10.0  # at the end of stdin, what the calls under way get (a cold start included)
LIST_WAIT_S = 0.05  # after initialize, how long the warm-up waits for the first tools/list
# The rest of the warm-up (pydantic, the handlers, the event loop) waits this long after the
# hook tools' lane is ready, unless a listed tool's call needs it sooner.
HOLD_S = 2.0


class WarmUp:
    """What a front loads after its first answers, and how it stops (the front's mixin)."""

    # The front's, read here: its session, the last list it answered, the calls under way.
    config: Config
    project: str
    db: Path | None
    client: str | None
    served: list[str] | None
    exposure: Callable[[], Exposure]
    notify_if_pending: Callable[[], None]
    _calls: set[threading.Thread]
    _calls_lock: threading.Lock

    def __init__(self, config: Config) -> None:
        self._starting = threading.Lock()
        self.ready = threading.Event()  # set when the warm-up is over, done or failed
        self.lane_ready = threading.Event()  # likewise for the hook tools' part of it
        self._go_on = threading.Event()  # the rest of the warm-up may start
        # A hook call answered, a listed tool's call or the end: the warm-up's next step.
        self._stirred = threading.Event()
        self._stopping = False  # the session ended: the rest of the warm-up is not wanted…
        self._listed_call = False  # …unless a listed tool's call waits for it
        self.state: Any = None  # server.state.State once the lanes are ready
        # Once warm: the anyio BlockingPortal (and its context manager), server.dispatch.
        self.portal: Any = None
        self._portal_cm: Any = None
        self._dispatch: Any = None
        self._warming: threading.Thread | None = None
        self._warm_wanted = False
        self._preload = Preload(config)  # the embedding model, loading from run()

    def warm_up(self) -> None:
        """Load the model and build the State once the first ``tools/list`` and the lines
        waiting are answered (it would slow them), or ``LIST_WAIT_S`` after ``initialize``."""
        self._warm_wanted = True
        timer = threading.Timer(LIST_WAIT_S, self._start_warm_up)
        timer.daemon = True
        timer.start()

    def _start_warm_up(self) -> None:
        with self._starting:  # the reading thread, a call's thread or the timer: once
            if self._warming is not None:
                return
            self._preload.start()
            self._warming = threading.Thread(target=self._warm, name="mama-warm-up", daemon=True)
            self._warming.start()

    def _warm(self) -> None:
        """The hook lanes first (State, store, the hook handlers), then the rest."""
        leave_signals_to_the_main_thread()  # and to the loop and workers started from here
        try:
            self.state = _build_state(
                self.config, self.project, self.db, self._preload, self.exposure()
            )
            log.info("hook tools ready %.0f ms after start", (time.monotonic() - STARTED) * 1000)
            if self.served is not None and self.state.exposure.listed(self.client) != self.served:
                self.state.exposure.pending = True  # listed before the State: tell the client
                self.notify_if_pending()
        except BaseException:
            log.error("the hook tools could not load:\n%s", traceback.format_exc())
        finally:
            self.lane_ready.set()
        # The rest is needed only by the Stop hook, a recall with hits (which loads Jinja
        # itself) or a listed tool's call: loaded before them, it would only compete for the
        # GIL with the first prompt's call. The Stop hook's modules and Jinja once a hook call
        # is answered (a Stop comes after the model's answer); pydantic, the handlers and the
        # event loop on a listed tool's call or HOLD_S after the lanes (a short `claude -p` is
        # often over by then).
        waited = time.monotonic()
        self._stirred.wait(HOLD_S)
        later = self.state is not None and not self._go_on.is_set()  # not for a listed call
        if later:
            self._load_after_the_first_answer()
        self._go_on.wait(max(0.0, HOLD_S - (time.monotonic() - waited)))
        try:
            if self.state is not None and (self._listed_call or not self._stopping):
                from . import dispatch  # pydantic, the schema, the services, the handlers
                from .background import start

                self._portal_cm, self.portal = start(self.state)
                self._dispatch = dispatch
        except BaseException:
            log.error("the server could not load:\n%s", traceback.format_exc())
        finally:
            self.ready.set()
        if self.portal is not None:  # not when the session ended first
            log.info("ready %.0f ms after start", (time.monotonic() - STARTED) * 1000)
            if not later and not self._stopping:  # a listed call came first: the rest now
                self._load_after_the_first_answer()

    def _load_after_the_first_answer(self) -> None:
        """The Stop hook's modules, then Jinja and the template a recall with hits renders
        (``recall/context.py``): off the first prompt's path, before the calls that need them.
        A listed tool's call that comes meanwhile waits for the first alone."""
        from ..services.render import render
        from .hook_tools import turn_modules

        with contextlib.suppress(Exception):
            turn_modules()
            if not self._go_on.is_set():
                render("prompt_context.md.j2", self.config.home)

    def hook_answered(self) -> None:
        """A hook call was answered: what comes after it may load (the front calls it)."""
        self._stirred.set()

    def go_on(self) -> None:
        """A listed tool's call waits for the rest of the warm-up (or the session ended)."""
        self._go_on.set()
        self._stirred.set()

    def finish(self, drain_s: float = DRAIN_S) -> bool:
        """Let the calls under way finish (bounded), stop the loop, close the store.

        Returns False when something still runs past ``drain_s`` (a call, or a background
        task in a thread that cannot be cancelled, such as a model load): the store is then
        left to SQLite's crash safety and the caller should exit without waiting.
        """
        deadline = time.monotonic() + drain_s
        self._stopping = True
        self.go_on()
        with self._calls_lock:
            calls = list(self._calls)
        for worker in calls:
            worker.join(max(0.0, deadline - time.monotonic()))
        if any(worker.is_alive() for worker in calls):
            log.warning("ending with tool calls still running after %.1f s", drain_s)
            return False
        if self._warming is not None:
            self._warming.join(max(0.0, deadline - time.monotonic()))
            if self._warming.is_alive():
                return False
        if self.portal is not None:
            stopping = threading.Thread(target=self._stop_loop, daemon=True)
            stopping.start()
            stopping.join(max(0.0, deadline - time.monotonic()))
            if stopping.is_alive():
                return False
        if self.state is not None:
            self.state.close()
        return True

    def drain(self, budget_s: float) -> None:
        """Embed what the project has queued, re-render the cliffhanger its writes made stale
        (``budget_s`` at most, never raises): a short ``-p`` session leaves neither behind."""
        if self.state is not None:
            from .preload import drain_quietly

            drain_quietly(self.state, budget_s)

    def _stop_loop(self) -> None:
        with contextlib.suppress(RuntimeError):  # already stopped
            self.portal.call(self.portal.stop, True)  # cancels the background tasks
        self._portal_cm.__exit__(None, None, None)


def _build_state(
    config: Config, project: str, db: Path | None, preload: Preload, exposure: Exposure
) -> State:
    """The front's State: the model taken from ``preload`` (leftovers embedded) in a thread
    of its own, the store opened (and migrated) and the hook lanes started here rather than
    by the first call."""
    from .preload import adopt
    from .state import State  # the store, the services, the hook handlers: no pydantic

    state = State(config, project, db)
    state.exposure = exposure  # the session keeps the list it was shown
    state.preload, state.embedder_loading = preload, True
    threading.Thread(target=adopt, args=(state,), name="mama-embedder", daemon=True).start()
    try:
        _ = state.store
    except Exception as exc:  # each call will say what is wrong, as it tries again
        log.error("the store did not open: %s", exc)
    _ = state.hooks
    return state
