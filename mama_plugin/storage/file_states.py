"""The files memories cite, as they were when recorded: the ladder's step and its repository.

One row a (memory, path): the commit HEAD named, the file's git blob hash and its stat data
(``filestate.FileState``) when the memory was saved, judged or verified. Rows go with their
memory (``ON DELETE CASCADE``). :func:`.peek.stat_stamp` is what the session-start cache key
reads of them: stat calls only, never a file's content.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw

from ..filestate import FileState
from .repository import Repository
from .sql import now_ms

IDS_PER_QUERY = 400


def memory_files(conn: apsw.Connection, _dim: int) -> None:
    """The ladder's step: ``memory_files``, by memory and by project."""
    conn.execute(
        """
        CREATE TABLE memory_files (
            memory_id TEXT NOT NULL
                REFERENCES memories(id) ON DELETE CASCADE ON UPDATE CASCADE,
            project TEXT NOT NULL,
            path TEXT NOT NULL CHECK (path <> ''),
            git_commit TEXT NOT NULL DEFAULT '',
            blob TEXT NOT NULL DEFAULT '',
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            recorded_at INTEGER NOT NULL,
            PRIMARY KEY (memory_id, path)
        ) WITHOUT ROWID;
        CREATE INDEX memory_files_by_project ON memory_files(project, path);
        """
    )


@dataclass(frozen=True)
class CitedFile:
    """A file a memory cites, as recorded: where (``project`` is its root), at which commit."""

    memory_id: str
    project: str
    commit: str
    state: FileState
    recorded_at: int

    @property
    def root(self) -> Path:
        return Path(self.project)

    def as_dict(self) -> dict[str, Any]:
        """The row as an export holds it (the table's column names)."""
        s = self.state
        return {
            "memory_id": self.memory_id,
            "project": self.project,
            "path": s.path,
            "git_commit": self.commit,
            "blob": s.blob,
            "size": s.size,
            "mtime_ns": s.mtime_ns,
            "recorded_at": self.recorded_at,
        }

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> CitedFile:
        """An export's row back (raises KeyError, TypeError or ValueError for a bad one)."""
        path = str(row["path"])
        if not path:
            raise ValueError("'path' is empty")
        state = FileState(path, str(row.get("blob") or ""), int(row["size"]), int(row["mtime_ns"]))
        return cls(
            str(row["memory_id"]),
            str(row["project"]),
            str(row.get("git_commit") or ""),
            state,
            int(row["recorded_at"]),
        )


class FileStates(Repository):
    """The recorded state of the files each memory cites."""

    def record(
        self, memory_id: str, project: str, commit: str, states: Sequence[FileState]
    ) -> None:
        """Replace what ``memory_id`` records with ``states`` (none: it cites no file)."""
        at = now_ms()
        with self.transaction():
            self.conn.execute("DELETE FROM memory_files WHERE memory_id = ?", (memory_id,))
            self.conn.executemany(
                "INSERT INTO memory_files(memory_id, project, path, git_commit, blob, size, "
                "mtime_ns, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (memory_id, project, s.path, commit, s.blob, s.size, s.mtime_ns, at)
                    for s in states
                ],
            )

    def of(self, ids: Iterable[str]) -> dict[str, list[CitedFile]]:
        """What each of ``ids`` records, by memory id (a memory citing no file is absent)."""
        wanted = list(dict.fromkeys(ids))
        out: dict[str, list[CitedFile]] = {}
        for i in range(0, len(wanted), IDS_PER_QUERY):
            chunk = wanted[i : i + IDS_PER_QUERY]
            marks = ",".join("?" * len(chunk))
            for row in self.conn.execute(
                "SELECT memory_id, project, path, git_commit, blob, size, mtime_ns, recorded_at "
                f"FROM memory_files WHERE memory_id IN ({marks}) ORDER BY memory_id, path",
                chunk,
            ):
                out.setdefault(str(row[0]), []).append(_cited(row))
        return out

    def of_project(self, project: str | None = None) -> list[CitedFile]:
        """Every recorded file of ``project``'s memories (None: of every project), by memory
        and path: what an export holds and what ``mama verify --list`` checks."""
        where, params = ("WHERE project = ? ", (project,)) if project is not None else ("", ())
        rows = self.conn.execute(
            "SELECT memory_id, project, path, git_commit, blob, size, mtime_ns, recorded_at "
            f"FROM memory_files {where}ORDER BY memory_id, path",
            params,
        ).fetchall()
        return [_cited(row) for row in rows]

    def restore(self, cited: CitedFile) -> bool:
        """Write one recorded file back as it was recorded (an export's row); False when the
        memory already records that path or no longer exists."""
        with self.transaction():
            self.conn.execute(
                "INSERT OR IGNORE INTO memory_files(memory_id, project, path, git_commit, blob, "
                "size, mtime_ns, recorded_at) SELECT id, ?, ?, ?, ?, ?, ?, ? FROM memories "
                "WHERE id = ?",
                (
                    cited.project,
                    cited.state.path,
                    cited.commit,
                    cited.state.blob,
                    cited.state.size,
                    cited.state.mtime_ns,
                    cited.recorded_at,
                    cited.memory_id,
                ),
            )
            return bool(self.conn.changes())


def _cited(row: Sequence[Any]) -> CitedFile:
    memory_id, project, path, commit, blob, size, mtime, at = row
    return CitedFile(
        str(memory_id),
        str(project),
        str(commit),
        FileState(str(path), str(blob), int(size), int(mtime)),
        int(at),
    )
