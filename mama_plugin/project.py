"""Identify the project a working directory belongs to, without spawning git.

A project is the root of the main working tree of its git repository: every linked worktree
of one repository maps to the same project. A submodule is its own project. Outside git, the
directory itself is the project. Standard library only: hooks call this on a cold start.
"""

from __future__ import annotations

import os
from pathlib import Path

# The scope of the memories every project inherits: the user's own preferences and patterns,
# promoted from a project on purpose (``mama promote``). Project keys are absolute paths, so
# this key is never a project's.
GLOBAL = "global"


def project_root(cwd: str | os.PathLike[str] | None = None) -> Path:
    """Return the project root for ``cwd`` (default: the process's working directory)."""
    start = Path(cwd if cwd is not None else os.getcwd()).expanduser().resolve()
    for folder in (start, *start.parents):
        dotgit = folder / ".git"
        if dotgit.is_dir():
            return folder
        if dotgit.is_file():
            return _root_from_gitfile(folder, dotgit)
    return start


def project_key(cwd: str | os.PathLike[str] | None = None) -> str:
    """Return the string that scopes rows to the project of ``cwd``."""
    return str(project_root(cwd))


def _root_from_gitfile(folder: Path, dotgit: Path) -> Path:
    """Resolve a ``.git`` file: a linked worktree points back to its main repository."""
    try:
        text = dotgit.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return folder
    if not text.startswith("gitdir:"):
        return folder
    gitdir = Path(text.removeprefix("gitdir:").strip())
    if not gitdir.is_absolute():
        gitdir = (folder / gitdir).resolve()
    commondir_file = gitdir / "commondir"
    if not commondir_file.is_file():
        # A submodule's gitdir has no commondir: the submodule is a project of its own.
        return folder
    try:
        common = Path(commondir_file.read_text(encoding="utf-8").strip())
    except OSError:
        return folder
    if not common.is_absolute():
        common = (gitdir / common).resolve()
    # The common dir of a non-bare repository is <main worktree>/.git.
    return common.parent if common.name == ".git" else common
