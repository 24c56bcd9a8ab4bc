"""``python -m mama_plugin.bootstrap [--foreground] [--core-only]``: build the environment once.

Only one process works at a time: each takes an exclusive non-blocking ``flock`` on
``DATA/bootstrap.lock``, and a process that cannot get it exits 0 at once (the holder is doing
the work). The lock dies with its holder, so a killed bootstrap never blocks the next one.
``--foreground`` (``bin/mama``: a person is waiting) instead waits until the core is ready or
the lock is free, builds the core, and leaves the local-model runtime to a detached bootstrap.

Exit status: 0 when the core is ready or another process is building it, 1 when phase 1
failed (the log says why). A failed phase 2 is logged and recorded, never an error here.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import IO

from ..errors import BootstrapError
from ..home import create_private, private_folder
from . import build, paths, pending
from .launcher import ROOT

FOREGROUND_WAIT_S = 1800.0
POLL_S = 0.5


def spawn_detached(python: str, *args: str) -> subprocess.Popen[bytes]:
    """Start a bootstrap in its own session with no terminal or pipes; return at once."""
    return subprocess.Popen(
        [python, "-P", "-m", "mama_plugin.bootstrap", *args],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def spawn_catchup() -> subprocess.Popen[bytes] | None:
    """Start ``mama catchup`` detached in the ready environment when turns wait for it, its
    output appended to the bootstrap log; None when nothing waits or nothing is ready."""
    chosen = paths.select_venv()
    if chosen is None or not pending.waiting():
        return None
    log = paths.log_path()
    private_folder(log.parent)
    create_private(log)
    with open(log, "ab") as out:
        return subprocess.Popen(
            [str(paths.venv_python(chosen[0])), "-P", "-m", "mama_plugin.cli", "catchup"],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
        )


def _try_lock(handle: IO[bytes]) -> bool:
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _wait_for_lock(handle: IO[bytes], log: build.Log) -> bool:
    """Foreground: wait until the lock is ours (True) or the core became ready (False)."""
    log(f"another process is preparing the environment; waiting (log: {log.path})")
    deadline = time.monotonic() + FOREGROUND_WAIT_S
    while time.monotonic() < deadline:
        if paths.core_ready():
            return False
        if _try_lock(handle):
            return True
        time.sleep(POLL_S)
    raise BootstrapError(f"gave up after {FOREGROUND_WAIT_S:.0f} s waiting for the lock")


def _work(args: argparse.Namespace, log: build.Log) -> tuple[int, bool]:
    """Run the phases under the lock; return (exit status, whether phase 2 is left to do)."""
    with open(paths.lock_path(), "ab") as handle:
        if not _try_lock(handle):
            if not args.foreground:
                log("another bootstrap holds the lock; leaving the work to it")
                return 0, False
            if not _wait_for_lock(handle, log):
                log("core environment ready (built by another process)")
                return 0, False
        # Checked again under the lock: the previous holder may have just finished.
        if paths.core_ready():
            log(f"core environment ready in {paths.venv_dir()}")
        else:
            build.install_core(log)
        if spawn_catchup() is not None:
            log("checkpointing the turns taken while the environment was built (mama catchup)")
        reason = build.local_skip_reason(args.core_only)
        if reason is not None:
            log(f"local model runtime: skipped ({reason})")
            return 0, False
        if args.foreground:
            return 0, True
        build.install_local(log)
        return 0, False


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; see the module docstring for the exit status."""
    parser = argparse.ArgumentParser(prog="python -m mama_plugin.bootstrap")
    parser.add_argument(
        "--foreground",
        action="store_true",
        help="wait for the core environment and report progress on stderr",
    )
    parser.add_argument("--core-only", action="store_true", help="skip the local-model runtime")
    args = parser.parse_args(argv)
    private_folder(paths.data_dir())  # and $MAMA_HOME when the data lives there: 0700 at once
    log = build.Log(paths.log_path(), echo=args.foreground)
    try:
        status, local_left = _work(args, log)
        if local_left:
            # _work has released the lock: the detached bootstrap must be able to take it.
            spawn_detached(sys.executable)
            log("local model runtime: building in the background")
        return status
    except BootstrapError as exc:
        log(f"core environment failed: {exc}")
        return 1
    except Exception as exc:  # logged for the person reading the log, then re-raised
        log(f"bootstrap crashed: {type(exc).__name__}: {exc}")
        raise
    finally:
        log.close()
