"""Checked against the code before it is told: has a file a memory cites changed since?

A memory saved in a project records the files its evidence, specifics and confirmed items
name (:func:`record`: the commit, each file's git blob hash and stat data; ``memory_files``).
Before a memory is told, :func:`check` compares: the stat data equal to what was recorded
means unchanged without reading the file; otherwise the blob hash decides (a touched file is
not a changed one). What it says of a change ("3 commits, last 2026-11-20") needs git: only
when ``git`` is asked for (explicit tool calls, the server's background refresh), cached in
the store's :class:`~.warm.Warm` by (path, commit, HEAD); a hook's check never spawns git and
says what the cache knows. Recording an outcome or verifying (:func:`reverify`) records the
files as they are now. Outside git, the same with no commit: stat data and hashes.

Reads files and ``.git``; writes only ``memory_files`` (:func:`record`, :func:`reverify`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import NotFoundError
from ...filestate import FileState, cited_paths, commits_since, head_commit, stat_of, state_of
from ...storage import MemoryRecord, Store, now_ms
from ...storage.file_states import CitedFile
from ..warm import warm
from .confidence import learn_from

HOW = "`mama verify {id}` or record an outcome"
SAID_FILES = 2  # changed files a verify line names; the rest are counted
BLOBS_KEPT = 4096  # hashes kept by stat data in the warm state before it starts over


@dataclass(frozen=True)
class Change:
    """A file a memory cites that differs from what the memory recorded.

    ``commits`` is how many commits changed it since the recorded one (0: changed but not
    committed), None when not known (outside git, or git not asked yet); ``last`` the day
    of the newest of them.
    """

    memory_id: str
    path: str
    decided: bool  # the memory is a decision ("since this was decided")
    gone: bool = False
    commits: int | None = None
    last: str = ""
    pending: bool = False  # git could say more, but was not asked (a hook's check)

    @property
    def said(self) -> str:
        """ "infra/redis.tf changed since this was decided (3 commits, last 2026-11-20)"."""
        what = "was deleted" if self.gone else "changed"
        since = "since this was decided" if self.decided else "since this was saved"
        detail = ""
        if self.commits:
            plural = "s" if self.commits > 1 else ""
            detail = f" ({self.commits} commit{plural}, last {self.last})"
        elif self.commits == 0:
            detail = " (not committed yet)"
        return f"{self.path} {what} {since}{detail}"


def cited_texts(m: MemoryRecord) -> list[str]:
    """The texts of ``m`` that may name files: evidence, specifics, confirmed items and
    discoveries (their claims and evidence), open files."""
    texts: list[str] = []
    for item in [*(m.evidence or []), *(m.specifics or [])]:
        texts += _strings(item)
    c = m.continuity or {}
    for key in ("confirmed", "discoveries"):
        for item in c.get(key) or []:
            texts += _strings(item)
    texts += [str(f) for f in c.get("open_files") or []]
    return texts


def _strings(item: Any) -> list[str]:
    if isinstance(item, dict):
        return [str(v) for v in item.values() if isinstance(v, str)]
    return [str(item)] if item else []


def record(store: Store, m: MemoryRecord, *, extra: Iterable[str] = ()) -> list[FileState]:
    """Record the files ``m`` cites (and ``extra`` paths, e.g. the files its session changed)
    as they are now; return their states. Nothing is written for a memory outside a project
    folder or citing no file it did not record before."""
    root = Path(m.project)
    if not m.project or not root.is_dir():
        return []
    previous = [c.state.path for c in store.file_states.of([m.id]).get(m.id, [])]
    paths = cited_paths([*cited_texts(m), *extra, *previous], root)
    if not paths and not previous:
        return []
    states = [_state(store, root, p) for p in paths]
    store.file_states.record(m.id, m.project, head_commit(root), states)
    return states


def reverify(store: Store, memory_id: str) -> tuple[MemoryRecord, list[Change], list[FileState]]:
    """Record the files ``memory_id`` cites as they are now (``mama verify``): the memory,
    what had changed before, and the states recorded; a memory that cites files is dated
    verified (:mod:`.staleness`). Raises NotFoundError."""
    m = store.memories.get(memory_id)
    if m is None:
        raise NotFoundError(f"no memory has the id {memory_id!r}")
    before = check(store, [m], git=True).get(m.id, [])
    states = record(store, m)
    if states:  # checked against its files: its staleness clock starts again
        learn_from(store, m, "VERIFIED", recorded_at=now_ms())
    return m, before, states


def check(
    store: Store, memories: Sequence[MemoryRecord], *, git: bool = False
) -> dict[str, list[Change]]:
    """The files each of ``memories`` cites that changed since it recorded them, by id.

    Stat calls first; a file is read (and hashed) only when its stat data differ. ``git``:
    ask git how many commits changed it (cached); otherwise say what the cache knows.
    """
    decided = {m.id: m.type == "decision" for m in memories}
    found: dict[str, list[Change]] = {}
    heads: dict[str, str] = {}
    for memory_id, cited in store.file_states.of(decided).items():
        for c in cited:
            change = _changed(store, c, decided[memory_id], heads, git)
            if change is not None:
                found.setdefault(memory_id, []).append(change)
    return found


def _changed(
    store: Store, c: CitedFile, decided: bool, heads: dict[str, str], git: bool
) -> Change | None:
    then = c.state
    size, mtime = stat_of(c.root, then.path)
    if (size, mtime) == (then.size, then.mtime_ns):
        return None
    gone = size < 0
    if gone and then.missing:
        return None
    touched = not gone and not then.missing and bool(then.blob)
    if touched and _state(store, c.root, then.path, size, mtime).blob == then.blob:
        return None  # touched, not changed
    if c.project not in heads:
        heads[c.project] = head_commit(c.root)
    commits, last = _history(store, c, heads[c.project], git)
    pending = commits is None and bool(c.commit and heads[c.project]) and not git
    return Change(c.memory_id, then.path, decided, gone, commits, last, pending)


def _state(
    store: Store, root: Path, path: str, size: int | None = None, mtime: int | None = None
) -> FileState:
    """The state of ``root/path``, its hash cached in the warm state by its stat data."""
    if size is None or mtime is None:
        size, mtime = stat_of(root, path)
    w = warm(store)
    key = (str(root / path), size, mtime)
    with w.files_guard:
        blob = w.blobs.get(key)
    if blob is not None:
        return FileState(path, blob, size, mtime)
    state = state_of(root, path)
    if state.blob:
        with w.files_guard:
            if len(w.blobs) > BLOBS_KEPT:
                w.blobs.clear()
            w.blobs[(str(root / path), state.size, state.mtime_ns)] = state.blob
    return state


def _history(store: Store, c: CitedFile, head: str, git: bool) -> tuple[int | None, str]:
    """(commits since the recorded one, last day) for ``c``: the cache's, or git's when
    ``git``; (None, "") when unknown. Changed with HEAD where it was: not committed yet."""
    if not c.commit or not head:
        return None, ""
    if head == c.commit:
        return 0, ""
    w = warm(store)
    key = (c.project, c.state.path, c.commit, head)
    with w.files_guard:
        known = w.file_logs.get(key)
    if known is None and git:
        said = commits_since(c.root, c.state.path, c.commit)
        known = said if said is not None else (-1, "")
        with w.files_guard:
            w.file_logs[key] = known
    if known is None or known[0] < 0:
        return None, ""
    return known


def line(changes: Sequence[Change]) -> str:
    """One verify line for a memory's changes: "verify: a.tf changed since this was decided
    (3 commits, last 2026-11-20); 2 more files — `mama verify ID` or record an outcome"."""
    said = "; ".join(c.said for c in changes[:SAID_FILES])
    more = len(changes) - SAID_FILES
    if more > 0:
        said += f"; {more} more file{'s' if more > 1 else ''}"
    return f"verify: {said} — {HOW.format(id=changes[0].memory_id)}"
