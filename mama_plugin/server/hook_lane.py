"""The hook tools' runner: one long-lived worker per hook tool, each call under its deadline.

Claude Code calls ``observe_prompt`` on every prompt and ``checkpoint_turn`` after every turn,
and the prompt waits for the first. Both servers run these calls here (the front directly,
``mama serve --sdk`` through :mod:`.dispatch`), reading :mod:`.hook_table`; nothing here
imports pydantic, the schema or the tool table. Each hook tool has its own :class:`Lane`: a
worker thread started once, taking calls from a queue, so successive prompts run on the same
thread and reuse its store connection (the store keeps one per thread) instead of opening one
per prompt. Every call runs inside ``storage.connection.waits_until`` its deadline and
answers ``{}`` on any failure or past the deadline (fail open).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from ..envelope import SILENT
from ..storage.connection import waits_until
from .base import Answer, Reply
from .hook_table import HOOK_BUDGET_S, HOOK_DEADLINE_S, HOOK_LEAST_S, HOOKS, HookTool
from .process import leave_signals_to_the_main_thread

if TYPE_CHECKING:
    from .state import State

log = logging.getLogger("mama.server")
# A lane's threads at most: the one taking calls and those still finishing a call that ran
# past its deadline. Past that, calls wait for one of them (each answers {} at its deadline).
MAX_WORKERS = 3


class _Status(Enum):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    DROPPED = "dropped"  # its deadline passed before a worker took it: never run


@dataclass(eq=False)
class _Call:
    """One call on its way through a lane; its fields change under the lane's lock."""

    work: Callable[[], Answer]
    until: float  # monotonic deadline
    done: threading.Event = field(default_factory=threading.Event)
    status: _Status = _Status.QUEUED
    worker: threading.Thread | None = None
    answer: Answer | None = None
    error: Exception | None = None
    abandoned: bool = False  # its caller answered {} at the deadline while it ran


class Lane:
    """One hook tool's calls, run in turn by a long-lived worker thread fed from a queue.

    Successive calls run on the same thread, so they share its store connection. A call still
    running at its deadline is left to finish (SQLite work cannot be interrupted safely): its
    caller gets TimeoutError, retires that worker, which exits once its call is done, and
    starts a fresh worker for the calls behind it. A lane keeps ``max_workers`` threads at
    most; with every one of them finishing a late call, the calls wait in the queue, each
    dropped at its own deadline, until one finishes and takes the lane back.
    """

    def __init__(self, name: str, max_workers: int = MAX_WORKERS) -> None:
        self.name = name
        self.max_workers = max_workers
        self._calls: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()  # None: stop
        self._lock = threading.Lock()
        self._serving: threading.Thread | None = None  # the worker taking calls
        self._alive = 0  # workers running: the serving one, and retired ones finishing
        self._started = 0
        self._closed = False

    def start(self) -> None:
        """Start the lane's worker unless it has one (or may start no more)."""
        with self._lock:
            self._ensure_worker()

    def run(self, work: Callable[[], Answer], until: float) -> Answer:
        """Run ``work`` on the lane and wait for it until ``until`` (monotonic).

        Returns its answer; raises what it raised, TimeoutError past the deadline (it then
        finishes on its own, or never starts if no worker took it yet), RuntimeError once
        the lane is closed.
        """
        call = _Call(work, until)
        with self._lock:
            if self._closed:
                raise RuntimeError(f"the {self.name} lane is closed")
            self._ensure_worker()
            self._calls.put(call)
        call.done.wait(max(0.0, until - time.monotonic()))
        with self._lock:
            if call.status is _Status.QUEUED:
                call.status = _Status.DROPPED
                raise TimeoutError(f"{self.name} waited for a worker past its deadline")
            if call.status is _Status.RUNNING:
                call.abandoned = True
                self._retire(call.worker)
                raise TimeoutError(f"{self.name} ran past its deadline")
        if call.error is not None:
            raise call.error
        assert call.answer is not None
        return call.answer

    def workers(self) -> int:
        """How many worker threads the lane has running now."""
        with self._lock:
            return self._alive

    def close(self) -> None:
        """Stop taking calls; the worker exits after the calls already queued, a retired one
        after its call (nothing is waited for here)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._calls.put(None)

    # -- with self._lock held --------------------------------------------------------------

    def _ensure_worker(self) -> None:
        if self._serving is not None or self._closed:
            return
        if self._alive >= self.max_workers:
            return  # every thread is finishing a late call: the first one done takes over
        self._started += 1
        name = f"mama-hook-{self.name}-{self._started}"
        worker = threading.Thread(target=self._serve, name=name, daemon=True)
        self._serving, self._alive = worker, self._alive + 1
        worker.start()

    def _retire(self, worker: threading.Thread | None) -> None:
        """``worker`` is stuck past a deadline: it takes no more calls; a fresh one does."""
        if worker is None or worker is not self._serving:
            return  # already retired
        self._serving = None
        if self._closed:
            return  # it exits once its call is done; nothing more is taken
        self._ensure_worker()
        if self._serving is None:
            log.warning(
                "%s: all %d workers are finishing calls past their deadline; the next calls "
                "wait for one",
                self.name,
                self._alive,
            )
        else:
            log.warning(
                "%s: its worker is still busy past the deadline; a new one takes the next "
                "calls (%d running)",
                self.name,
                self._alive,
            )

    # -- the worker thread -----------------------------------------------------------------

    def _serve(self) -> None:
        me = threading.current_thread()
        leave_signals_to_the_main_thread()
        try:
            while (call := self._take(me)) is not None:
                try:
                    with waits_until(call.until):  # no lock wait outlives the hook's deadline
                        call.answer = call.work()
                except Exception as exc:  # handed to the caller, which answers {}
                    call.error = exc
                if not self._finished(call, me):
                    return
        finally:
            with self._lock:
                self._alive -= 1
                if self._serving is me:
                    self._serving = None

    def _take(self, me: threading.Thread) -> _Call | None:
        """The next call to run (None: the lane closed); calls dropped meanwhile skipped."""
        while (call := self._calls.get()) is not None:
            with self._lock:
                if call.status is _Status.QUEUED:
                    call.status, call.worker = _Status.RUNNING, me
                    return call
        return None

    def _finished(self, call: _Call, me: threading.Thread) -> bool:
        """Hand ``call``'s outcome over; whether this worker takes more calls."""
        with self._lock:
            call.status = _Status.FINISHED
            call.done.set()
            if call.abandoned and call.error is not None:
                failure = "".join(traceback.format_exception(call.error))
                log.error("%s failed after its deadline:\n%s", self.name, failure)
            if self._serving is me:
                return True
            if self._serving is None and not self._closed:
                self._serving = me  # every worker was retired: this one takes the lane back
                return True
            return False


