"""Driving ``claude -p --input-format stream-json``: its output events, and waiting for a turn.

Shared by the ``turns`` benchmark and scripts/record_transcripts.py, which both send one user
line per turn and wait for that turn's ``result`` event before the next.
"""

from __future__ import annotations

import json
import queue
import time
from typing import Any

from mama_plugin.errors import MamaError

Events = queue.Queue[dict[str, Any] | None]


def read_events(stream: Any, events: Events) -> None:
    """Put each JSON object Claude Code prints on ``events``, then None at the end (a thread)."""
    for line in stream:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.put(event)
    events.put(None)  # end of output


def next_result(events: Events, timeout_s: float) -> dict[str, Any]:
    """The next ``result`` event within ``timeout_s``; raises MamaError without one."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            event = events.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise MamaError(f"no result within {timeout_s} s") from None
        if event is None:
            raise MamaError("Claude Code closed its output before the turn's result")
        if event.get("type") == "result":
            return event


def send_turn(stdin: Any, events: Events, words: str, timeout_s: float) -> dict[str, Any]:
    """Send one user turn on Claude Code's ``stdin`` and wait for its ``result`` event."""
    line = {"type": "user", "message": {"role": "user", "content": words}}
    stdin.write(json.dumps(line) + "\n")
    stdin.flush()
    return next_result(events, timeout_s)
