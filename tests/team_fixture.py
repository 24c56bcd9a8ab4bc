"""A real PostgreSQL with pgvector for the team-store tests (``benchmarks.pgcluster``).

One cluster per test module's session fixture, a fresh database per test; roles are
cluster-wide, so each test names its developers itself. ``two_developers`` sets up a team
database with alice and bob (each a MAMA home of their own) on the project ``app``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchmarks.pgcluster import Cluster, start_cluster
from mama_plugin.config import Config
from mama_plugin.errors import MamaError
from mama_plugin.relationships import REPLACING
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.storage import Store

__all__ = ["Cluster", "Developer", "pair", "running_cluster", "split_truth", "two_developers"]

_roles = itertools.count(1)


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


@dataclass
class Developer:
    """One developer: a MAMA home of their own, a local project, a database role."""

    name: str
    store: Store
    project: str
    url: str

    def decide(self, topic: str, decision: str, why: str, **more: object) -> str:
        return save_decision(
            self.store,
            self.project,
            {"topic": topic, "decision": decision, "reasoning": {"primary": why}, **more},
        ).memory.id

    def sync(self, **options: object) -> object:
        from mama_plugin.team.sync import sync_project

        return sync_project(self.store, self.project, **options)  # type: ignore[arg-type]


def two_developers(cluster: Cluster, tmp_path: Path) -> Iterator[dict[str, object]]:
    """A set-up team database with project ``app`` given to alice and bob (fresh roles); a
    fixture yields from it."""
    from mama_plugin.storage.team import outbox
    from mama_plugin.team import admin
    from mama_plugin.team.server_schema import SERVER_STEPS

    database = cluster.new_database()
    owner = cluster.url(database)
    assert admin.setup(owner) == [s.name for s in SERVER_STEPS]
    n = next(_roles)
    devs = {}
    for who in ("alice", "bob"):
        role = f"{who}{n}"
        admin.grant(owner, role, "app")
        store = Store.open(config=Config(tmp_path / who))
        dev = Developer(who, store, f"/work/{who}/app", cluster.url(database, role))
        outbox.connect_project(store, dev.project, "app", dev.url)
        devs[who] = dev
    yield {"owner": owner, "database": database, "n": n, **devs}
    for dev in devs.values():
        dev.store.close()


def pair(team: dict[str, object]) -> tuple[Developer, Developer]:
    alice, bob = team["alice"], team["bob"]
    assert isinstance(alice, Developer) and isinstance(bob, Developer)
    return alice, bob


def split_truth(store: Store) -> dict[str, list[str]]:
    """The store's two halves of a supersede that disagree: a decision a replacing link points
    at that is still current, and one superseded that no replacing link points at."""
    marks = ",".join("?" * len(REPLACING))
    replaced = (
        f"EXISTS (SELECT 1 FROM memory_links l WHERE l.to_id = m.id "
        f"AND l.relationship IN ({marks}))"
    )
    kinds = sorted(REPLACING)
    found = {
        "replaced but current": f"SELECT id FROM memories m WHERE status = 'current' AND {replaced}",
        "superseded without successor": (
            f"SELECT id FROM memories m WHERE status = 'superseded' AND NOT {replaced}"
        ),
    }
    return {
        name: [str(r[0]) for r in store.conn.execute(sql, kinds)]
        for name, sql in found.items()
        if store.conn.execute(sql, kinds).fetchall()
    }
