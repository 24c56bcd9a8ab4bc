"""What is in a checkout's ``.mama/`` folder, and what changed there since MAMA last looked.

Standard library only: the SessionStart hook calls :func:`notice` on a cold start. A *stamp*
(``$MAMA_HOME/share/<checkout hash>.json``) records each file's size, mtime and content hash
as the last share or import left them, plus how many conflicts are open. :func:`changes`
compares stat data first and reads (hashes) only a file whose stat data differ — after a
``git pull`` that is the files the pull wrote — within a time budget; a file it had no time
to read counts as changed. Nothing here writes the store.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..home import private_folder, write_private

FOLDER = ".mama"
# The folders of ``.mama/`` that hold memories (``files.KIND_DIRS``); anything else there (a
# README, notes) is the team's own and left alone.
KIND_FOLDERS = ("checkpoints", "context", "decisions", "insights")
MAX_FILES = 20_000
NOTICE_BUDGET_S = 0.15


def checkout_root(cwd: str | os.PathLike[str] | None = None) -> Path | None:
    """The working tree ``cwd`` is in (the folder holding ``.git``, worktrees included), or None."""
    start = Path(cwd if cwd is not None else os.getcwd()).expanduser().resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


@dataclass(frozen=True)
class Seen:
    """A file as last seen: stat data and content hash."""

    size: int
    mtime_ns: int
    hash: str


def listing(root: Path) -> dict[str, os.stat_result]:
    """Every ``<kind>/<id>.md`` file under ``root/.mama``, by path relative to ``root``."""
    found: dict[str, os.stat_result] = {}
    base = root / FOLDER
    try:
        kinds = [
            e
            for e in os.scandir(base)
            if e.name in KIND_FOLDERS and e.is_dir(follow_symlinks=False)
        ]
    except OSError:
        return found
    for kind in sorted(kinds, key=lambda e: e.name):
        try:
            entries = sorted(os.scandir(kind.path), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.endswith(".md") and entry.is_file(follow_symlinks=False):
                found[f"{FOLDER}/{kind.name}/{entry.name}"] = entry.stat(follow_symlinks=False)
                if len(found) >= MAX_FILES:
                    return found
    return found


def file_hash(path: Path) -> str:
    """The sha256 of a file's bytes (the hash :func:`~.files.digest` gives its text)."""
    import hashlib  # here: a project without .mama/ (most) never loads OpenSSL at its start

    return hashlib.sha256(path.read_bytes()).hexdigest()


def stamp_path(home: Path, root: Path) -> Path:
    """Where the stamp of checkout ``root`` lives under MAMA's home."""
    import hashlib

    key = hashlib.sha256(str(root).encode("utf-8")).hexdigest()[:20]
    return home / "share" / f"{key}.json"


@dataclass
class Stamp:
    """The files of a checkout's ``.mama/`` as MAMA last left them, and its open conflicts."""

    files: dict[str, Seen] = field(default_factory=dict)
    conflicts: int = 0

    @classmethod
    def read(cls, home: Path, root: Path) -> Stamp | None:
        """The stamp, or None when there is none (or it cannot be read)."""
        try:
            data = json.loads(stamp_path(home, root).read_text(encoding="utf-8"))
            files = {
                str(k): Seen(int(v[0]), int(v[1]), str(v[2])) for k, v in data["files"].items()
            }
            return cls(files, int(data.get("conflicts", 0)))
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            return None

    def write(self, home: Path, root: Path) -> None:
        """Save the stamp (sorted, so the same state writes the same bytes)."""
        path = stamp_path(home, root)
        private_folder(path.parent)
        data = {
            "root": str(root),
            "conflicts": self.conflicts,
            "files": {k: [s.size, s.mtime_ns, s.hash] for k, s in sorted(self.files.items())},
        }
        write_private(path, json.dumps(data, indent=1, sort_keys=True) + "\n")


def stamp_now(root: Path, conflicts: int) -> Stamp:
    """The stamp of ``.mama/`` as it is now (every file read and hashed)."""
    files = {}
    for rel, info in listing(root).items():
        try:
            files[rel] = Seen(info.st_size, info.st_mtime_ns, file_hash(root / rel))
        except OSError:
            continue
    return Stamp(files, conflicts)


@dataclass(frozen=True)
class Changes:
    """What differs in ``.mama/`` from the stamp: files new to MAMA, files changed since."""

    new: int = 0
    changed: int = 0
    conflicts: int = 0

    @property
    def any(self) -> bool:
        return bool(self.new or self.changed)


def changes(home: Path, root: Path, *, budget_s: float = NOTICE_BUDGET_S) -> Changes:
    """Compare ``.mama/`` with its stamp: stat data first, a file's hash only when they differ."""
    stamp = Stamp.read(home, root) or Stamp()
    deadline = time.monotonic() + budget_s
    new = changed = 0
    for rel, info in listing(root).items():
        seen = stamp.files.get(rel)
        if seen is None:
            new += 1
        elif (seen.size, seen.mtime_ns) != (info.st_size, info.st_mtime_ns):
            if time.monotonic() > deadline or seen.size != info.st_size:
                changed += 1
                continue
            try:
                if file_hash(root / rel) != seen.hash:
                    changed += 1
            except OSError:
                changed += 1
    return Changes(new, changed, stamp.conflicts)


def notice(home: Path, cwd: str | None) -> str:
    """One line for the session start when ``.mama/`` changed since MAMA last read it, or open
    conflicts wait; "" otherwise (so the session start stays the same while nothing changes)."""
    root = checkout_root(cwd)
    if root is None or not (root / FOLDER).is_dir():
        return ""
    found = changes(home, root)
    parts = []
    if found.any:
        what = " and ".join(
            f"{n} {label} file{'s' if n != 1 else ''}"
            for n, label in ((found.new, "new"), (found.changed, "changed"))
            if n
        )
        parts.append(
            f"MAMA: {what} in .mama/ since the last share (a git pull?): the MAMA server imports "
            "them in the background; `mama share --import` does it now"
        )
    if found.conflicts:
        parts.append(
            f"{found.conflicts} shared memor{'ies' if found.conflicts != 1 else 'y'} changed "
            "here and by a teammate: `mama share --conflicts` shows both versions"
        )
    return "; ".join(parts) + ("." if parts else "")
