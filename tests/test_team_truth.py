"""A teammate's supersede never splits the truth here: the replacing link and the replaced
decision's status change together, through the one path a local supersede takes, or a
conflict is recorded; never one half of it (against a real PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from team_fixture import Cluster, pair, running_cluster, split_truth, two_developers

from mama_plugin.errors import TeamError
from mama_plugin.storage.team import conflicts
from mama_plugin.team.joining import resolve

psycopg = pytest.importorskip("psycopg", reason="the team store's driver: pip install -e '.[team]'")


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    yield from running_cluster()


@pytest.fixture
def team(cluster: Cluster, tmp_path: Path) -> Iterator[dict[str, object]]:
    yield from two_developers(cluster, tmp_path)


def test_a_teammates_supersede_of_my_decision_edited_here_replaces_it_here_too(
    team: dict[str, object],
) -> None:
    alice, bob = pair(team)
    mine = alice.decide("auth", "Use JWT", "stateless")
    alice.sync()
    bob.sync()
    theirs = bob.decide("auth", "Use opaque tokens", "revocation", supersedes=mine)
    bob.sync()
    alice.store.memories.update(mine, content="Use JWT, 15 minute expiry")  # not yet pushed
    alice.sync()
    # Before: the link arrived, the decision stayed current (1 replaced decision still current).
    assert split_truth(alice.store) == {}
    assert alice.store.memories.require(mine).status == "superseded"
    assert alice.store.links.exists(theirs, mine, "supersedes")
    # Alice's edit still waits beside Bob's version: a conflict, settled by a person.
    [open_one] = conflicts.open_conflicts(alice.store)
    assert open_one.memory_id == mine


def test_a_teammates_supersede_whose_successor_never_arrives_is_a_conflict(
    team: dict[str, object],
) -> None:
    alice, bob = pair(team)
    mine = alice.decide("cache", "Redis for sessions", "fast")
    alice.sync()
    bob.sync()
    with psycopg.connect(str(team["owner"])) as conn:  # a teammate's MAMA says so, nothing more
        body = conn.execute("SELECT body FROM mama.memories WHERE id = %s", (mine,)).fetchone()[0]
        body = {**body, "status": "superseded", "outcome_status": "SUPERSEDED"}
        conn.execute(
            "UPDATE mama.memories SET body = %s, status = 'superseded', version = 2, "
            "digest = 'x', seq = nextval('mama.change_seq') WHERE id = %s",
            (psycopg.types.json.Jsonb(body), mine),
        )
        conn.execute(
            "INSERT INTO mama.links(project, from_id, to_id, relationship, body, seq) VALUES "
            "('app', 'dec_elsewhere', %s, 'supersedes', %s, nextval('mama.change_seq'))",
            (mine, psycopg.types.json.Jsonb({"reason": "moved to memcached"})),
        )
    pulled = bob.sync()
    assert pulled.error == "", pulled
    # Before: superseded by the row's word, and no successor here (1 superseded without one).
    assert split_truth(bob.store) == {}
    assert bob.store.memories.require(mine).status == "current"
    [contested] = conflicts.open_conflicts(bob.store)
    assert contested.memory_id == mine
    assert contested.theirs is not None
    assert contested.theirs["replaced_by"]["id"] == "dec_elsewhere"
    with pytest.raises(TeamError, match="dec_elsewhere"):  # its successor is not here
        resolve(bob.store, mine, "theirs")
    resolve(bob.store, mine, "mine")
    assert conflicts.open_conflicts(bob.store) == [] and split_truth(bob.store) == {}
    settled = bob.sync()  # Bob's standing version goes back over the half-said one
    assert settled.error == "" and settled.conflicts == 0 and settled.pushed_memories == 1


def test_a_teammates_supersede_of_a_decision_replaced_here_already_is_a_conflict(
    team: dict[str, object],
) -> None:
    alice, bob = pair(team)
    mine = alice.decide("queue", "Use SQS", "managed")
    alice.sync()
    bob.sync()
    bobs = bob.decide("queue", "Use Kafka", "replay", supersedes=mine)
    bob.sync()
    alices = alice.decide("queue", "Use SQS FIFO", "ordering", supersedes=mine)
    alice.sync()
    assert split_truth(alice.store) == {}
    # Before: both links stood, two current answers to one question, and no conflict saying so.
    assert not alice.store.links.exists(bobs, mine, "supersedes")
    assert alice.store.links.exists(alices, mine, "supersedes")
    [contested] = conflicts.open_conflicts(alice.store)
    assert contested.memory_id == mine
    assert contested.theirs is not None and contested.theirs["replaced_by"]["id"] == bobs
    with pytest.raises(TeamError, match="replaced here already"):
        resolve(alice.store, mine, "theirs")


def test_a_teammate_taking_back_a_supersede_makes_the_decision_current_here(
    team: dict[str, object],
) -> None:
    alice, bob = pair(team)
    mine = alice.decide("ci", "GitHub Actions", "already used")
    alice.sync()
    bob.sync()
    theirs = bob.decide("ci", "Buildkite", "faster", supersedes=mine)
    bob.sync()
    alice.sync()
    assert alice.store.memories.require(mine).status == "superseded"
    with psycopg.connect(str(team["owner"])) as conn:  # the link withdrawn, the memory kept
        conn.execute(
            "UPDATE mama.links SET deleted = true, seq = nextval('mama.change_seq') "
            "WHERE from_id = %s AND to_id = %s",
            (theirs, mine),
        )
    alice.sync()
    # Before: the link went, the decision stayed superseded by nothing.
    assert split_truth(alice.store) == {}
    assert alice.store.memories.require(mine).status == "current"
