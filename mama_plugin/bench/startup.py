"""Server start to first ``tools/list`` answered: on every Claude Code session's path.

Each run spawns ``mama serve`` in a fresh temporary MAMA_HOME, sends ``initialize``,
``notifications/initialized`` and ``tools/list``, and stops the clock at the list's answer.
A bare ``python -c pass`` is timed in the same run as the machine's own baseline.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import time

from .latency import percentile

_INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "claude-code", "version": "bench"}}}  # fmt: skip
_READY = {"jsonrpc": "2.0", "method": "notifications/initialized"}
_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def _one_start() -> float:
    with tempfile.TemporaryDirectory(prefix="mama-startup-") as home:
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "mama_plugin.cli", "serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env={**os.environ, "MAMA_HOME": home}, cwd=home, text=True,
        )  # fmt: skip
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write("\n".join(json.dumps(m) for m in (_INIT, _READY, _LIST)) + "\n")
            proc.stdin.flush()
            deadline = started + 30
            while time.perf_counter() < deadline:
                ready, _, _ = select.select([proc.stdout], [], [], deadline - time.perf_counter())
                if not ready:
                    break
                line = proc.stdout.readline()
                if not line:
                    break
                if json.loads(line).get("id") == 2:
                    return (time.perf_counter() - started) * 1000
            raise RuntimeError("mama serve did not answer tools/list within 30 s")
        finally:
            proc.stdin.close()
            proc.wait(timeout=30)
            proc.stdout.close()


def _bare_python() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return (time.perf_counter() - started) * 1000


def startup_run(runs: int = 10) -> tuple[str, dict[str, object]]:
    """Time ``runs`` server starts and as many bare interpreters; medians and p95."""
    server = [_one_start() for _ in range(runs)]
    bare = [_bare_python() for _ in range(runs)]
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
