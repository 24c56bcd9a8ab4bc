"""Every test starts from a fresh world: a tmp MAMA_HOME, a tmp database, no network."""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw
import mcp_types as types
import pytest

from mama_plugin.config import Config
from mama_plugin.embeddings import MODEL_FILENAME, Embedder, ensure_model
from mama_plugin.embeddings import convert as convert_module
from mama_plugin.services.saving.memories import record_outcome, save_checkpoint, save_decision
from mama_plugin.storage import Store

if TYPE_CHECKING:
    from mcp import Client

    from mama_plugin.server.state import State

PROJECT = "/work/example-project"
DESKTOP = types.Implementation(name="claude-ai", version="1.0")
CLAUDE = types.Implementation(name="claude-code", version="2.1.330")
SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
ROOT = Path(__file__).resolve().parent.parent
MAMA = f"sh {ROOT}/bin/mama"  # how MAMA's messages name its command: a terminal has no `mama`
UPDATE_SNAPSHOTS = "MAMA_UPDATE_SNAPSHOTS"


@pytest.fixture(autouse=True)
def mama_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point MAMA_HOME at a per-test directory so nothing touches the real ~/.mama."""
    home = tmp_path / "mama-home"
    monkeypatch.setenv("MAMA_HOME", str(home))
    # Command aliases go to Claude Code's config folder: never the real ~/.claude.
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    return home


@pytest.fixture(autouse=True)
def _umask() -> Iterator[None]:
    """Every test starts under the common umask 022; ``mama`` run in-process narrows it."""
    before = os.umask(0o022)
    yield
    os.umask(before)


@pytest.fixture
def store(mama_home: Path) -> Iterator[Store]:
    """A freshly migrated store in the per-test MAMA_HOME."""
    with Store.open(config=Config(mama_home)) as opened:
        yield opened


@pytest.fixture
def project() -> str:
    """The project key the tests save under."""
    return PROJECT


@pytest.fixture
def state(tmp_path: Path, mama_home: Path, project: str) -> Iterator[State]:
    """The MCP server's state on a fresh store (its own database file in ``tmp_path``)."""
    from mama_plugin.server.state import State

    served = State(Config(mama_home), project, tmp_path / "server.db")
    yield served
    served.close()


# The story the tests tell: JWT auth FAILED under load and Redis sessions replaced it.
JWT = {
    "topic": "auth_strategy",
    "decision": "Use stateless JWT access tokens for API auth",
    "reasoning": "no session store to run: the API must serve 10K req/s",
}
FAILED = {"outcome": "FAILED", "details": "token refresh hit the DB: p99 307 ms at 10K req/s"}
SESSIONS = {
    "topic": "auth_strategy",
    "decision": "Server-side sessions in Redis",
    "reasoning": "refresh without a DB round trip: p99 41 ms at 10K req/s",
}

CHECKPOINT = {
    "summary": "Sessions live in Redis; HA is not done",
    "what_was_done": ["moved refresh to Redis sessions"],
    "what_remains": ["Redis HA with Sentinel"],
    "next_steps": [
        {"step": "Set up Redis Sentinel", "priority": "HIGH", "context": "infra/redis.tf:10-40"}
    ],
    "tension": {"risks": ["Redis is a single point of failure until HA"]},
}


@dataclass(frozen=True)
class Story:
    """The ids one telling of the JWT → FAILED → sessions story saved."""

    jwt: str
    sessions: str
    checkpoint: str = ""  # "" when this telling saved none


