"""The team database keeps its own record and lets nothing stay that was taken back: every
change audited by the database itself under the role that made it, a forget or a redaction
reaching every row of the team schema, a NUL never blocking the push, no built-in role given
a project (against a real PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from team_fixture import Cluster, pair, running_cluster, two_developers

from mama_plugin.errors import TeamError
from mama_plugin.storage.team import outbox
from mama_plugin.team import admin
from mama_plugin.team.search import search

psycopg = pytest.importorskip("psycopg", reason="the team store's driver: pip install -e '.[team]'")


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    yield from running_cluster()


@pytest.fixture
def team(cluster: Cluster, tmp_path: Path) -> Iterator[dict[str, object]]:
    yield from two_developers(cluster, tmp_path)


def _audit_rows(team: dict[str, object]) -> list[tuple[object, ...]]:
    with psycopg.connect(str(team["owner"])) as conn:
        return conn.execute("SELECT actor, kind, key, op FROM mama.audit ORDER BY id").fetchall()


def test_every_change_is_audited_by_the_database_under_the_role_that_made_it(
    team: dict[str, object],
) -> None:
    alice, bob = pair(team)
    n = team["n"]
    decision = alice.decide("logs", "Ship logs to Loki", "cheap")
    alice.sync()
    before = len(_audit_rows(team))
    with psycopg.connect(bob.url) as conn:  # the version kept, the author faked
        conn.execute(
            "UPDATE mama.memories SET content = 'Ship logs to Splunk', changed_by = 'carol' "
            "WHERE id = %s",
            (decision,),
        )
    rows = _audit_rows(team)
    # Before: 0 audit rows for the edit, and team search said "changed by carol".
    assert rows[before:] == [(f"bob{n}", "memory", decision, "update")]
    [hit] = search(alice.url, "Splunk")
    assert hit.changed_by == f"bob{n}"
    with psycopg.connect(str(team["owner"])) as conn:  # even the owner's delete is recorded
        conn.execute("DELETE FROM mama.links")
        conn.execute("DELETE FROM mama.memories WHERE id = %s", (decision,))
    assert _audit_rows(team)[-1][1:] == ("memory", decision, "erase")


def _team_text(team: dict[str, object], needle: str) -> list[str]:
    """Every table and column of the team schema where ``needle`` still is."""
    found = []
    with psycopg.connect(str(team["owner"])) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'mama' "
            "AND table_type = 'BASE TABLE'"
        ).fetchall()
        for (table,) in tables:
            hits = conn.execute(
                f"SELECT count(*) FROM mama.{table} t WHERE t::text ILIKE %s", (f"%{needle}%",)
            ).fetchone()
            if hits[0]:
                found.append(table)
    return found


def test_a_forget_reaches_every_row_of_the_team_database(team: dict[str, object]) -> None:
    from mama_plugin.config import Config
    from mama_plugin.services.hygiene.forgetting import forget
    from mama_plugin.team.erasure import reach

    alice, bob = pair(team)
    old = alice.decide("db", "Use the hunter2 cluster", "the old password scheme")
    new = alice.decide("db", "Use Postgres", "hunter2 leaked", supersedes=old)
    alice.sync()
    bob.sync()
    forget(alice.store, Config(alice.store.home), new)
    assert alice.sync().error == ""  # the tombstone, as the server's follower pushes it
    # Before: the link's reason ("hunter2 leaked") stayed in mama.links.
    assert _team_text(team, "hunter2 leaked") == []
    told = reach(alice.store, [alice.project])  # `mama forget`: at once, and it says so
    assert told == ["team app: the tombstone is pushed, with its links' text gone there"]
    assert bob.sync().error == ""
    assert bob.store.memories.get(new) is None


def test_a_redaction_reaches_every_row_of_the_team_database(team: dict[str, object]) -> None:
    from mama_plugin.config import Config
    from mama_plugin.services.hygiene.forgetting import redact
    from mama_plugin.team.erasure import reach

    alice, bob = pair(team)
    first = alice.decide("ci", "Deploy with token tok_live_9Q2", "the CI needs it")
    alice.decide(
        "ci",
        "Rotate deploy keys",
        "monthly",
        links=[{"to_id": first, "relationship": "refines", "reason": "tok_live_9Q2 was shared"}],
    )
    alice.sync()
    bob.sync()
    redact(alice.store, Config(alice.store.home), "tok_live_9Q2")
    reach(alice.store, [alice.project], pattern="tok_live_9Q2")
    # Before: the link's reason kept it in mama.links (and bob's copy of it).
    assert _team_text(team, "tok_live_9Q2") == []
    assert bob.sync().error == ""
    held = bob.store.conn.execute(
        "SELECT count(*) FROM memory_links WHERE reason LIKE '%tok_live_9Q2%'"
    ).fetchall()
    assert held == [(0,)]
    assert "tok_live_9Q2" not in bob.store.memories.require(first).content


def test_a_nul_in_a_memory_never_blocks_the_push(team: dict[str, object]) -> None:
    alice, bob = pair(team)
    bad = alice.decide("parser", "Split on \x00 bytes", "the wire format")
    after = alice.decide("parser", "Fuzz the parser", "found two crashes")
    report = alice.sync()
    # Before: the team database refused the batch; it and everything after stayed queued.
    assert report.error == "", report
    assert outbox.outbox_count(alice.store, alice.project) == {"memory": 0, "link": 0}
    assert bob.sync().error == ""
    assert bob.store.memories.require(after).content == "Fuzz the parser"
    assert "\x00" not in bob.store.memories.require(bad).content


def test_one_row_the_database_refuses_is_set_aside_and_the_rows_behind_it_go(
    team: dict[str, object],
) -> None:
    alice, bob = pair(team)
    stuck = alice.decide("api", "REST", "browsers")
    behind = alice.decide("api", "gRPC inside", "speed")
    with psycopg.connect(str(team["owner"])) as conn:  # e.g. a newer MAMA's rule there
        conn.execute("ALTER TABLE mama.memories ADD CONSTRAINT no_rest CHECK (content <> 'REST')")
    report = alice.sync()
    assert report.error == "" and report.pushed_memories == 1, report
    assert bob.sync().error == "" and bob.store.memories.get(behind) is not None
    [aside] = outbox.aside(alice.store, alice.project)
    assert aside.key == stuck and "no_rest" in aside.error
    assert outbox.outbox_count(alice.store, alice.project) == {"memory": 0, "link": 0}


@pytest.mark.parametrize("role", ["pg_read_all_data", "pg_write_server_files", "postgres"])
def test_a_built_in_or_superuser_role_is_never_given_a_project(
    team: dict[str, object], role: str
) -> None:
    owner = str(team["owner"])
    with psycopg.connect(owner) as conn:
        superuser = conn.execute("SELECT current_user").fetchone()[0]
    name = superuser if role == "postgres" else role
    # Before: granted, and pg_read_all_data read every project of every team.
    with pytest.raises(TeamError, match="developer's own role"):
        admin.grant(owner, name, "app")
    with psycopg.connect(owner) as conn:
        assert conn.execute(
            "SELECT count(*) FROM mama.members WHERE member = %s", (name,)
        ).fetchone() == (0,)


def test_a_team_database_set_up_before_climbs_to_the_audit_and_erasure_steps(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mama_plugin.team import server_schema

    owner = cluster.url(cluster.new_database())
    with monkeypatch.context() as old:
        old.setattr(server_schema, "SERVER_STEPS", server_schema.SERVER_STEPS[:3])
        assert admin.setup(owner) == ["tables", "audit", "access"]
    assert admin.setup(owner) == ["audit_every_change", "erasure"]
    with psycopg.connect(owner) as conn:
        conn.execute("INSERT INTO mama.projects(name) VALUES ('old')")
        conn.execute(
            "INSERT INTO mama.memories(id, project, type, body, version, digest, seq, "
            "changed_by) VALUES ('dec_1', 'old', 'decision', '{}', 1, '', 1, 'carol')"
        )
        row = conn.execute("SELECT changed_by, session_user FROM mama.memories").fetchone()
        assert row[0] == row[1]  # stamped by the database, not the client
        assert conn.execute("SELECT op FROM mama.audit WHERE key = 'dec_1'").fetchall() == [
            ("insert",)
        ]