class HookRunner:
    """Runs the hook tools for ``state``, each on its own lane, failing open to ``{}``.

    The tools are :data:`.hook_table.HOOKS`. ``deadline_s`` is a handler's deadline,
    shortened when the call already waited (for the front's warm-up) so the whole call stays
    within ``budget_s``, but never under ``HOOK_LEAST_S`` from the budget alone. Both are
    attributes so a test can shrink them.
    """

    def __init__(
        self,
        state: State,
        *,
        deadline_s: float = HOOK_DEADLINE_S,
        budget_s: float = HOOK_BUDGET_S,
    ) -> None:
        self.state = state
        self.tools: dict[str, HookTool] = dict(HOOKS)
        self.deadline_s, self.budget_s = deadline_s, budget_s
        for tool in self.tools.values():
            tool.handler()  # the handlers' modules load now, not with the first prompt
        self.lanes = {name: Lane(name) for name in self.tools}
        for lane in self.lanes.values():
            lane.start()

    def call(self, name: str, given: Any, asked: float | None = None) -> Reply:
        """Answer hook tool ``name`` asked at monotonic ``asked`` (default: now); never raises.

        Its reply, or ``{}`` when the arguments are wrong, the handler fails or runs past its
        deadline. Logs what the call cost the prompt.
        """
        asked = time.monotonic() if asked is None else asked
        waited = time.monotonic() - asked
        deadline_s = min(self.deadline_s, max(HOOK_LEAST_S, self.budget_s - waited))
        reply = self._run(name, given, deadline_s)
        took_ms, waited_ms = (time.monotonic() - asked) * 1000, waited * 1000
        log.info(
            "%s answered in %.0f ms (%.0f ms waiting for the warm-up)", name, took_ms, waited_ms
        )
        return reply

    def _run(self, name: str, given: Any, deadline_s: float) -> Reply:
        until = time.monotonic() + deadline_s
        try:
            tool, lane = self.tools[name], self.lanes[name]
            args = tool.read(given)
            handler = tool.handler()
        except Exception as exc:
            log.error("%s: %s, answered {} (fail open)", name, exc)
            return Reply(SILENT, None)
        try:
            with self.state.hook_gate.hook():  # the assist model waits meanwhile
                answer = lane.run(lambda: handler(self.state.env(), args), until)
        except TimeoutError:
            log.warning("%s ran past %.1f s: answered {} (fail open)", name, deadline_s)
            return Reply(SILENT, None)
        except Exception:
            log.error("%s failed, answered {} (fail open):\n%s", name, traceback.format_exc())
            return Reply(SILENT, None)
        # Hooks read only the text; the structured copy is for other clients and tests.
        return Reply(answer.text or SILENT, answer.data)

    def close(self) -> None:
        """Stop every lane (their workers exit on their own)."""
        for lane in self.lanes.values():
            lane.close()
