"""Every test starts from a fresh world: a tmp MAMA_HOME, a tmp database, no network."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from mama_plugin.config import Config
from mama_plugin.embeddings import MODEL_FILENAME, Embedder, ensure_model
from mama_plugin.embeddings import convert as convert_module
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


def requirements_missing() -> str | None:
    """Why the real embedding model cannot run here (MAMA's local extra), or None."""
    for module in ("llama_cpp", "gguf", "safetensors", "numpy"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (MAMA's local extra)"
    if importlib.util.find_spec(convert_module.PACKAGE_MODULE) is None:
        return f"{convert_module.PACKAGE_NAME} is not installed"
    return None


@pytest.fixture(scope="session")
def built_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The GGUF built once for the whole session from the PyPI package."""
    if reason := requirements_missing():
        pytest.skip(reason)
    dest = tmp_path_factory.mktemp("models") / MODEL_FILENAME
    assert ensure_model(dest) is True
    return dest


@pytest.fixture(scope="session")
def embedder(built_model: Path) -> Iterator[Embedder]:
    """The real all-MiniLM-L6-v2 embedder (llama.cpp), loaded once per test session."""
    with Embedder(built_model) as loaded:
        yield loaded


@pytest.fixture
def anyio_backend() -> str:
    """Run ``@pytest.mark.anyio`` tests on asyncio only (the MCP server's loop)."""
    return "asyncio"
