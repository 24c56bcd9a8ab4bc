"""A real PostgreSQL with pgvector from the ``pgserver`` wheel, for the team benchmark and tests.

As root, PostgreSQL runs as a user of its own (``pgserver``) that must traverse every parent
folder of its data: the folder is made under the system's temporary folder, not pytest's (kept
0700). ``stop`` and ``start`` make a real outage. Needs the ``team`` extra.
"""

from __future__ import annotations

import itertools
import logging
import shutil
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import quote

from mama_plugin.errors import MamaError

_numbers = itertools.count(1)
# pg_ctl's wait for a start or stop: generous, the machine may be loaded.
WAIT_S = 120


def start_cluster() -> Cluster:
    """Start PostgreSQL in a fresh folder; raises MamaError with the reason when this machine
    cannot run it."""
    try:
        with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset
            warnings.simplefilter("ignore")
            import pgserver
    except ImportError:
        raise MamaError("PostgreSQL for the team store: pip install -e '.[team]'") from None
    root = Path(tempfile.mkdtemp(prefix="mama-pg-"))
    root.chmod(0o755)
    try:
        server = pgserver.get_server(root / "data", cleanup_mode="delete")
    except Exception as exc:
        shutil.rmtree(root, ignore_errors=True)
        raise MamaError(f"pgserver could not start PostgreSQL here: {exc}") from exc
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
        """A fresh database (pgvector available in it); its name."""
        import psycopg

        name = f"team{next(_numbers)}"
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name}")
            conn.execute(f"CREATE DATABASE {name}")
        return name

    def stop(self) -> None:
        """Stop the server now (an outage: every connection drops, new ones are refused).

        ``fast``: clients are cut off at once, yet the server shuts down cleanly, so starting
        again needs no crash recovery (slow on a loaded machine).
        """
        self._pg_ctl(["-w", "-t", str(WAIT_S), "-m", "fast", "stop"])

    def start(self) -> None:
        """Start the stopped server again on the same socket; wait until it takes connections."""
        import psycopg
        from pgserver.utils import PostmasterInfo

        data = self.server.pgdata
        self._pg_ctl(
            ["-w", "-t", str(WAIT_S), "-o", '-h ""', "-o", f"-k {self.socket}",
             "-l", str(data / "log"), "start"]
        )  # fmt: skip
        self.server._postmaster_info = PostmasterInfo.read_from_pgdata(data)
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                psycopg.connect(self.url("postgres"), connect_timeout=5).close()
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def _pg_ctl(self, args: list[str]) -> None:
        from pgserver import _commands  # its commands are made when it is imported

        _commands.pg_ctl(  # type: ignore[attr-defined]
            args, pgdata=self.server.pgdata, user=self.server.system_user, timeout=WAIT_S + 30
        )

    def close(self) -> None:
        """Stop the server at once and delete its files."""
        self.stop()  # pgserver's own stop waits for every client to leave
        quiet = logging.getLogger("pgserver")
        quiet.disabled = True  # it would log the server it finds stopped as a failure
        try:
            self.server.cleanup()
        finally:
            quiet.disabled = False
        shutil.rmtree(self.root, ignore_errors=True)
