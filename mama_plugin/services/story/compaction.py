"""Compaction: a session's old rolling checkpoints folded into one (``mama gc``).

The Stop hook keeps one rolling checkpoint a session (:mod:`.autosave`), but a store can hold
several for one session (rows merged from an export, written by earlier versions, or by two
writers before the upsert took the write lock). Once every one of them is older than the
horizon (``checkpoint_horizon_days``), the newest is kept and the others' work folded into
it through :class:`.worklog.WorkLog` — requests counted, decisions, tool calls and changed
files joined, what was done and the files opened kept — never parsed back from prose; the
others are deleted through the store's delete path (their full-text row, vector and
queue entry go with them, their links are moved onto the one kept).

Never touched: decisions, insights, the checkpoints Claude wrote, and any session with a
checkpoint among the :data:`.resume.RECENT` newest of its project (the ones the session
start and ``load_checkpoint`` read).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ...errors import MamaError
from ...plain import picked
from ...storage import MemoryRecord, Store
from ...text import unique
from .autosave import MAX_ITEMS
from .resume import RECENT, carries_work
from .worklog import WorkLog

DAY_MS = 24 * 3600 * 1000


@dataclass(frozen=True)
class Fold:
    """One session's rolling checkpoints to fold: the one kept and those folded into it."""

    session_id: str
    project: str
    kept: str
    folded: tuple[str, ...]
    bytes: int  # roughly what the folded rows hold (their columns as JSON)

    def as_dict(self) -> dict[str, Any]:
        """The fold as ``mama gc --json`` reports it."""
        return picked(self, "session_id", "project", "kept", "folded", "bytes")


def planned(store: Store, *, horizon_days: int, now: int, limit: int = 100) -> list[Fold]:
    """Up to ``limit`` folds due: sessions whose rolling checkpoints are all older than
    ``horizon_days`` and none among its project's newest checkpoints, oldest first. Read-only."""
    before = now - horizon_days * DAY_MS
    recent: dict[str, set[str]] = {}
    out = []
    for session in store.memories.split_sessions(before=before, limit=limit):
        rolling = _rolling(store, session)
        if len(rolling) < 2:
            continue
        project = rolling[-1].project
        if project not in recent:
            newest = store.memories.latest(project=project, type="checkpoint", limit=RECENT)
            recent[project] = {m.id for m in newest}
        if any(m.id in recent[project] for m in rolling):
            continue  # the session start may resume from it
        out.append(
            Fold(
                session_id=session,
                project=project,
                kept=rolling[-1].id,
                folded=tuple(m.id for m in rolling[:-1]),
                bytes=sum(_bytes(m) for m in rolling[:-1]),
            )
        )
    return out


def fold(store: Store, plan: Fold) -> MemoryRecord | None:
    """Fold ``plan``'s checkpoints into the one kept, in one transaction; the one kept, or None
    when the session changed since it was planned (nothing written then)."""
    with store.transaction():
        rolling = _rolling(store, plan.session_id)
        if [m.id for m in rolling] != [*plan.folded, plan.kept]:
            return None
        kept, folded = rolling[-1], rolling[:-1]
        layers = folded_layers(rolling)
        out = store.memories.update(
            kept.id, expected_version=kept.version, updated_at=kept.updated_at, **layers
        )[0]
        for m in folded:
            _move_links(store, m.id, kept.id, {x.id for x in rolling})
            store.memories.delete(m.id)
    return out


