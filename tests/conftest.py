"""Every test starts from a fresh world: a tmp MAMA_HOME, a tmp database, no network."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mama_plugin.config import Config
from mama_plugin.storage import Store

PROJECT = "/work/example-project"


@pytest.fixture(autouse=True)
def mama_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point MAMA_HOME at a per-test directory so nothing touches the real ~/.mama."""
    home = tmp_path / "mama-home"
    monkeypatch.setenv("MAMA_HOME", str(home))
    # Command aliases go to Claude Code's config folder: never the real ~/.claude.
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    return home


@pytest.fixture
def store(mama_home: Path) -> Iterator[Store]:
    """A freshly migrated store in the per-test MAMA_HOME."""
    with Store.open(config=Config(mama_home)) as opened:
        yield opened


@pytest.fixture
def project() -> str:
    """The project key the tests save under."""
    return PROJECT
