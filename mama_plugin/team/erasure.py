"""A forget or a redaction taken to the team database at once, when the project is connected.

The local store's outbox already carries a forgotten memory's tombstone and a redacted
memory's new text; this pushes them now, and the team database does the rest (server step
``erasure``): a tombstone takes its links' bodies and the conflicts' copies with it, and
``mama.redact`` masks the string in every row of the project (memories, links, conflicts),
teammates' rows included, each given a new sequence so every teammate's next sync takes it.
Fails open: an unreachable database is said, and the outbox keeps what it must push. The
pattern is never written into a message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..errors import TeamError
from ..storage.team import outbox
from .connection import connect
from .sync import sync_project

if TYPE_CHECKING:
    from ..storage import Store


def reach(store: Store, projects: Iterable[str] | None, *, pattern: str | None = None) -> list[str]:
    """Take the forget (``pattern`` None) or the redaction of ``pattern`` to the team
    database of each connected project of ``projects`` (None: every one); one line each."""
    wanted = None if projects is None else set(projects)
    lines = []
    for joined in outbox.projects(store):
        if wanted is not None and joined.project not in wanted:
            continue
        lines.append(_reach_one(store, joined, pattern))
    return lines


def _reach_one(store: Store, joined: outbox.TeamProject, pattern: str | None) -> str:
    again = " and run this again then" if pattern is not None else ""
    pushed = sync_project(store, joined.project)
    if pushed.error:
        return (
            f"team {joined.remote}: not reached now ({pushed.error}); the next sync pushes "
            f"the change{again}"
        )
    if pattern is None:
        return f"team {joined.remote}: the tombstone is pushed, with its links' text gone there"
    try:
        with connect(joined.url) as conn:
            row = conn.execute(
                "SELECT mama.redact(%s, %s)", (joined.remote, re.escape(pattern))
            ).fetchone()
    except TeamError as exc:
        return f"team {joined.remote}: not masked there ({exc}){again}"
    sync_project(store, joined.project)  # take back the rows it masked (their new versions)
    return f"team {joined.remote}: masked in {row[0]} more row(s) of the team database"
