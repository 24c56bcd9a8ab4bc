"""What a server process builds first: its log, its lenient config, its project, its signals.

Standard library only: the light front (:mod:`.front`) calls these before it answers
``initialize``; the SDK server (:mod:`.app`) calls the same.
"""

from __future__ import annotations

import contextlib
import faulthandler
import logging
import os
import signal

from ..config import Config
from ..logs import log_path, start
from ..project import project_key
from ..settings import KEYS
from .exposure import Exposure

log = logging.getLogger("mama.server")


def composition_root(cwd: str | None) -> tuple[Config, str]:
    """A server process's logging, lenient config and project (``cwd``, else Claude Code's);
    SIGUSR1 dumps its threads' stacks to stderr (a server that will not stop says where it is).

    Lenient: a typo in config.json must not take memory away from a session; each problem is
    logged with the fix.
    """
    start("server")  # private files, the rotated log (stderr when it cannot be written)
    _crash_traces()
    if hasattr(signal, "SIGUSR1"):  # `kill -USR1 <pid>`: every thread's stack on stderr
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    config = Config(strict=False)
    for problem in config.problems:
        log.error("%s — fix it with `mama config set`", problem)
    # Claude Code exports the project's directory to plugin servers.
    return config, project_key(cwd or os.environ.get("CLAUDE_PROJECT_DIR") or None)


def early_exposure(config: Config) -> Exposure:
    """The exposure ``State`` will build from the same config, before ``State`` is imported."""
    mode = str(config.settings.dynamic_tools)
    override = config.overrides.get("dynamic_tools", "")
    if override:
        with contextlib.suppress(ValueError):  # State logs it
            mode = str(KEYS["dynamic_tools"].parse(override))
    return Exposure(mode=mode, legacy_listed=config.settings.legacy_tools_listed)


def leave_signals_to_the_main_thread() -> None:
    """Block SIGINT in the calling thread (and the threads it starts).

    The kernel hands a process's signal to any thread that does not block it; only the main
    thread, blocked reading stdin, turns SIGINT into an exit, and its read is interrupted
    only when the signal is delivered to it.
    """
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def _crash_traces() -> None:
    """A fatal signal (a native library's segfault, an abort) writes every thread's stack to
    ``server.log`` before the process dies: without it Claude Code only saw the connection
    close. The file stays open for the process's life (stderr when it cannot be opened)."""
    try:
        fd = os.open(
            log_path("server"), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600
        )
        faulthandler.enable(file=os.fdopen(fd, "w"), all_threads=True)
    except OSError:
        faulthandler.enable(all_threads=True)