def tell_story(
    store: Store,
    project: str,
    *,
    jwt: dict[str, Any] = JWT,
    failed: dict[str, Any] | None = FAILED,
    sessions: dict[str, Any] = SESSIONS,
    supersede: bool = True,
    checkpoint: dict[str, Any] | None = None,
    jwt_at: int | None = None,
    sessions_at: int | None = None,
) -> Story:
    """Save ``jwt``, its ``failed`` outcome, ``sessions`` and a ``checkpoint`` on it, via services.

    ``sessions`` supersedes ``jwt`` when ``supersede``; no outcome is recorded when ``failed`` is
    None and no checkpoint saved when ``checkpoint`` is None. ``*_at`` set ``created_at`` (ms).
    """
    old = save_decision(store, project, jwt, created_at=jwt_at).memory.id
    if failed is not None:
        record_outcome(store, {"memory_id": old, **failed})
    replacing = {**sessions, "supersedes": old} if supersede else sessions
    new = save_decision(store, project, replacing, created_at=sessions_at).memory.id
    if checkpoint is None:
        return Story(old, new)
    done = save_checkpoint(store, project, {**checkpoint, "implements": [new]}).memory.id
    return Story(old, new, done)


def connect(state: State, client_info: types.Implementation, **options: Any) -> Client:
    """An in-process MCP client of ``state``'s server: the legacy protocol era unless ``mode``."""
    from mcp import Client  # the server pulls in mcp: only when asked for

    from mama_plugin.server.app import build_server

    options.setdefault("mode", "legacy")
    return Client(build_server(state), client_info=client_info, **options)


def text_result(result: types.CallToolResult) -> str:
    """The text of a tool result's first content block."""
    return result.content[0].text  # type: ignore[union-attr]


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


class Counting:
    """An embedding model that counts the texts it embeds (a word's letters as the vector)."""

    name, dim = "counting", 26

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.texts += texts
        return [[float(t.lower().count(chr(97 + i))) for i in range(26)] for t in texts]


def assert_snapshot(name: str, data: Any) -> None:
    """Compare ``data`` with the reviewed ``tests/snapshots/<name>.json``; fail with the diff.

    With ``MAMA_UPDATE_SNAPSHOTS=1`` the file is (re)written instead: review it with git diff.
    """
    path = SNAPSHOTS / f"{name}.json"
    fresh = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    if os.environ.get(UPDATE_SNAPSHOTS) == "1":
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(fresh, encoding="utf-8")
        return
    regenerate = f"{UPDATE_SNAPSHOTS}=1 pytest {Path(__file__).parent.name}/ -k snapshot"
    if not path.exists():
        pytest.fail(f"no snapshot {path.name}; write it with `{regenerate}` and review it")
    stored = path.read_text(encoding="utf-8")
    if stored != fresh:
        diff = difflib.unified_diff(
            stored.splitlines(), fresh.splitlines(), f"snapshots/{path.name}", "now", lineterm=""
        )
        pytest.fail(
            f"{path.name} changed; if that is intended, regenerate with `{regenerate}` and "
            "review the diff:\n" + "\n".join(diff)
        )


@pytest.fixture
def snapshot() -> Callable[[str, Any], None]:
    """``snapshot(name, data)``: ``data`` must equal the reviewed ``tests/snapshots/<name>.json``."""
    return assert_snapshot


def run_mama(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``mama ARGS`` as a process of its own, with ``home`` as MAMA_HOME."""
    env = {**os.environ, "MAMA_HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "mama_plugin.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
    )


def btree_pages(db: Path, btree: str, *, kinds: tuple[str, ...] = ("leaf",)) -> list[int]:
    """The page numbers of one table or index of ``kinds`` (SQLite's dbstat), in order."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        rows = conn.execute(
            f"SELECT pageno FROM dbstat WHERE name = ? AND pagetype IN "
            f"({', '.join('?' * len(kinds))}) ORDER BY pageno",
            (btree, *kinds),
        ).fetchall()
    finally:
        conn.close()
    return [int(r[0]) for r in rows]  # type: ignore[arg-type]


def file_fingerprint(db: Path) -> dict[str, str]:
    """Hashes of the database file and its write-ahead log (when it holds anything)."""
    out = {}
    for path in (db, Path(f"{db}-wal")):
        if path.exists() and path.stat().st_size:
            out[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out
