"""Hooks first: model work steps aside while a hook call runs.

A hook call (the prompt's ``observe_prompt``, the turn's ``checkpoint_turn``) holds the gate
for its whole call (:meth:`HookGate.hook`); the assist model checks it between generated
tokens and between prompt batches (:meth:`HookGate.wait_clear`) and waits, without holding the
GIL or a core, until no hook runs. A token or a prompt batch already computing finishes first:
llama.cpp cannot be interrupted mid-call. Standard library only: the hook lane imports it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator


class HookGate:
    """How many hook calls run now, and a wait for none to run; safe between threads."""

    def __init__(self) -> None:
        self._running = 0
        self._quiet = threading.Condition()
        self.paused = 0  # how many times model work waited for a hook (tests, benchmarks)

    @contextlib.contextmanager
    def hook(self) -> Iterator[None]:
        """Hold the gate for one hook call: model work waits until it is over."""
        with self._quiet:
            self._running += 1
        try:
            yield
        finally:
            with self._quiet:
                self._running -= 1
                if not self._running:
                    self._quiet.notify_all()

    def busy(self) -> bool:
        """True while a hook call runs."""
        return self._running > 0

    def wait_clear(self, until: float) -> bool:
        """Wait until no hook call runs, or until monotonic ``until``; True when clear."""
        with self._quiet:
            if self._running:
                self.paused += 1
            while self._running:
                left = until - time.monotonic()
                if left <= 0:
                    return False
                self._quiet.wait(left)
            return True
