"""Reading ``.mama/`` into the store and writing the store's shared memories out to it.

The last shared state of every memory (``shared_files``: the hash of its file as last written
or imported) is the common ancestor of three-way merging, memory by memory:

* file unchanged since then → nothing to import (a change made here is written out by share);
* file changed, memory here unchanged → the teammate's version is applied (an upsert keyed on
  id, the row version checked) or, for a new id, inserted and queued for embedding;
* both changed, differently → a conflict: both versions are kept and shown, neither wins;
* a tombstone (``deleted:``) forgets the memory here, when it did not change here since;
* a file that is simply gone forgets nothing: a deletion is honoured only when explicit.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..config import Config
from ..errors import ConflictError, MamaError, NotFoundError, ValidationError
from ..relationships import REPLACING
from ..services.learning.living import note
from ..storage import NewMemory, Store
from ..storage.shared_files import SharedFiles
from . import scan, standing
from .files import KIND_DIRS, SharedMemory, digest, now_ms, parse, path_of, render
from .frontmatter import ShareFormatError
from .local import local_memories, rendered
from .report import ShareReport

_EDITED_LAYERS = ("specifics", "evidence", "reasoning", "tension", "continuity")


@dataclass(frozen=True)
class OnDisk:
    """A file of ``.mama/`` as read: its path, text, hash and memory (None: unreadable)."""

    rel: str
    text: str
    hash: str
    memory: SharedMemory | None


def read_folder(
    root: Path, report: ShareReport, known: dict[str, str] | None = None
) -> list[OnDisk]:
    """Every file under ``root/.mama``, read and parsed; unreadable ones go to ``report``.

    ``known`` maps paths to the hash they were last shared with: a file that still has it
    is not parsed again (``memory`` None, ``hash`` equal: nothing to import).
    """
    found = []
    for rel in scan.listing(root):
        try:
            text = (root / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            report.problems.append(f"{rel}: cannot be read ({exc})")
            continue
        hashed = digest(text)
        if known is not None and known.get(rel) == hashed:
            found.append(OnDisk(rel, text, hashed, None))
            continue
        try:
            memory = parse(text, where=rel)
        except ShareFormatError as exc:
            report.problems.append(str(exc))
            found.append(OnDisk(rel, text, hashed, None))
            continue
        if rel != str(path_of(memory.type, memory.id)):
            report.problems.append(
                f"{rel}: a {memory.type} with id {memory.id} belongs at "
                f"{path_of(memory.type, memory.id)}"
            )
            found.append(OnDisk(rel, text, hashed, None))
            continue
        found.append(OnDisk(rel, text, hashed, memory))
    return found


class Sharing:
    """One project's sharing through the checkout at ``root``."""

    def __init__(self, store: Store, config: Config, project: str, root: Path) -> None:
        self.store, self.config, self.project, self.root = store, config, project, root
        self.state = SharedFiles(store)
        self.types = tuple(t for t in config.settings.share_types.split(",") if t)

    # -- import ----------------------------------------------------------------------------

    def import_files(self, report: ShareReport | None = None) -> ShareReport:
        """Bring what changed in ``.mama/`` since the last share into the store."""
        report = report if report is not None else ShareReport()
        bases = self.state.bases(self.project)
        by_path = {b.path: b for b in bases.values()}
        disk = read_folder(self.root, report, {p: b.hash for p, b in by_path.items()})
        open_conflicts = {c.memory_id: c for c in self.state.conflicts(self.project)}
        replacing = standing.claimed(f.memory for f in disk)
        applied: list[tuple[SharedMemory, OnDisk]] = []
        to_forget: list[OnDisk] = []
        seen: set[str] = set()
        for f in disk:
            if f.rel in by_path and by_path[f.rel].hash == f.hash:
                seen.add(by_path[f.rel].memory_id)
                continue  # unchanged since the last share
            if f.memory is None:
                continue
            m, base = f.memory, bases.get(f.memory.id)
            seen.add(m.id)
            if base is not None and base.hash == f.hash:
                continue  # unchanged since the last share (moved)
            known = open_conflicts.get(m.id)
            if known is not None and known.theirs_hash == f.hash:
                report.conflicts.append(m.id)  # still open, waiting for a choice
                continue
            local = self.store.memories.get(m.id)
            if local is not None and local.project != self.project:
                report.problems.append(f"{f.rel}: id {m.id} belongs to another project here")
                continue
            mine = rendered(self.store, local).text if local else ""
            if why := standing.unreplaced(self.store, m, replacing):
                report.problems.append(f"{f.rel}: {why}; kept beside this clone's version")
                self._conflict(f, mine, report)
                continue
            if digest(mine) == f.hash or (m.tombstone and local is None):
                self._record(m, f)
                self.state.settle(self.project, [m.id])
            elif m.tombstone:
                if base is not None and digest(mine) == base.hash:
                    to_forget.append(f)
                else:
                    self._conflict(f, mine, report)
            elif local is None:
                if base is not None and not base.deleted:  # forgotten here, edited there
                    self._conflict(f, "", report)
                elif self._insert(m, f, report):
                    applied.append((m, f))
            elif base is not None and digest(mine) == base.hash:
                if self._apply(m, f, local.version, report):
                    applied.append((m, f))
            else:
                self._conflict(f, mine, report)
        self._links(applied, report)
        for f in to_forget:
            self._forget(f, report)
        report.missing.extend(
            sorted(b.path for i, b in bases.items() if i not in seen and not b.deleted)
        )
        return report

    def _record(self, m: SharedMemory, f: OnDisk) -> None:
        self.state.record(self.project, m.id, f.rel, f.hash, deleted=m.tombstone)

    def _conflict(self, f: OnDisk, mine: str, report: ShareReport) -> None:
        assert f.memory is not None
        self.state.add_conflict(self.project, f.memory.id, f.rel, f.text, f.hash, mine)
        report.conflicts.append(f.memory.id)

    def _insert(self, m: SharedMemory, f: OnDisk, report: ShareReport) -> bool:
        outcome = {**m.layers.get("outcome", {}), "status": m.outcome_status}
        try:
            with self.store.transaction():
                self.store.memories.insert(
                    NewMemory(
                        id=m.id,
                        type=m.type,
                        project=self.project,
                        topic=m.topic,
                        content=m.content,
                        specifics=m.layers.get("specifics") or [],
                        evidence=m.layers.get("evidence") or [],
                        reasoning=m.layers.get("reasoning") or {},
                        tension=m.layers.get("tension") or {},
                        continuity=m.layers.get("continuity") or {},
                        outcome=outcome,
                        confidence=m.confidence,
                        tags=m.tags,
                        status=m.status,
                        metadata={"shared_from": f.rel},
                        created_at=m.created_at,
                        updated_at=m.updated_at,
                    )
                )
                self._record(m, f)
        except ValidationError as exc:
            report.problems.append(f"{f.rel}: not imported: {exc}")
            return False
        report.imported.append(m.id)
        return True

    def _apply(self, m: SharedMemory, f: OnDisk, version: int, report: ShareReport) -> bool:
        """The teammate's version over this clone's, which has not changed since the share."""
        try:
            with self.store.transaction():
                self.store.memories.update(
                    m.id,
                    expected_version=version,
                    updated_at=m.updated_at,
                    topic=m.topic,
                    content=m.content,
                    confidence=m.confidence,
                    tags=list(m.tags),
                    **{k: m.layers.get(k) or _empty(k) for k in _EDITED_LAYERS},
                )
                self.state.set_standing(
                    m.id,
                    status=m.status,
                    outcome_status=m.outcome_status,
                    outcome=json.dumps(m.layers.get("outcome", {}), ensure_ascii=False),
                )
                self._record(m, f)
        except ConflictError:
            report.problems.append(f"{f.rel}: {m.id} changed here while importing; run again")
            return False
        except ValidationError as exc:
            report.problems.append(f"{f.rel}: not imported: {exc}")
            return False
        report.updated.append(m.id)
        return True

    def _links(self, applied: list[tuple[SharedMemory, OnDisk]], report: ShareReport) -> None:
        """The links the applied files state, where both ends are here (links are added, never
        removed by an import); a replacing one as :func:`.standing.supersede` takes it."""
        for m, f in applied:
            for ln in m.links:
                if self.store.memories.get(ln.to) is None:
                    report.links_skipped.append(f"{m.id}→{ln.to}")
                    continue
                try:
                    if self.store.links.exists(m.id, ln.to, ln.relationship):
                        continue
                    if ln.relationship in REPLACING:
                        link = standing.supersede(
                            self.store, m.id, ln.to, ln.relationship, ln.reason
                        )
                        if isinstance(link, str):
                            report.problems.append(f"{f.rel}: {link}; kept beside this clone's")
                            local = self.store.memories.get(m.id)
                            self._conflict(
                                f, rendered(self.store, local).text if local else "", report
                            )
                            continue
                    else:
                        link, _ = self.store.links.add(
                            m.id, ln.to, ln.relationship, ln.reason, mark_target=False
                        )
                    note(self.store, [link])  # what it links to gains a dated note
                    report.links_added += 1
                except ValidationError as exc:
                    report.problems.append(f"{m.id}→{ln.to}: link not added: {exc}")

    def _forget(self, f: OnDisk, report: ShareReport) -> None:
        from ..services.hygiene.forgetting import forget

        assert f.memory is not None
        with contextlib.suppress(NotFoundError):  # forgotten here already
            forget(self.store, self.config, f.memory.id)
        self._record(f.memory, f)
        report.forgotten.append(f.memory.id)

    def resolve(self, memory_id: str, keep: str) -> str:
        """Settle a conflict: ``theirs`` applies the file's version here, ``mine`` keeps this
        clone's (the next share writes it over the file). Returns what was done."""
        found = {c.memory_id: c for c in self.state.conflicts(self.project)}.get(memory_id)
        if found is None:
            raise NotFoundError(
                f"no open share conflict for {memory_id!r} (`mama share --conflicts`)"
            )
        theirs = parse(found.theirs, where=found.path)
        f = OnDisk(found.path, found.theirs, found.theirs_hash, theirs)
        report = ShareReport()
        if keep == "mine":
            self.state.record(self.project, memory_id, found.path, found.theirs_hash)
            told = "kept this clone's version; `mama share` writes it to " + found.path
        elif theirs.tombstone:
            self._forget(f, report)
            told = f"forgot {memory_id}, as the teammate's tombstone says"
        else:
            if why := standing.unreplaced(self.store, theirs, set()):
                raise MamaError(f"cannot take {found.path}: it {why}; keep mine")
            local = self.store.memories.get(memory_id)
            done = (
                self._apply(theirs, f, local.version, report)
                if local is not None
                else self._insert(theirs, f, report)
            )
            if not done:
                raise MamaError("; ".join(report.problems))
            self._links([(theirs, f)], report)
            if memory_id in report.conflicts:  # its supersede still cannot be taken here
                raise MamaError("; ".join(report.problems))
            told = f"took the teammate's version of {memory_id} from {found.path}"
        self.state.settle(self.project, [memory_id])
        return told

    # -- share -----------------------------------------------------------------------------

    def share(self, *, checkpoints: bool = False) -> ShareReport:
        """Import what changed in ``.mama/``, then write this clone's shared memories there:
        one file a memory, a tombstone for one forgotten here, conflicts left alone."""
        report = self.import_files()
        types = self.types if not checkpoints else (*self.types, "checkpoint")
        mine = local_memories(self.store, self.project, types, rolling=checkpoints)
        bases = self.state.bases(self.project)
        held = self.state.conflicted(self.project)
        for memory_id in sorted(mine):
            if memory_id in held:
                report.held.append(memory_id)
                continue
            base = bases.get(memory_id)
            out = rendered(self.store, mine[memory_id], passed=base.hash if base else "")
            rel = str(path_of(out.memory.type, memory_id))
            if out.suspect:
                report.withheld.append(f"{rel} ({', '.join(out.suspect)})")
                continue
            on_disk = _hash_of(self.root / rel)
            if on_disk == out.hash:
                report.unchanged += 1
            elif on_disk is not None and (base is None or on_disk != base.hash):
                report.held.append(memory_id)  # changed there and not importable: see problems
                continue
            else:
                _write(self.root / rel, out.text)
                report.written.append(rel)
            if base is None or base.hash != out.hash or base.deleted:
                self.state.record(self.project, memory_id, rel, out.hash)
        for memory_id, base in sorted(bases.items()):
            if memory_id in mine or base.deleted or memory_id in held:
                continue
            if self.store.memories.get(memory_id) is not None:
                continue  # still here, only no longer of a shared type: not a deletion
            on_disk = _hash_of(self.root / base.path)
            if on_disk is not None and on_disk != base.hash:
                continue  # edited there since: the import made it a conflict or a problem
            kind = Path(base.path).parent.name
            memory_type = next((t for t, d in KIND_DIRS.items() if d == kind), "decision")
            text = render(SharedMemory(memory_id, memory_type, deleted_at=now_ms()))
            _write(self.root / base.path, text)
            self.state.record(self.project, memory_id, base.path, digest(text), deleted=True)
            report.tombstones.append(base.path)
        settled = {*report.written, *report.tombstones}
        report.missing = [p for p in report.missing if p not in settled]
        return report

    def stamp(self) -> None:
        """Record ``.mama/`` as this run leaves it, for the session start's check."""
        scan.stamp_now(self.root, len(self.state.conflicts(self.project))).write(
            self.config.home, self.root
        )


def _empty(layer: str) -> list[object] | dict[str, object]:
    return [] if layer in ("specifics", "evidence") else {}


def _hash_of(path: Path) -> str | None:
    try:
        return scan.file_hash(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise MamaError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _write(path: Path, text: str) -> None:
    """Write a shared file atomically, readable by all (it is committed to the repository).

    The text is a tombstone or a rendering the privacy filter passed (``Rendered.suspect``).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
