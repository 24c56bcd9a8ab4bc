"""Whether a command only looks around (transcript/looks.py): an inspection is not work."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mama_plugin.services.story.autosave import layers_of
from mama_plugin.transcript import Command, Digest
from mama_plugin.transcript.looks import only_looks, segments


@pytest.mark.parametrize(
    ("command", "looks"),
    [
        ("git status --short", True), ("git log --oneline -5", True), ("git diff HEAD~1", True),
        ("git status && ls", True), ("ls app && command -v python3", True),
        ("git log --oneline | head -5", True), ("cat a.txt 2>&1 | grep x", True),
        ("sh /home/u/.claude/plugins/mama/bin/mama config list", True), ("mama status", True),
        ("git branch", True), ("git remote -v", True), ("LANG=C ls", True),
        ('sh "${CLAUDE_PLUGIN_ROOT}/bin/mama" config get stop_mode', True), ("ss -ltn", True),
        # Work: it changes something or tests it.
        ("cd app && pytest -q", False), ("git branch feature", False), ("git commit -m x", False),
        ("echo hi > notes.txt", False), ("cat >> log.txt", False), ("find . -name '*.pyc' -delete", False),
        ("PRICE_DB=x python -m app --check", False), ("ss -ltn | grep -q ':8765 '", True),
        ("ls && rm -rf build", False), ("python -m pytest 2>/dev/null | tail", False),
    ],
)  # fmt: skip
def test_what_only_looks(command: str, looks: bool) -> None:
    assert only_looks(command) is looks


def test_a_command_line_splits_into_its_simple_commands() -> None:
    assert segments("cd a && pytest -q 2>&1 | tail -5; echo 'x | y' || true") == [
        "cd a", "pytest -q 2>&1", "tail -5", "echo 'x | y'", "true"]  # fmt: skip


@given(st.text(max_size=120))
def test_any_command_line_is_judged(command: str) -> None:
    only_looks(command)
    assert all(part == part.strip() and part for part in segments(command))


def test_a_session_that_only_looked_carries_no_work() -> None:
    looked = [Command("git status --short", "Show working tree status", calls=1),
              Command("ls app && command -v python3", "List files", calls=2)]  # fmt: skip
    digest = Digest(user_requests=["어제 작업 이어서 하자"], commands=looked,
                    tool_names=["Bash", "Bash"], last=looked[-1])  # fmt: skip
    layers = layers_of(digest, "어제 작업 이어서 하자", "어디서부터 할까요?", "/p", [])
    assert layers["metadata"]["work"] is False
    assert "confirmed" not in layers["continuity"]
