"""SessionStart: the cliffhanger for this project, from the cache or rendered now.

After it, one line when the repository's ``.mama/`` folder holds files MAMA has not read
(teammates' memories after a ``git pull``; :mod:`mama_plugin.share.scan`). Silent (returns
"") when there is no database yet, the project has no memory, or the user
switched MAMA off for the project, and on ``claude --resume`` when the resumed conversation
already holds MAMA's session start (one copy, not one more per resume).

The server renders the text ahead (after each turn's checkpoint, and at its exit), so the
usual start is a cache hit: it is read from a read-only glance at the database
(``storage.peek.brief_entry``, after the same checks opening the store makes) without
importing the store, the services or Jinja (~40 ms less of a session's start). Anything else —
a stale or missing entry, a store that must be migrated, checks damaged or cannot be written —
opens the store with a short busy timeout (a writer holding the lock must not keep a session
waiting), which renders the text or says what is wrong.
"""

from __future__ import annotations

from typing import Any

from ..config import Config
from ..errors import StoreDamaged
from ..fence import TAG
from ..project import project_key
from ..services.story import brief_cache
from ..storage.peek import brief_entry

BUSY_TIMEOUT_MS = 300


def session_start(event: dict[str, Any], config: Config) -> str:
    """The context to inject at session start ("" for nothing)."""
    project = project_key(str(event.get("cwd") or "") or None)
    if not config.project_enabled(project):
        return ""
    from .aliases import ensure_aliases

    ensure_aliases(config)
    text = _brief(event, config, project)
    shared = _shared_notice(event, config)
    return f"{text}\n\n{shared}".strip() if shared else text


def _brief(event: dict[str, Any], config: Config, project: str) -> str:
    """The cliffhanger ("" without a database, or on a resume that holds it already)."""
    if not config.db_path.exists():  # never create a database just to say nothing
        return ""
    source = str(event.get("source") or "startup")
    if source == "resume":
        from ..transcript.context import told_at_start

        if told_at_start(str(event.get("transcript_path") or ""), TAG):
            return ""  # the resumed conversation holds it already
    text = _cached(config, project, source)
    text = text if text is not None else _rendered(config, project, source)
    return brief_cache.finish(brief_cache.headed(text, source))


def _shared_notice(event: dict[str, Any], config: Config) -> str:
    """One line when the repository's ``.mama/`` changed since MAMA last read it (stat calls,
    a file read only when its stat data changed); "" on a resume, whose start said it."""
    if str(event.get("source") or "startup") == "resume":
        return ""
    from ..share.scan import notice

    return notice(config.home, str(event.get("cwd") or "") or None)


def _cached(config: Config, project: str, source: str) -> str | None:
    """The cached text if it still holds, read without opening the store; else None."""
    variant = brief_cache.variant_of(source)
    found = brief_entry(
        config.db_path,
        project,
        brief_cache.entry_key(variant, project),
        busy_timeout_ms=BUSY_TIMEOUT_MS,
    )
    if found is None:
        return None
    fingerprint, raw = found
    return brief_cache.cached(raw, brief_cache.key(fingerprint, config, variant))


def _rendered(config: Config, project: str, source: str) -> str:
    """The text from the store: cached there, or rendered now (and cached), or what is wrong."""
    from ..services.story import briefing
    from ..storage import Store

    try:
        with Store.open(config=config, busy_timeout_ms=BUSY_TIMEOUT_MS) as store:
            text = briefing.brief(store, project, config, source)
            if (damage := store.damage) is not None:  # found on open, met reading, or writing
                # Damaged where reads do without: the story as read, then what to repair.
                return f"{text}\n\n{damage.notice}" if damage.readable and text else damage.notice
            if store.read_only is not None and text:  # recalled, but nothing can be saved
                text = f"{text}\n\n{store.read_only.notice}"
    except StoreDamaged as exc:
        return exc.notice
    return text
