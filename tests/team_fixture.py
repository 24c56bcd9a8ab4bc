"""A real PostgreSQL with pgvector for the team-store tests (``benchmarks.pgcluster``).

One cluster per test module's session fixture, a fresh database per test; roles are
cluster-wide, so each test names its developers itself.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from benchmarks.pgcluster import Cluster, start_cluster
from mama_plugin.errors import MamaError

__all__ = ["Cluster", "running_cluster"]


def running_cluster() -> Iterator[Cluster]:
    """PostgreSQL for a module's team tests (a session fixture yields from it); they skip,
    saying why, where it cannot run."""
    pytest.importorskip("psycopg", reason="the team store's driver: pip install -e '.[team]'")
    pytest.importorskip("pgserver", reason="PostgreSQL for the tests: pip install -e '.[team]'")
    try:
        started = start_cluster()
    except MamaError as exc:
        pytest.skip(str(exc))
    yield started
    started.close()
