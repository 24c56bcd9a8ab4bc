"""The files a memory cites, as git sees them: their paths, their blob hashes, the commit.

A memory names files in free text ("infra/redis.tf:12-30", "bench/load.js", a command that
runs one): :func:`cited_paths` keeps only what is an existing file under the project root.
Its state is what git would store (:func:`blob_hash`, ``git hash-object``'s sha1 of
``blob <len>\\0`` + content) with the stat data that lets a later check say "unchanged"
without reading it (:func:`state_of`); the commit is read from ``.git`` without spawning git
(:func:`head_commit`). Only :func:`commits_since` runs git, for what a check says of a change
("3 commits, last 2026-11-20"): never on a hook's path. Standard library only.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

HASHED_BYTES = 8 * 1024 * 1024  # a larger file is compared by its stat data alone
CITED_MAX = 20  # paths kept a memory
GIT_TIMEOUT_S = 2.0
# A path-like word: letters, digits and ``._-/``, at least one ``/`` or ``.``, and an optional
# ``:12`` or ``:12-30`` line range after it.
_WORD = re.compile(r"(?<![\w/.~:-])((?:\.{0,2}/)?[\w.-]+(?:/[\w.-]+)*)(?::\d+(?:-\d+)?)?")


@dataclass(frozen=True)
class FileState:
    """A file as it was: its path (relative to the project root), git blob hash, stat data.

    ``blob`` is "" for a file that was missing (``size`` -1) or too large to hash.
    """

    path: str
    blob: str
    size: int
    mtime_ns: int

    @property
    def missing(self) -> bool:
        return self.size < 0


def blob_hash(data: bytes) -> str:
    """The object id git gives ``data`` as a blob (``git hash-object``)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def stat_of(root: Path, path: str) -> tuple[int, int]:
    """(size, mtime_ns) of ``root/path``; (-1, 0) when it is not a readable file."""
    try:
        st = os.stat(root / path)
    except OSError:
        return -1, 0
    return (st.st_size, st.st_mtime_ns) if os.path.isfile(root / path) else (-1, 0)


def state_of(root: Path, path: str) -> FileState:
    """The state of ``root/path`` now (hashed unless over :data:`HASHED_BYTES`)."""
    size, mtime = stat_of(root, path)
    if size < 0 or size > HASHED_BYTES:
        return FileState(path, "", size, mtime)
    try:
        data = (root / path).read_bytes()
    except OSError:
        return FileState(path, "", -1, 0)
    return FileState(path, blob_hash(data), size, mtime)


def cited_paths(texts: Iterable[str], root: Path) -> list[str]:
    """The existing files under ``root`` that ``texts`` name, relative and in order, once each.

    Conservative: a word is a path only when it has a ``/`` or a ``.`` and names a regular
    file under ``root`` (an absolute path inside ``root`` counts; ``..`` out of it does not);
    URLs are skipped. At most :data:`CITED_MAX`.
    """
    if not root.is_dir():
        return []
    found: list[str] = []
    real_root = root.resolve()
    for text in texts:
        for word in _WORD.findall(re.sub(r"\S+://\S+", " ", str(text))):
            candidate = word.rstrip(".")
            if ("/" not in candidate and "." not in candidate.strip(".")) or candidate in found:
                continue
            rel = _inside(real_root, candidate)
            if rel is not None and rel not in found:
                found.append(rel)
                if len(found) >= CITED_MAX:
                    return found
    return found


def _inside(root: Path, word: str) -> str | None:
    """``word`` as a path relative to ``root`` when it names a regular file there."""
    path = Path(word) if word.startswith("/") else root / word
    try:
        real = path.resolve()
        rel = real.relative_to(root)
    except (OSError, ValueError, RuntimeError):
        return None
    if rel.parts and rel.parts[0] == ".git":
        return None
    return rel.as_posix() if real.is_file() else None


def git_dir(root: Path) -> Path | None:
    """The git directory of the working tree at ``root`` (``.git``, or where a ``.git`` file
    points), or None outside git."""
    dotgit = root / ".git"
    if dotgit.is_dir():
        return dotgit
    try:
        text = dotgit.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    found = Path(text.removeprefix("gitdir:").strip())
    return found if found.is_absolute() else (root / found).resolve()


def head_commit(root: Path) -> str:
    """The commit HEAD names at ``root``, read from the git directory ("" outside git or on a
    branch with no commit yet). No subprocess: a ref file, else ``packed-refs``."""
    gd = git_dir(root)
    if gd is None:
        return ""
    try:
        head = (gd / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return ""
    if not head.startswith("ref:"):
        return head if re.fullmatch(r"[0-9a-f]{40,64}", head) else ""
    ref = head.removeprefix("ref:").strip()
    common = gd
    with contextlib.suppress(OSError):
        common = (gd / (gd / "commondir").read_text(encoding="utf-8").strip()).resolve()
    for folder in dict.fromkeys((gd, common)):
        try:
            return (folder / ref).read_text(encoding="utf-8").strip()
        except OSError:
            pass
        try:
            packed = (folder / "packed-refs").read_text(encoding="utf-8")
        except OSError:
            continue
        for line in packed.splitlines():
            commit, _, name = line.partition(" ")
            if name.strip() == ref:
                return commit
    return ""


def commits_since(root: Path, path: str, commit: str) -> tuple[int, str] | None:
    """How many commits changed ``path`` since ``commit`` and the day of the last
    (``git log --format=%cs commit..HEAD -- path``); None when git cannot say (no git, an
    unknown commit, past :data:`GIT_TIMEOUT_S`). Spawns git: never on a hook's path."""
    if not commit:
        return None
    import subprocess  # here: ~7 ms of the server's warm-up, and no hook spawns git

    try:
        done = subprocess.run(
            ["git", "-C", str(root), "log", "--format=%cs", f"{commit}..HEAD", "--", path],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    days = done.stdout.split()
    return len(days), (days[0] if days else "")
