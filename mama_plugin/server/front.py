"""The plugin's MCP server over stdio: answers at once, imports the heavy parts meanwhile.

Claude Code 2.1.197 waits ~2 s for a plugin's server in ``-p``, and calls the
UserPromptSubmit hook's tool ~0.3–0.5 s after spawning it. So this module imports only the
standard library and MAMA's leaves: ``initialize``, ``ping`` and ``tools/list`` (from the light
catalogue, filtered by the session's exposure) are answered by the reading thread before
pydantic, the store or the handlers exist. The embedding model loads from before the first
line (:mod:`.preload`, in C off the GIL); after the first list a warm-up thread builds the
:class:`~.state.State` and starts the hook tools' lanes (:mod:`.hook_lane`: no pydantic),
which answer the calls :mod:`.hook_table` names. The handlers and an anyio event loop in a
background thread (a blocking portal: the listed tools' calls, :mod:`.background`'s tasks)
load on a listed tool's call or ``HOLD_S`` after the lanes (:mod:`.warm_up`, which stops
them too).

The wire is :mod:`mama_plugin.jsonrpc` (shared with the bootstrap's bridge): a line that is not
JSON gets -32700, a non-object -32600, an unknown method -32601 (what makes a
``server/discover`` probe fall back to ``initialize``); notifications are ignored. stdout
carries the protocol only (fd 1 points at stderr). At the end of stdin, or on SIGINT (how
Claude Code ends a session), what the project still has queued is embedded (1 s, or 0.3 s
before Claude Code's SIGKILL) and its stale cliffhanger rendered, then the process exits.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import sys
import threading
import time
import traceback
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO, NoReturn, cast

from ..config import Config
from ..jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    LIST_CHANGED,
    METHOD_NOT_FOUND,
    LineSession,
    Problem,
    initialize_result,
    request,
    tool_result,
)
from ..logs import where
from .catalogue import instructions, load
from .exposure import (
    MEMORY_KINDS,
    PROPOSAL,
    RELIST_WAIT_S,
    UNREADABLE,
    Exposure,
    contexts_of,
)
from .hook_table import HOOK_BUDGET_S, HOOK_LEAST_S, HOOKS
from .process import composition_root, early_exposure, leave_signals_to_the_main_thread
from .warm_up import DRAIN_S, WarmUp
from .word_params import LINK_TOOL, peek_words, with_word_parameters

log = logging.getLogger("mama.server")
INTERRUPTED_DRAIN_S = 0.05  # after SIGINT
# Embedding what the session saved before exiting: Claude Code sends SIGKILL 0.5 s after its
# SIGINT, so the drain then stops at 0.3 s; a client closing stdin allows a second.
SIGNAL_DRAIN_S, EXIT_DRAIN_S = 0.3, 1.0
WARM_UP_TIMEOUT_S = 60.0  # a call waits this long for the heavy imports at most
SHORT_WORDS = 4  # a prompt with this many words is not asked in the front whether it can recall


class Front(WarmUp, LineSession):
    """One stdio session: the reading thread answers, calls run on the warm event loop."""

    def __init__(
        self,
        stdin: io.BufferedIOBase,
        stdout: BinaryIO,
        config: Config,
        project: str,
        db: Path | None,
    ) -> None:
        self.stdin, self.stdout = stdin, stdout
        self.config, self.project, self.db = config, project, db
        # The session's exposure: seeded from a glance at the project's memory before the
        # first list (storage.peek, the standard library's sqlite3), then the State's own.
        self.early = early_exposure(config)
        self._seeding = threading.Lock()
        self.client: str | None = None
        self.served: list[str] | None = None  # the last list answered, by name
        self.write_lock = threading.Lock()
        super().__init__(config)  # the warm-up's state: nothing loaded yet
        self._calls: set[threading.Thread] = set()
        self._calls_lock = threading.Lock()

    # -- the session ----------------------------------------------------------------------

    def run(self) -> tuple[int, bool]:
        """Serve until stdin ends or SIGINT; return the exit status and whether all stopped.

        Claude Code ends a session with SIGINT and sends SIGTERM 0.1 s later: after SIGINT
        only ``INTERRUPTED_DRAIN_S`` is given to what runs.
        """
        status, drain = 0, DRAIN_S
        self._preload.start()  # in C, off the GIL: the first lists are barely slower
        try:
            for line, more in self._lines():
                self.handle(line)
                if self._warm_wanted and self.served is not None and not more:
                    self._start_warm_up()  # the first list first: the warm-up would slow it
        except KeyboardInterrupt:
            status, drain = 130, INTERRUPTED_DRAIN_S
        if status:  # SIGTERM follows 0.1 s later: let it not cut the drain short
            with contextlib.suppress(ValueError):  # not the main thread (a test)
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
        self.drain(SIGNAL_DRAIN_S if status else EXIT_DRAIN_S)
        return status, self.finish(drain)

    def handle(self, line: bytes) -> None:
        """Answer one client line (the reading thread)."""
        found = request(line)
        if found is None:
            return  # a notification (initialized, cancelled…), or a response to nothing
        if isinstance(found, Problem):
            self.fail(found.ident, found.code, found.message)
            return
        ident, method, params = found.ident, found.method, found.params
        try:
            self._route(ident, method, params)
        except Exception:  # the session goes on: one request's failure must not end it
            log.error("%s could not be answered:\n%s", method, traceback.format_exc())
            self.fail(
                ident,
                INTERNAL_ERROR,
                f"MAMA could not answer {method} (details in {where('server')})",
            )

    def _route(self, ident: Any, method: str, params: dict[str, Any]) -> None:
        if method == "initialize":
            self.initialize(ident, params)
        elif method == "ping":
            self.reply(ident, {})
        elif method == "tools/list":
            self.reply(ident, {"tools": self.tool_list()})
        elif method == "tools/call":
            self.call(ident, params)
        else:
            self.fail(ident, METHOD_NOT_FOUND, f"Method not found: {method}")

    def initialize(self, ident: Any, params: dict[str, Any]) -> None:
        info = params.get("clientInfo")
        name = info.get("name") if isinstance(info, dict) else None
        self.client = name if isinstance(name, str) else None
        told = instructions(
            self.exposure().listed(self.client), enabled=self.config.project_enabled(self.project)
        )
        self.reply(ident, initialize_result(params.get("protocolVersion"), told))
        self.warm_up()

    def exposure(self) -> Exposure:
        """The session's exposure, seeded once from the project's memory.

        The first call reads which kinds of memory the project has (``storage.peek``: the
        standard library's sqlite3, read-only, a few index probes) — not the store, whose
        opening (apsw, the integrity walk) waits for the warm-up. No database: the core.
        A database that cannot be read: every tool (a damaged store must not take tools away).
        """
        with self._seeding:
            if not self.early.started:
                self.early.start(self._first_contexts())
        return self.early

    def _first_contexts(self) -> list[str]:
        db = self.db or self.config.db_path
        if not db.exists():
            return []  # no memory yet: the core, and no store to create here
        try:
            from ..storage.peek import kinds_present

            return contexts_of(kinds_present(db, self.project, (*MEMORY_KINDS, PROPOSAL)))
        except Exception as exc:
            log.error("the tool list could not be seeded from %s (%s): every tool", db, exc)
            return list(UNREADABLE)

    def tool_list(self) -> list[dict[str, Any]]:
        self.served = names = self.exposure().listed(self.client)
        self.exposure().listings += 1
        words: list[Any] = []
        if LINK_TOOL in names:  # the project's frequent words as the link tool's parameters
            words = peek_words(self.db or self.config.db_path, self.project)
            self.exposure().words = tuple(w.word for w in words)
        return [with_word_parameters(load().definition(n), words) for n in names]

    # -- tool calls -----------------------------------------------------------------------

    def call(self, ident: Any, params: dict[str, Any]) -> None:
        """Run one ``tools/call`` in its own thread, so calls answer concurrently."""
        name, arguments = params.get("name"), params.get("arguments")
        if not isinstance(name, str):
            self.fail(ident, INVALID_PARAMS, "Invalid params: tools/call needs a tool name")
            return
        if arguments is not None and not isinstance(arguments, dict):
            self.fail(ident, INVALID_PARAMS, "Invalid params: arguments must be an object")
            return
        meta = params.get("_meta")
        call_id = meta.get("claudecode/toolUseId") if isinstance(meta, dict) else None
        worker = threading.Thread(
            target=self._call,
            args=(ident, name, arguments, call_id if isinstance(call_id, str) else ""),
            name=f"mama-call-{name}",
            daemon=True,
        )
        with self._calls_lock:
            self._calls.add(worker)
        if name not in HOOKS:  # before stdin can end: the rest must load for it
            self._listed_call = True
        self._start_warm_up()  # the call waits for it anyway
        worker.start()

    def _call(self, ident: Any, name: str, arguments: dict[str, Any] | None, call_id: str) -> None:
        leave_signals_to_the_main_thread()
        try:
            try:
                answer = self._answer(name, arguments, call_id)
            except Exception:  # never left unanswered: the client would wait for it
                log.error("tool %s failed:\n%s", name, traceback.format_exc())
                told = f"{name} failed in MAMA (details in {where('server')})."
                answer = tool_result(told, error=True)
            self.reply(ident, answer)
            if name in HOOKS:
                self.hook_answered()  # the warm-up may load what comes after it
        finally:
            with self._calls_lock:
                self._calls.discard(threading.current_thread())

    def _answer(self, name: str, arguments: dict[str, Any] | None, call_id: str) -> dict[str, Any]:
        if name in HOOKS:
            return self._hook(name, arguments)
        self.go_on()  # a listed tool: the rest of the warm-up may not wait any longer
        self.ready.wait(WARM_UP_TIMEOUT_S)
        if self.portal is None or self.state is None:
            return tool_result(
                f"MAMA's server could not load (details in {where('server')}); nothing was saved.",
                error=True,
            )
        changes = self.exposure().changes
        try:
            call = partial(self._dispatch.call, client=self.client, call_id=call_id)
            reply = self.portal.call(call, self.state, name, arguments)
        except Exception:  # the loop is gone (shutting down): dispatch itself never raises
            log.error("tool %s could not run:\n%s", name, traceback.format_exc())
            return tool_result(f"{name} could not run: MAMA's server is stopping.", error=True)
        self.notify_if_pending()
        exposure = self.exposure()
        if exposure.changes != changes and not exposure.failed and not exposure.relisted():
            # Answered once the client has listed the tools again (whichever thread told it),
            # its next request carries them; a hook's turn was built before the hook: no wait.
            log.info("the client did not list the tools again within %.1f s", RELIST_WAIT_S)
        return dict(reply.result())

    def _hook(self, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """A hook's call, on its lane (:mod:`.hook_lane`): never waits for pydantic. A prompt
        that can recall nothing ("hello") is answered at once while the lanes still start;
        its notes (the session, the context the tool list grows by) are taken once they are up."""
        asked = time.monotonic()
        if not self.lane_ready.is_set() and _silent(arguments):  # the prompt hook's
            later = threading.Thread(
                target=self._hook_now, args=(name, arguments), name="mama-notes", daemon=True
            )
            later.start()
            took_ms = (time.monotonic() - asked) * 1000
            log.info(
                "%s answered in %.0f ms (0 ms waiting for the warm-up): {} at once", name, took_ms
            )
            return tool_result("{}", error=False)
        return self._hook_now(name, arguments)

    def _hook_now(self, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        asked = time.monotonic()  # its handler gets HOOK_LEAST_S at least within the budget
        if not self.lane_ready.wait(HOOK_BUDGET_S - HOOK_LEAST_S) or self.state is None:
            log.warning("%s answered {}: not ready after %.1f s", name, time.monotonic() - asked)
            return tool_result("{}", error=False)
        result = self.state.hooks.call(name, arguments, asked).result()
        self.notify_if_pending()
        return dict(result)

    def notify_if_pending(self) -> None:
        """Tell the client its tool list changed, if it did; on failure list every tool."""
        exposure = self.exposure()
        if not exposure.pending:
            return
        exposure.pending = False
        exposure.told_at = exposure.listings
        try:
            self.send(LIST_CHANGED)
        except (OSError, ValueError) as exc:
            exposure.fall_back(f"{type(exc).__name__}: {exc}")


def serve(*, db: Path | None = None, cwd: str | None = None) -> NoReturn:
    """Run the front on stdin/stdout until the client closes stdin (or SIGINT), then exit."""
    # stdout is the protocol's: keep a private copy of it and point fd 1 at stderr, so that
    # whatever prints (llama.cpp, a library) cannot corrupt the stream.
    sys.stdout.flush()
    protocol = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    config, project = composition_root(cwd)
    front = Front(cast(io.BufferedIOBase, sys.stdin.buffer), protocol, config, project, db)
    status, stopped = front.run()
    if not stopped:  # a model load, an abandoned hook worker: do not hold the client up
        log.info("exiting without waiting for work still running")
    # What could close has closed: exit without the interpreter's teardown (modules, idle
    # worker threads), which Claude Code would wait for.
    logging.shutdown()
    sys.stderr.flush()
    os._exit(status)


def _silent(arguments: dict[str, Any] | None) -> bool:
    """Whether a prompt hook's arguments hold a prompt that can recall nothing."""
    prompt = arguments.get("prompt") if isinstance(arguments, dict) else None
    if not isinstance(prompt, str):
        return False
    # A prompt of SHORT_WORDS words of three letters or more nearly always can: it is not read
    # here (the import and the reading would take the CPU from the warm-up it waits for).
    if sum(len(word) >= 3 for word in prompt.split()) >= SHORT_WORDS:
        return False
    from ..services.recall.judge import can_recall

    return not can_recall(prompt)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m mama_plugin.server.front`` (bin/mama-server)."""
    import argparse

    parser = argparse.ArgumentParser(prog="mama-server", description=__doc__.partition("\n")[0])
    parser.add_argument("--project", help="project directory (default: $CLAUDE_PROJECT_DIR)")
    parser.add_argument("--db", help="database file (default: the configured one)")
    args = parser.parse_args(argv)
    try:
        return serve(db=Path(args.db) if args.db else None, cwd=args.project)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
