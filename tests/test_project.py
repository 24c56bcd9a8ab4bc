"""Project identity: the git root, worktrees of one repository as one project."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from mama_plugin.project import project_key, project_root

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(cwd), "PATH": "/usr/bin:/bin"})  # fmt: skip


def test_outside_git_the_directory_is_the_project(tmp_path: Path) -> None:
    assert project_root(tmp_path) == tmp_path.resolve()
    assert project_key(tmp_path) == str(tmp_path.resolve())


@needs_git
def test_subdirectories_and_worktrees_share_the_main_root(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "src" / "deep").mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / "f").write_text("x")
    _git(repo, "add", "f")
    _git(repo, "commit", "-qm", "init")
    _git(repo, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "feature")
    (tmp_path / "wt" / "sub").mkdir()
    assert project_root(repo / "src" / "deep") == repo.resolve()
    assert project_root(tmp_path / "wt") == repo.resolve()
    assert project_root(tmp_path / "wt" / "sub") == repo.resolve()


def test_gitfile_without_commondir_is_its_own_project(tmp_path: Path) -> None:
    """A submodule: its .git file points into the parent's modules/, with no commondir."""
    parent_git = tmp_path / "parent" / ".git"
    (parent_git / "modules" / "lib").mkdir(parents=True)
    sub = tmp_path / "parent" / "lib"
    sub.mkdir()
    (sub / ".git").write_text("gitdir: ../.git/modules/lib\n")
    assert project_root(sub) == sub.resolve()
    assert project_root(tmp_path / "parent") == (tmp_path / "parent").resolve()


def test_unreadable_or_odd_gitfile_falls_back_to_its_folder(tmp_path: Path) -> None:
    (tmp_path / ".git").write_text("not a gitdir line")
    assert project_root(tmp_path) == tmp_path.resolve()
