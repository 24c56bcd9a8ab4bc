"""Run a hook under a hard deadline: read the event, answer with protocol JSON, never fail.

Contract (Claude Code command hooks): the event arrives as JSON on stdin; stdout carries only
the protocol JSON (``hookSpecificOutput.additionalContext``) or nothing; the exit status is
always 0, so nothing MAMA does can block or break a session. Any error, and any run past the
deadline, ends silently with one line in ``$MAMA_HOME/logs/hooks.log``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

from ..config import Config, mama_home
from ..envelope import envelope
from ..home import keep_private
from ..logs import append

DEADLINE_S = 2.0  # Claude Code's timeout for these hooks is 10 s (hooks/hooks.json)
EVENTS: dict[str, str] = {"session-start": "SessionStart"}


def log(message: str) -> None:
    """Append one line to the hook log (rotated; stderr when it cannot be written); never raises."""
    append("hooks", message)


def _handler(name: str) -> Callable[[dict[str, Any], Config], str]:
    if name == "session-start":
        from .session_start import session_start

        return session_start
    raise ValueError(f"unknown hook {name!r}; known: {', '.join(EVENTS)}")


def run(
    name: str,
    stdin: TextIO,
    stdout: TextIO,
    *,
    deadline_s: float = DEADLINE_S,
    after: Callable[[Config], object] | None = None,
) -> int:
    """Run hook ``name``: read stdin, write the protocol answer to stdout, then ``after``
    (with the hook's config; it must not block: it starts detached work); always returns 0."""
    started = time.monotonic()
    # A watchdog, not a signal: a signal handler cannot interrupt a C call (an SQLite busy
    # wait), while os._exit from another thread ends the process wherever it is.
    watchdog = threading.Timer(deadline_s, _give_up, args=(name, deadline_s))
    watchdog.daemon = True
    watchdog.start()
    keep_private(mama_home())  # new files 0600; an install made before that put right
    try:
        raw = stdin.read()
        event = json.loads(raw) if raw.strip() else {}
        if not isinstance(event, dict):
            raise ValueError("the hook input is not a JSON object")
        # The hook process's composition root: one lenient config (a typo in config.json
        # must not take memory away from a session; problems go to the hook log).
        config = Config(strict=False)
        for problem in config.problems:
            log(f"{name}: {problem}")
        text = _handler(name)(event, config)
        if config.notice:  # logged above, and said where the model can tell the user
            text = f"{text}\n\n{config.notice}".strip()
        answer = envelope(EVENTS.get(name, name), text)
        if answer:
            stdout.write(answer)
            stdout.flush()
        if after is not None:
            after(config)
    except Exception as exc:
        import traceback  # here: only a failing hook pays its import

        log(f"{name}: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
    finally:
        watchdog.cancel()
    log_slow(name, time.monotonic() - started)
    return 0


def _give_up(name: str, deadline_s: float) -> None:
    log(f"{name}: gave up at the {deadline_s:.1f} s deadline (no context injected)")
    os._exit(0)


def log_slow(name: str, elapsed: float) -> None:
    """Note runs that took over half the deadline: they are close to losing their context."""
    if elapsed > DEADLINE_S / 2:
        log(f"{name}: slow run, {elapsed * 1000:.0f} ms")


def main(argv: list[str]) -> int:
    """Entry point: ``python -m mama_plugin.hooks <hook>``; exits 0 whatever happens."""
    if not argv:
        log("no hook name given; expected one of: " + ", ".join(EVENTS))
        return 0
    after = None
    if argv[0] == "session-start":  # the process's composition root: a due backup starts here
        from .daily_backup import kick

        after = kick
    return run(argv[0], sys.stdin, sys.stdout, after=after)
