"""``python -m benchmarks … | head``: a reader that leaves early ends the run quietly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mama_plugin.cli import BROKEN_PIPE_STATUS

ROOT = Path(__file__).resolve().parents[2]


def test_a_closed_pipe_ends_the_benchmarks_quietly(tmp_path: Path) -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte: the help's flush meets EPIPE
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env.update(MAMA_HOME=str(tmp_path), PYTHONPATH=str(ROOT))
    try:
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks", "--help"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (BROKEN_PIPE_STATUS, "")
