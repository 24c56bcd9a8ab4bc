"""Headless Chromium (Debian's ``chromium`` package) on a local file: its DOM, a screenshot, a page.

No DevTools port and no network: each run is one ``chromium --headless`` process with a fresh
profile, the flags this machine needs, and every background service off; ``--dump-dom``
prints the DOM after the page's scripts ran, ``--screenshot`` writes a PNG of the window, and
:class:`Page` drives a page over the DevTools protocol on a pipe (clicks, typing, timings).
Used by the view's tests and ``python -m benchmarks view``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


class Page:
    """One headless Chromium page driven over the DevTools protocol on a pipe (no port).

    ``--remote-debugging-pipe``: Chromium reads commands on its descriptor 3 and answers on
    4, each message JSON ended by a NUL byte. :meth:`open` loads a URL and waits until
    ``ready`` (a JavaScript expression) is true; :meth:`js` evaluates an expression in the
    page and returns its value. Use as a context manager: the browser ends with it.
    """

    def __init__(self, size: tuple[int, int] = (1400, 1000)) -> None:
        exe = chromium()
        if exe is None:
            raise MamaError(
                "no chromium on PATH: install Debian's package (apt-get install chromium)"
            )
        self._profile = tempfile.TemporaryDirectory(prefix="mama-chromium-")
        to_child, self._send = os.pipe()
        self._receive, from_child = os.pipe()
        # The child's descriptors 3 and 4 are the two pipes; bash puts them there (moved
        # above 9 first, so neither can be 3 or 4 already).
        low = (to_child, from_child)
        to_child, from_child = (fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in low)
        for fd in low:
            os.close(fd)
        argv = [
            "bash",  # dash takes only one-digit descriptors in a redirection
            "-c",
            f'exec "$0" "$@" 3<&{to_child} 4>&{from_child} {to_child}<&- {from_child}>&-',
            exe,
            *FLAGS,
            f"--user-data-dir={self._profile.name}",
            f"--window-size={size[0]},{size[1]}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        self._proc = subprocess.Popen(
            argv,
            pass_fds=(to_child, from_child),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=self._profile.name,
        )
        os.close(to_child)
        os.close(from_child)
        self._buffer = b""
        self._next = 0
        targets = self._call("Target.getTargets")["targetInfos"]
        page = next(t["targetId"] for t in targets if t["type"] == "page")
        self._session = self._call("Target.attachToTarget", targetId=page, flatten=True)[
            "sessionId"
        ]

    def __enter__(self) -> Page:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End the browser and remove its profile."""
        with contextlib.suppress(OSError):
            os.close(self._send)
        with contextlib.suppress(OSError):
            os.close(self._receive)
        self._proc.terminate()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._profile.cleanup()

    def _call(self, method: str, *, session: bool = False, **params: Any) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = self._session
        os.write(self._send, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                answer = json.loads(raw)
                if answer.get("id") == self._next:
                    if "error" in answer:
                        raise MamaError(f"chromium: {method}: {answer['error'].get('message')}")
                    result: dict[str, Any] = answer.get("result", {})
                    return result
            if time.monotonic() > deadline:
                raise MamaError(f"chromium did not answer {method} within {TIMEOUT_S} s")
            ready, _, _ = select.select([self._receive], [], [], 1.0)
            if ready:
                chunk = os.read(self._receive, 1 << 20)
                if not chunk:
                    raise MamaError(f"chromium closed its pipe during {method}")
                self._buffer += chunk

    def js(self, expression: str) -> Any:
        """The value of ``expression`` in the page (awaited when it is a promise)."""
        answer = self._call(
            "Runtime.evaluate",
            session=True,
            expression=expression,
            returnByValue=True,
            awaitPromise=True,
        )
        if "exceptionDetails" in answer:
            detail = answer["exceptionDetails"]
            said = detail.get("exception", {}).get("description") or detail.get("text")
            raise MamaError(f"the page threw: {said}")
        return answer["result"].get("value")

    def open(self, url: str, *, ready: str, timeout_s: float = TIMEOUT_S) -> float:
        """Load ``url``; wait until ``ready`` is true; the seconds it took."""
        started = time.perf_counter()
        # Marks the page being left, so ``ready`` is never read from it.
        self.js("document.documentElement && (document.documentElement.dataset.left = '1')")
        self._call("Page.navigate", session=True, url=url)
        self.wait(
            f"document.documentElement && !document.documentElement.dataset.left && ({ready})",
            timeout_s=timeout_s,
        )
        return time.perf_counter() - started

    def wait(self, condition: str, *, timeout_s: float = TIMEOUT_S) -> float:
        """Poll ``condition`` in the page until it is true; the seconds it took."""
        started = time.perf_counter()
        while not self.js(f"Boolean({condition})"):
            if time.perf_counter() - started > timeout_s:
                raise MamaError(f"the page never got to {condition!r} in {timeout_s} s")
            time.sleep(0.02)
        return time.perf_counter() - started


__all__ = ["FLAGS", "Page", "Run", "chromium", "dump_dom", "screenshot"]
