"""The team store against a real PostgreSQL + pgvector: two developers (two MAMA homes)
exchange decisions, an outage mid-sync loses nothing, a conflicting edit is shown, a developer
without access is refused."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from team_fixture import Cluster, start_cluster

from mama_plugin.config import Config
from mama_plugin.services.memories import save_decision
from mama_plugin.storage import Store
from mama_plugin.team import admin, local
from mama_plugin.team.sync import sync_project

psycopg = pytest.importorskip("psycopg", reason="the team store's driver: pip install -e '.[team]'")
pytest.importorskip("pgserver", reason="PostgreSQL for the tests: pip install -e '.[team]'")

_roles = itertools.count(1)


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    try:
        started = start_cluster()
    except RuntimeError as exc:
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

    def decide(self, topic: str, decision: str, why: str) -> str:
        return save_decision(
            self.store,
            self.project,
            {"topic": topic, "decision": decision, "reasoning": {"primary": why}},
        ).memory.id

    def sync(self, **options: object) -> object:
        return sync_project(self.store, self.project, **options)  # type: ignore[arg-type]


@pytest.fixture
def team(cluster: Cluster, tmp_path: Path) -> Iterator[dict[str, object]]:
    """A set-up team database with project ``app`` given to alice and bob (fresh roles)."""
    database = cluster.new_database()
    owner = cluster.url(database)
    assert admin.setup(owner) == ["tables", "audit", "access"]
    n = next(_roles)
    devs = {}
    for who in ("alice", "bob"):
        role = f"{who}{n}"
        admin.grant(owner, role, "app")
        store = Store.open(config=Config(tmp_path / who))
        dev = Developer(who, store, f"/work/{who}/app", cluster.url(database, role))
        local.connect_project(store, dev.project, "app", dev.url)
        devs[who] = dev
    yield {"owner": owner, "database": database, "n": n, **devs}
    for dev in devs.values():
        dev.store.close()


def test_two_developers_exchange_decisions(team: dict[str, object]) -> None:
    alice, bob = team["alice"], team["bob"]
    assert isinstance(alice, Developer) and isinstance(bob, Developer)
    first = alice.decide("auth", "Use JWT with refresh tokens", "sessions hit the DB")
    second = alice.decide("cache", "Redis for sessions", "p99 307 ms at 10K req/s")
    report = alice.sync()
    assert report.error == "" and report.pushed_memories == 2, report
    assert local.outbox_count(alice.store, alice.project) == {"memory": 0, "link": 0}

    pulled = bob.sync()
    assert pulled.error == "" and pulled.pulled == {"inserted": 2}, pulled
    got = bob.store.memories.require(first)
    assert got.project == bob.project and got.content == "Use JWT with refresh tokens"
    assert got.reasoning["primary"] == "sessions hit the DB"
    assert bob.store.memories.require(second).topic == "cache"
    # Applying a teammate's change queues nothing back.
    assert local.outbox_count(bob.store, bob.project) == {"memory": 0, "link": 0}

    # Bob's answer travels back, its link with it.
    third = save_decision(
        bob.store,
        bob.project,
        {
            "topic": "auth",
            "decision": "Use opaque tokens",
            "reasoning": {"primary": "JWT revocation was too slow"},
            "supersedes": first,
        },
    ).memory.id
    assert bob.sync().pushed_memories == 2  # the new decision and the one it superseded
    back = alice.sync()
    assert back.error == "", back
    assert alice.store.memories.require(third).content == "Use opaque tokens"
    assert alice.store.memories.require(first).status == "superseded"
    assert alice.store.links.exists(third, first, "supersedes")
    # A second pass moves nothing.
    again = alice.sync()
    assert again.pushed_memories == 0 and again.pulled == {}, again
