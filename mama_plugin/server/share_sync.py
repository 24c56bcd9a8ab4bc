"""The server's background import of the repository's ``.mama/`` folder, off every hook's path.

A few seconds after the server starts, and then once a minute, it compares ``.mama/`` with
what MAMA last read (stat calls; :func:`mama_plugin.share.scan.changes`); when teammates'
files arrived or changed (a ``git pull``), it imports them in a worker thread — new memories
inserted and queued for the indexer, edits applied with their row version checked, conflicts
kept with both versions — and records the folder as read, so the next session start is quiet.
It never writes the working tree: writing ``.mama/`` is ``mama share``'s, on request.
"""

from __future__ import annotations

import logging
import traceback
from pathlib import Path

import anyio

from .state import State

log = logging.getLogger("mama.server")
SHARE_AFTER_S = 3.0
SHARE_EVERY_S = 60.0


def import_if_changed(state: State, root: Path) -> list[str]:
    """Import ``.mama/`` when it changed since MAMA last read it; the report's lines, or []."""
    from ..share.scan import changes
    from ..share.sync import Sharing

    if not changes(state.config.home, root).any:
        return []
    store = state.store
    if store.read_only is not None or store.damage is not None:
        return []
    sharing = Sharing(store, state.config, state.project, root)
    report = sharing.import_files()
    sharing.stamp()
    return report.lines()


async def import_shared_in_background(
    state: State, after_s: float = SHARE_AFTER_S, every_s: float = SHARE_EVERY_S
) -> None:
    """Keep this clone's memory up to date with ``.mama/``; never raises (failures are logged)."""
    from ..share.scan import FOLDER, checkout_root

    root = checkout_root(state.project)  # the project's main working tree
    if root is None or not state.config.project_enabled(state.project):
        return
    await anyio.sleep(after_s)
    while True:
        if (root / FOLDER).is_dir():
            try:
                lines = await anyio.to_thread.run_sync(import_if_changed, state, root)
            except Exception:
                log.error("importing .mama/ failed:\n%s", traceback.format_exc())
            else:
                for line in lines:
                    log.info(".mama/ import: %s", line)
        await anyio.sleep(every_s)