def folded_layers(rolling: list[MemoryRecord]) -> dict[str, Any]:
    """The layers of the newest of ``rolling`` (a session's rolling checkpoints, oldest first)
    with the work of all of them: the requests from the first that did work to the latest,
    their count, decisions, tool calls and changed files; what was done, the files opened and
    the evidence joined (the newest last, within :data:`.autosave.MAX_ITEMS`)."""
    logs = [log for m in rolling if (log := WorkLog.of(m)) is not None]
    if len(logs) != len(rolling) or not logs:
        raise MamaError("only a session's rolling checkpoints are folded")
    newest, m = logs[-1], rolling[-1]
    work = any(carries_work(x) for x in rolling)
    worked = [log for x, log in zip(rolling, logs, strict=True) if carries_work(x)]
    known = [log.changed for log in logs if log.changed is not None]
    merged = WorkLog(
        request=newest.request,
        first_request=(worked or logs)[0].started,
        work_requests=sum(log.work_requests for log in logs),
        last_message=newest.last_message,
        decisions=tuple(unique(i for log in logs for i in log.decisions)),
        tool_calls=sum(log.tool_calls for log in logs),
        work=work,
        activity="worked" if work else newest.activity,
        moved_at=max((log.moved_at for log in logs if log.moved_at is not None), default=None),
        changed=_changed(known) if known else None,
        worked=None
        if all(log.worked is None for log in logs)
        else tuple(unique(w for log in logs for w in log.worked or ())),
        failing=newest.failing,
        passed=tuple(unique(p for log in logs for p in log.passed)),
        checks=tuple(unique(c for log in logs for c in log.checks)),
    )

    def joined(key: str) -> list[Any]:
        items = [i for x in rolling for i in (x.continuity or {}).get(key) or []]
        return unique(items, key=str)[-MAX_ITEMS:]

    done = unique((i for x in rolling for i in WorkLog.done_items(x)), key=str)[-MAX_ITEMS:]
    evidence = unique((e for x in rolling for e in x.evidence), key=_evidence_key)
    return {
        "content": merged.summary(),
        "continuity": {**m.continuity, "done": done, "open_files": joined("open_files")},
        "evidence": evidence[-MAX_ITEMS:],
        "metadata": merged.metadata(),
    }


def _changed(lists: list[tuple[tuple[str, str], ...]]) -> tuple[tuple[str, str], ...]:
    """Every file changed, once, in the order first changed, with its latest action."""
    latest: dict[str, str] = {}
    for changed in lists:
        for path, action in changed:
            latest[path] = action
    return tuple(latest.items())


def _evidence_key(e: Any) -> str:
    if isinstance(e, dict):
        return f"{e.get('kind', '')}\0{e.get('source', '')}\0{e.get('detail', '')}".lower()
    return str(e).lower()


def _rolling(store: Store, session: str) -> list[MemoryRecord]:
    """The session's rolling checkpoints, the one last changed last."""
    found = [m for m in store.memories.of_session(session, type="checkpoint") if m.rolling]
    return sorted(found, key=lambda m: (m.updated_at, m.seq))


def _move_links(store: Store, old: str, new: str, session: set[str]) -> None:
    """Give ``new`` the links of ``old`` (to memories outside its session), as they were."""
    for ln in store.links.of(old):
        other = ln.to_id if ln.from_id == old else ln.from_id
        if other in session:
            continue
        ends = (new, other) if ln.from_id == old else (other, new)
        if store.links.exists(*ends, ln.relationship):
            continue
        store.links.add(
            *ends,
            ln.relationship,
            ln.reason,
            **picked(ln, "evidence", "context", "confidence", "created_by", "created_at"),
            used_at=ln.used_at,
            mark_target=False,
        )


def _bytes(m: MemoryRecord) -> int:
    return len(json.dumps(m.as_dict(), ensure_ascii=False, default=str).encode())


TRIVIAL_COUNT = "trivial_sessions"  # meta: how many trivial sessions' checkpoints gc dropped


def trivial_due(store: Store, *, horizon_days: int, now: int, limit: int = 100) -> list[str]:
    """The checkpoints of trivial sessions (:attr:`.worklog.WorkLog.trivial`) older than
    ``horizon_days``, oldest first: up to ``limit``. Read-only."""
    before = now - horizon_days * DAY_MS
    found = store.memories.quiet_checkpoints(before=before, limit=limit)
    return [m.id for m in found if WorkLog.trivial_of(m)]


def drop_trivial(store: Store, ids: list[str]) -> int:
    """Delete the checkpoints ``ids`` that are still a trivial session's and link nothing, in
    one transaction, and add them to the store's count; how many went."""
    with store.transaction():
        gone = 0
        for m in store.memories.get_many(ids).values():
            if not WorkLog.trivial_of(m) or store.links.of(m.id):
                continue
            store.memories.delete(m.id)
            gone += 1
        if gone:
            store.set_meta(TRIVIAL_COUNT, str(int(store.meta(TRIVIAL_COUNT) or 0) + gone))
    return gone
