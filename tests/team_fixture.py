"""A real PostgreSQL with pgvector for the team-store tests (the ``pgserver`` wheel).

One cluster per test session, a fresh database per test; roles are cluster-wide, so each
test names its developers itself. ``stop`` and ``start`` make a real outage.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

_numbers = itertools.count(1)


def running_cluster() -> Iterator[Cluster]:
    """PostgreSQL for a module's team tests (a session fixture yields from it); they skip,
    saying why, where it cannot run."""
    pytest.importorskip("psycopg", reason="the team store's driver: pip install -e '.[team]'")
    pytest.importorskip("pgserver", reason="PostgreSQL for the tests: pip install -e '.[team]'")
    try:
        started = start_cluster()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    yield started
    started.close()


def start_cluster() -> Cluster:
    """Start PostgreSQL in a fresh folder of its own; raises RuntimeError with the reason when
    this machine cannot run it.

    Not under pytest's temporary folder: as root, PostgreSQL runs as a user of its own
    (``pgserver``), which must traverse every parent folder, and pytest keeps its own 0700.
    """
    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset
        warnings.simplefilter("ignore")
        import pgserver
    root = Path(tempfile.mkdtemp(prefix="mama-pg-"))
    root.chmod(0o755)
    try:
        server = pgserver.get_server(root / "data", cleanup_mode="delete")
    except Exception as exc:
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"pgserver could not start PostgreSQL here: {exc}") from exc
    return Cluster(server, root)


class Cluster:
    """A running PostgreSQL: databases, URLs as the owner or as a developer, outages."""

    def __init__(self, server: Any, root: Path) -> None:
        self.server = server
        self.root = root
        self.socket = server.get_postmaster_info().socket_dir

    def url(self, database: str, role: str = "postgres") -> str:
        """A URL of ``database`` as ``role`` (trust authentication: no password)."""
        return f"postgresql://{role}@/{database}?host={quote(str(self.socket))}"

    def new_database(self) -> str:
        """A fresh database with pgvector available; its name."""
        import psycopg

        name = f"team{next(_numbers)}"
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name}")
            conn.execute(f"CREATE DATABASE {name}")
        return name

    def stop(self) -> None:
        """Stop the server at once (an outage: connections drop, new ones are refused)."""
        from pgserver._commands import pg_ctl

        pg_ctl(
            ["-w", "-m", "immediate", "stop"],
            pgdata=self.server.pgdata,
            user=self.server.system_user,
        )

    def start(self) -> None:
        """Start the stopped server again on the same socket."""
        self.server.ensure_postgres_running()
        self.socket = self.server.get_postmaster_info().socket_dir

    def close(self) -> None:
        """Stop the server and delete its files."""
        self.stop()  # at once: pgserver's own stop waits for every client to leave
        self.server.cleanup()
        shutil.rmtree(self.root, ignore_errors=True)
