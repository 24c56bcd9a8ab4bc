"""What a transcript already holds from the hooks: the context a SessionStart hook gave.

On ``claude --resume`` Claude Code runs the SessionStart hooks again (``source: resume``) and
appends their context to the conversation it resumes, which already holds the context of the
session's first start: resumed twice, the model reads three copies. The hook asks
:func:`told_at_start` first and stays silent when its text is already there. A compaction
summarises the conversation, context included, so only what follows the last compaction counts.
Standard library only (the cold hook reads this); never raises.
"""

from __future__ import annotations

import json
import os

MAX_BYTES = 64 * 1024 * 1024


def told_at_start(path: str | os.PathLike[str] | None, marker: str) -> bool:
    """Whether the transcript at ``path`` holds SessionStart context containing ``marker``
    after its last compaction (False when it cannot be read)."""
    return bool(start_told(path, marker))


def start_told(path: str | os.PathLike[str] | None, marker: str) -> str:
    """The SessionStart context holding ``marker`` the transcript at ``path`` holds after its
    last compaction, the newest ("" when there is none or it cannot be read)."""
    if not path or not marker:
        return ""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - MAX_BYTES))
            raw = handle.read()
    except OSError:
        return ""
    wanted, told = marker.encode("utf-8"), ""
    for line in raw.split(b"\n"):
        if b"compact_boundary" in line and _entry(line).get("subtype") == "compact_boundary":
            told = ""
        elif b"hook_additional_context" in line and wanted in line:
            attachment = _entry(line).get("attachment")
            if isinstance(attachment, dict) and attachment.get("hookEvent") == "SessionStart":
                found = [str(c) for c in attachment.get("content") or [] if marker in str(c)]
                told = found[-1] if found else told
    return told


def _entry(line: bytes) -> dict[str, object]:
    try:
        entry = json.loads(line)
    except ValueError:
        return {}
    return entry if isinstance(entry, dict) else {}
