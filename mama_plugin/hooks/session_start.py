"""SessionStart: the cliffhanger for this project, from the cache or rendered now.

Silent (returns "") when there is no database yet, the project has no memory, or the user
switched MAMA off for the project, and on ``claude --resume`` when the resumed conversation
already holds MAMA's session start (one copy, not one more per resume). Opens the store with a
short busy timeout: a writer holding the lock must not keep a session waiting.
"""

from __future__ import annotations

from typing import Any

from ..config import Config
from ..errors import StoreDamaged
from ..fence import TAG
from ..project import project_key
from ..services import briefing
from ..storage import Store
from ..transcript.context import told_at_start

BUSY_TIMEOUT_MS = 300


def session_start(event: dict[str, Any], config: Config) -> str:
    """The context to inject at session start ("" for nothing)."""
    project = project_key(str(event.get("cwd") or "") or None)
    if not config.project_enabled(project):
        return ""
    from .aliases import ensure_aliases

    ensure_aliases(config)
    if not config.db_path.exists():  # never create a database just to say nothing
        return ""
    source = str(event.get("source") or "startup")
    if source == "resume" and told_at_start(str(event.get("transcript_path") or ""), TAG):
        return ""  # the resumed conversation holds it already
    try:
        with Store.open(config=config, busy_timeout_ms=BUSY_TIMEOUT_MS) as store:
            text = briefing.brief(store, project, config, source)
            if store.damage is not None:  # met while reading, or the cache write refused
                return store.damage.notice
            if store.read_only is not None and text:  # recalled, but nothing can be saved
                text = f"{text}\n\n{store.read_only.notice}"
    except StoreDamaged as exc:
        return exc.notice
    return briefing.finish(text)
