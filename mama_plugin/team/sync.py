"""One sync pass of a connected project: push the outbox, pull the teammates' changes, send
the vectors team search needs.

Safe to stop anywhere. A pushed batch leaves the outbox only after the team database committed
it (a batch committed there whose acknowledgement was lost is recognised by its digest and
acknowledged on the next pass); the cursor moves only with the pulled rows applied in the same
local transaction. So an outage mid-sync loses nothing and the next pass resumes where this
one stopped. Never runs on a hook's path: ``mama team sync`` and the MCP server's background
loop call it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import TeamAccessError, TeamError
from ..storage.team import conflicts, outbox
from ..storage.team.apply import apply_link, apply_memory
from . import remote
from .connection import connect
from .server_schema import require_latest

if TYPE_CHECKING:
    from ..storage import Store

BATCH = 500
Progress = Callable[[str, int], None]


@dataclass
class SyncReport:
    """What one pass moved for one project (``error``: why it stopped early)."""

    project: str
    remote: str
    pushed_memories: int = 0
    pushed_links: int = 0
    already_there: int = 0
    pulled: dict[str, int] = field(default_factory=dict)
    conflicts: int = 0
    set_aside: int = 0  # outbox entries the team database refused on their own
    vectors: int = 0
    seconds: float = 0.0
    error: str = ""

    def count(self, what: str) -> None:
        self.pulled[what] = self.pulled.get(what, 0) + 1

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-ready values."""
        return asdict(self)

    def line(self) -> str:
        """One line saying what moved."""
        pulled = ", ".join(f"{n} {what}" for what, n in sorted(self.pulled.items()) if n)
        text = (
            f"{self.remote}: pushed {self.pushed_memories} memories, {self.pushed_links} links; "
            f"pulled {pulled or 'nothing new'}"
        )
        if self.conflicts:
            text += f"; {self.conflicts} conflict(s) — see `mama team status`"
        if self.set_aside:
            text += (
                f"; {self.set_aside} set aside, refused by the team database (`mama team status`)"
            )
        return text + f" ({self.seconds:.2f} s)"


def sync_project(
    store: Store, project: str, *, batch: int = BATCH, progress: Progress | None = None
) -> SyncReport:
    """Run one pass for ``project``; the report says what moved and, if it stopped, why.

    Raises TeamError only when the project is not connected; a database that cannot be
    reached or refuses is recorded (``mama team status``) and returned as ``report.error``.
    """
    joined = outbox.require_project(store, project)
    report = SyncReport(project, joined.remote)
    started = time.perf_counter()
    try:
        with connect(joined.url) as conn:
            require_latest(conn, joined.remote)
            if not remote.may_read(conn, joined.remote):
                raise TeamAccessError(
                    f"role {remote.role(conn)} was not given the team project "
                    f"{joined.remote!r}; its admin runs `mama team grant URL ROLE PROJECT`"
                )
            syncing = _Pass(store, conn, joined, report, batch, progress)
            syncing.push()
            syncing.pull()
            report.vectors = _send_vectors(store, conn, project, batch)
    except TeamError as exc:
        report.error = str(exc)
    report.seconds = time.perf_counter() - started
    outbox.record_sync(store, project, report.error)
    return report


@dataclass
class _Pass:
    """What the push and the pull of one pass share: the two databases, the project, the
    report they add to, the batch size and whom to tell of each batch."""

    store: Store
    team_db: Any  # the connection to the team database
    joined: outbox.TeamProject
    report: SyncReport
    batch: int
    progress: Progress | None

    def push(self) -> None:
        """Push the outbox batch by batch; a refused batch is pushed a row at a time."""
        while changes := outbox.pending(self.store, self.joined.project, self.batch):
            try:
                self._push_batch(changes)
            except remote.Refused:  # one row refused the batch: each alone, the refused set aside
                for change in changes:
                    try:
                        self._push_batch([change])
                    except remote.Refused as exc:
                        outbox.set_aside(self.store, self.joined.project, change, str(exc))
                        self.report.set_aside += 1
            self._moved("push", len(changes))

    def _push_batch(self, changes: list[outbox.Change]) -> None:
        store, joined, report = self.store, self.joined, self.report
        payloads = {
            c.key: outbox.memory_payload(store, c.key)
            if c.kind == "memory"
            else outbox.link_payload(store, c.key)
            for c in changes
        }
        known = outbox.known_versions(store, [c.key for c in changes if c.kind == "memory"])
        done = remote.push(self.team_db, joined.remote, changes, payloads, known)
        raised = [
            conflicts.Conflict(
                0,
                joined.project,
                c.memory_id,
                c.base_version,
                c.server_version,
                c.theirs,
                c.theirs_by,
                0,
            )
            for c in done.conflicts
        ]
        outbox.acknowledge(store, joined.project, changes, done.versions, raised)
        report.pushed_memories += done.memories
        report.pushed_links += done.links
        report.already_there += done.already
        report.conflicts += len(raised)

    def pull(self) -> None:
        """Apply the teammates' changes batch by batch, the cursor moved with each."""
        store, project = self.store, self.joined.project
        after = outbox.require_project(store, project).pulled_seq
        while rows := remote.pull(self.team_db, self.joined.remote, after, self.batch):
            with outbox.applying(store):
                for row in rows:
                    if row.kind == "memory":
                        what = apply_memory(store, project, row)
                    else:
                        what = apply_link(store, project, row)
                        what = f"link {what}"
                    if what != "seen":
                        self.report.count(what)
                after = rows[-1].seq
                outbox.set_pulled(store, project, after)
            self._moved("pull", len(rows))

    def _moved(self, step: str, rows: int) -> None:
        if self.progress is not None:
            self.progress(step, rows)


def _send_vectors(store: Store, conn: Any, project: str, batch: int) -> int:
    from ..storage.vectors import from_blob

    model, _dim = store.vectors.recorded_model()
    if not model:
        return 0
    sent = 0
    while rows := outbox.unsent_vectors(store, project, batch):
        sent += remote.push_vectors(conn, [(i, v, model, from_blob(b)) for i, v, b in rows])
        outbox.vectors_sent(store, [(i, v) for i, v, _ in rows])
    return sent
