"""``mama team …`` end to end: the owner sets up and grants, two developers connect, sync,
search, see a conflict and settle it; an unreachable database is one clear line."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from team_fixture import Cluster, running_cluster

from mama_plugin.cli import main
from mama_plugin.config import Config
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.storage import Store

_runs = itertools.count(1)


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    yield from running_cluster()


def mama(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_team_sets_up_shares_and_settles_through_the_cli(
    cluster: Cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = cluster.new_database()
    owner = cluster.url(database)
    n = next(_runs)
    alice, bob = f"cli_alice{n}", f"cli_bob{n}"
    assert mama(capsys, "team", "setup", owner)[:2] == (
        0,
        "applied tables, audit, access, audit_every_change, erasure\n",
    )
    assert mama(capsys, "team", "setup", owner)[1] == "the schema is up to date\n"
    code, out, _ = mama(capsys, "team", "grant", owner, alice, "shop")
    assert (code, out) == (0, f"{alice} may read and write 'shop' (new role and project)\n")
    assert mama(capsys, "team", "grant", owner, bob, "shop")[0] == 0

    dev = {}
    for who in (alice, bob):
        folder = tmp_path / who / "shop"
        folder.mkdir(parents=True)
        db = str(tmp_path / who / "mama.db")
        dev[who] = ("--db", db, "team")
        code, out, err = mama(capsys, "--db", db, "team", "connect", cluster.url(database, who),
                              "--project", str(folder))  # fmt: skip
        assert code == 0, err
        assert f"to team project 'shop' as role {who}" in out
    with Store.open(str(tmp_path / alice / "mama.db"), config=Config(tmp_path / "h")) as store:
        decision = save_decision(
            store,
            str(tmp_path / alice / "shop"),
            {
                "topic": "payments",
                "decision": "Stripe for payments",
                "reasoning": {"primary": "EU cards"},
            },
        ).memory.id

    project = ("--project", str(tmp_path / alice / "shop"))
    code, out, _ = mama(capsys, *dev[alice], "status", *project)
    assert "outbox     1 memories, 0 links waiting" in out and "last sync  never" in out
    code, out, _ = mama(capsys, *dev[alice], "sync", *project)
    assert code == 0 and out.startswith("shop: pushed 1 memories, 0 links; pulled nothing new")
    bob_project = ("--project", str(tmp_path / bob / "shop"))
    code, out, _ = mama(capsys, *dev[bob], "sync", *bob_project)
    assert code == 0 and "pulled 1 inserted" in out

    code, out, _ = mama(
        capsys, *dev[bob], "search", "payments stripe", "--keyword-only", *bob_project
    )
    assert code == 0 and f"[current] {decision} (decision, shop, by {alice})" in out
    assert "payments: Stripe for payments" in out

    # Both change it; Bob's sync shows the conflict, status shows both sides.
    for who, text in ((alice, "Stripe, with Adyen as fallback"), (bob, "Mollie for payments")):
        with Store.open(str(tmp_path / who / "mama.db"), config=Config(tmp_path / "h")) as store:
            store.memories.update(decision, content=text)
    assert mama(capsys, *dev[alice], "sync", *project)[0] == 0
    code, out, _ = mama(capsys, *dev[bob], "sync", *bob_project)
    assert code == 0 and "1 conflict(s) — see `mama team status`" in out
    code, out, _ = mama(capsys, *dev[bob], "status", *bob_project)
    assert f"conflict   {decision}: changed here and by {alice}" in out
    assert "yours    Mollie for payments" in out
    assert "theirs   Stripe, with Adyen as fallback (server version 2)" in out
    code, out, _ = mama(capsys, *dev[bob], "resolve", decision, "--keep", "theirs")
    assert out == f"{decision}: kept theirs\n"
    code, out, _ = mama(capsys, *dev[bob], "status", *bob_project)
    assert "conflict" not in out

    code, out, _ = mama(capsys, *dev[bob], "audit", *bob_project)
    assert code == 0 and f"{alice:<12} conflict" not in out and "conflict memory" in out
    assert f"{alice:<12} insert   memory {decision} v1" in out


def test_an_unreachable_database_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"postgresql://nobody@/nowhere?host={tmp_path}"
    code, out, err = mama(capsys, "--db", str(tmp_path / "m.db"), "team", "connect", url)
    assert code == 1 and out == ""
    assert err.startswith("mama: error: cannot reach the team database nowhere on")
    assert "Traceback" not in err
    code, _, err = mama(capsys, "team", "connect", "mysql://x/y")
    assert code == 1 and "is not a PostgreSQL URL" in err
    code, _, err = mama(capsys, "--db", str(tmp_path / "m.db"), "team", "sync")
    assert code == 1 and "is not connected to a team database" in err


def test_revoke_and_disconnect_say_what_they_did(
    cluster: Cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = cluster.new_database()
    owner = cluster.url(database)
    role = f"cli_erin{next(_runs)}"
    mama(capsys, "team", "setup", owner)
    mama(capsys, "team", "grant", owner, role, "shop")
    folder = tmp_path / "shop"
    folder.mkdir()
    db = ("--db", str(tmp_path / "mama.db"))
    url = cluster.url(database, role)
    assert mama(capsys, *db, "team", "connect", url, "--project", str(folder))[0] == 0
    assert (
        mama(capsys, "team", "revoke", owner, role, "shop")[1] == f"{role} no longer reads 'shop'\n"
    )
    assert mama(capsys, "team", "revoke", owner, role, "shop")[1] == f"{role} did not have 'shop'\n"
    code, _, err = mama(capsys, *db, "team", "sync", "--project", str(folder))
    assert code == 1 and f"role {role} was not given the team project 'shop'" in err
    code, out, _ = mama(capsys, *db, "team", "status", "--project", str(folder))
    assert f"stopped    role {role} was not given the team project 'shop'" in out
    code, out, _ = mama(capsys, *db, "team", "disconnect", "--project", str(folder))
    assert code == 0 and out.endswith("0 unsent outbox entries dropped\n")
    assert "no project is connected" in mama(capsys, *db, "team", "status")[1]
