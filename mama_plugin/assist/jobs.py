"""A server's model work: one job at a time on one low-priority thread, the model freed when idle.

A server process has one :class:`ModelJobs`. Every model call the server makes (a draft, a link
judgement) is a :class:`Job` run on its worker thread in the order asked, so at most one runs
at a time, with ``assist_threads`` llama.cpp threads, at ``assist_nice`` more nice than the
server (Linux sets it per thread; llama.cpp's threads, started by the worker, inherit it), and
waiting between tokens while a hook call runs (:mod:`.gate`). When no job has come for
``assist_idle_s``, the worker closes the model (:meth:`.Assistant.close`, which hands the
memory back); the next job loads it again. The close runs on the worker between jobs, so never
under one.

A job may carry a key: asking again with the key of a job whose result nobody took yet returns
that job, running or done. That is how a draft that outlived its wait hands the model's items
to the next call for the same decision.
"""

from __future__ import annotations

import logging
import os
import queue
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

import pydantic

from .runtime import Assistant, Generation, Prompt

log = logging.getLogger("mama.assist")
T = TypeVar("T")
M = TypeVar("M", bound=pydantic.BaseModel)
KEPT = 8  # keyed jobs remembered: one per decision being drafted, a few sessions' worth


class JobsClosed(RuntimeError):
    """Raised by a job that was still waiting when its server's model work stopped."""


@dataclass(eq=False)
class Job(Generic[T]):
    """One piece of model work: run once on the worker, its result kept until taken."""

    work: Callable[[Assistant], T]
    key: str = ""
    done: threading.Event = field(default_factory=threading.Event)
    value: T | None = None
    error: BaseException | None = None
    taken: bool = False  # a later job with the same key starts afresh

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the job is done, at most ``timeout`` seconds; True when done."""
        return self.done.wait(timeout)

    def take(self) -> T:
        """The job's result, marked taken; raises what the work raised. Call once done."""
        self.taken = True
        if self.error is not None:
            raise self.error
        return cast(T, self.value)


class ModelJobs:
    """The server's one model worker (started with the first job), its queue and keyed jobs.

    ``assistant_of`` gives the assistant to run each job with (the server's, which follows
    the config); ``nice`` overrides ``assist_nice`` (a benchmark's comparison). Safe to call
    from any thread.
    """

    def __init__(self, assistant_of: Callable[[], Assistant], *, nice: int | None = None) -> None:
        self._assistant_of = assistant_of
        self._nice = nice
        self._queue: queue.SimpleQueue[Job[Any] | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._keyed: OrderedDict[str, Job[Any]] = OrderedDict()
        self._worker: threading.Thread | None = None
        self._closed = False
        self.released = threading.Semaphore(0)  # one release per idle close (tests wait on it)
        self.nice: int | None = None  # the worker's nice value, once it runs (None: unknown)

    @property
    def name(self) -> str:
        """The model's name, once it was loaded."""
        return self._assistant_of().name

    def generate(
        self, prompt: Prompt, schema: type[M], *, max_tokens: int, timeout_s: float | None = None
    ) -> Generation[M]:
        """:meth:`.Assistant.generate` as a job, waited for; never raises for model trouble."""

        def work(assistant: Assistant) -> Generation[M]:
            return assistant.generate(prompt, schema, max_tokens=max_tokens, timeout_s=timeout_s)

        try:
            job = self.submit(work)
            job.wait()
            return job.take()
        except JobsClosed as exc:
            return Generation(None, "unavailable", str(exc))

    def submit(self, work: Callable[[Assistant], T], *, key: str = "") -> Job[T]:
        """Queue ``work``; with a ``key``, the untaken job of that key if there is one.

        Raises :class:`JobsClosed` once :meth:`close` was called.
        """
        with self._lock:
            if self._closed:
                raise JobsClosed("the server's model work has stopped")
            if key:
                known = self._keyed.get(key)
                if known is not None and not known.taken:
                    return cast(Job[T], known)
            job: Job[T] = Job(work, key)
            if key:
                self._keyed[key] = job
                self._keyed.move_to_end(key)
                while len(self._keyed) > KEPT:
                    self._keyed.popitem(last=False)
            if self._worker is None:
                self._worker = threading.Thread(target=self._serve, name="mama-model", daemon=True)
                self._worker.start()
            self._queue.put(job)
            return job

    def close(self) -> None:
        """Stop the worker after the job it runs; it then frees the model, and the jobs still
        queued fail with :class:`JobsClosed`. Waits for nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._queue.put(None)

    # -- the worker thread ------------------------------------------------------------------

    def _serve(self) -> None:
        assistant = self._assistant_of()
        nice = assistant.config.settings.assist_nice if self._nice is None else self._nice
        self.nice = lower_priority(nice)
        while True:
            assistant = self._assistant_of()
            idle_s = float(assistant.config.settings.assist_idle_s)
            try:
                job = self._queue.get(timeout=idle_s if assistant.loaded else None)
            except queue.Empty:
                assistant.close()
                log.info("the assist model was idle %g s: released", idle_s)
                self.released.release()
                continue
            if job is None or self._closed:
                break
            try:
                job.value = job.work(assistant)
            except BaseException as exc:  # handed to whoever takes the result
                job.error = exc
            job.done.set()
        self._assistant_of().close()
        while job is not None or not self._queue.empty():  # what was queued when it stopped
            if job is not None:
                job.error = JobsClosed("the server's model work stopped before this job")
                job.done.set()
            job = self._queue.get_nowait()


def lower_priority(nice: int) -> int | None:
    """Make the calling thread ``nice`` steps nicer (Linux: per thread; threads it starts
    inherit it); returns its nice value, None where it cannot be set or read."""
    if sys.platform != "linux":  # elsewhere setpriority() takes a process id, not a thread's
        return None
    tid = threading.get_native_id()
    try:
        if nice > 0:
            now = os.getpriority(os.PRIO_PROCESS, tid)
            os.setpriority(os.PRIO_PROCESS, tid, min(19, now + nice))
        return os.getpriority(os.PRIO_PROCESS, tid)
    except OSError as exc:
        log.info("the assist model runs at the server's priority: %s", exc)
        return None
