"""Server start to first ``tools/list`` answered: on every Claude Code session's path.

Each run spawns ``mama serve`` in a fresh temporary MAMA_HOME, sends ``initialize``,
``notifications/initialized`` and ``tools/list``, and stops the clock at the list's answer.
A bare ``python -c pass`` is timed in the same run as the machine's own baseline.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

from .latency import percentile
from .stdio import StdioServer


def _one_start() -> float:
    with tempfile.TemporaryDirectory(prefix="mama-startup-") as home:
        started = time.perf_counter()
        server = StdioServer({**os.environ, "MAMA_HOME": home}, cwd=home)
        try:
            server.request("tools/list", {})
            return (time.perf_counter() - started) * 1000
        finally:
            server.close()


def bare_python() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return (time.perf_counter() - started) * 1000


def startup_run(runs: int = 10) -> tuple[str, dict[str, object]]:
    """Time ``runs`` server starts and as many bare interpreters; medians and p95."""
    server = [_one_start() for _ in range(runs)]
    bare = [bare_python() for _ in range(runs)]
    data: dict[str, object] = {
        "runs": runs,
        "serve_to_tools_list_p50_ms": round(percentile(server, 50), 1),
        "serve_to_tools_list_p95_ms": round(percentile(server, 95), 1),
        "bare_python_p50_ms": round(percentile(bare, 50), 1),
    }
    text = (
        f"mama serve → first tools/list answered ({runs} starts, fresh MAMA_HOME each): "
        f"p50 {data['serve_to_tools_list_p50_ms']} ms, p95 {data['serve_to_tools_list_p95_ms']} ms "
        f"(bare python start p50 {data['bare_python_p50_ms']} ms)\n"
    )
    return text, data
