"""Headless Chromium (Debian's ``chromium`` package) run on a local file: its DOM, a screenshot.

No DevTools port and no network: each run is one ``chromium --headless`` process with a fresh
profile, the flags this machine needs, and every background service off; ``--dump-dom``
prints the DOM after the page's scripts ran, ``--screenshot`` writes a PNG of the window.
Used by the view's tests and ``python -m benchmarks view``.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from mama_plugin.errors import MamaError

FLAGS = (
    "--headless",
    "--no-sandbox",  # root in a container: the setuid sandbox cannot start
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
)
TIMEOUT_S = 120


def chromium() -> str | None:
    """The Chromium executable on PATH (Debian's ``chromium``), or None."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass(frozen=True)
class Run:
    """What one headless run gave: its output (the DOM for ``dump_dom``) and how long it took."""

    out: str
    seconds: float


def _run(url: str, *extra: str, size: tuple[int, int] = (1400, 1000)) -> Run:
    exe = chromium()
    if exe is None:
        raise MamaError("no chromium on PATH: install Debian's package (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="mama-chromium-") as profile:
        argv = [
            exe,
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--window-size={size[0]},{size[1]}",
            *extra,
            url,
        ]
        started = time.perf_counter()
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False, cwd=profile
        )
        seconds = time.perf_counter() - started
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-3:]
        raise MamaError(f"chromium exited {done.returncode}: {' | '.join(tail)}")
    return Run(done.stdout, seconds)


def dump_dom(url: str, *, size: tuple[int, int] = (1400, 1000)) -> Run:
    """The page's DOM after its scripts ran (``--dump-dom``)."""
    return _run(url, "--dump-dom", size=size)


def screenshot(url: str, png: Path, *, size: tuple[int, int] = (1400, 2600)) -> Run:
    """A PNG of the page's window at ``size`` (``--screenshot``)."""
    run = _run(url, f"--screenshot={png}", size=size)
    if not png.is_file():
        raise MamaError(f"chromium wrote no screenshot at {png}")
    return run


__all__ = ["FLAGS", "Run", "chromium", "dump_dom", "screenshot"]
