"""A teammate's supersede read from ``.mama/`` never splits the truth here: the replacing link
and the replaced decision's status are taken together, or the file waits as a conflict."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from team_fixture import split_truth

from mama_plugin.config import Config
from mama_plugin.errors import MamaError
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.share.sync import Sharing
from mama_plugin.storage import Store
from mama_plugin.storage.shared_files import SharedFiles


class Clone:
    """One developer's checkout and MAMA home."""

    def __init__(self, root: Path, home: Path) -> None:
        root.mkdir(parents=True)
        self.root, self.config = root, Config(home)
        self.store = Store.open(config=self.config)
        self.project = str(root)

    def decide(self, topic: str, decision: str, **more: object) -> str:
        return save_decision(
            self.store,
            self.project,
            {"topic": topic, "decision": decision, "reasoning": {"primary": "why"}, **more},
        ).memory.id

    def sharing(self) -> Sharing:
        return Sharing(self.store, self.config, self.project, self.root)

    def take(self, other: Clone, *names: str) -> None:
        """Copy ``other``'s .mama/ files here (all, or those whose name holds one of names)."""
        for path in (other.root / ".mama").rglob("*.md"):
            if names and not any(n in path.name for n in names):
                continue
            to = self.root / path.relative_to(other.root)
            to.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, to)


@pytest.fixture
def clones(tmp_path: Path) -> Iterator[tuple[Clone, Clone]]:
    alice, bob = Clone(tmp_path / "a", tmp_path / "ha"), Clone(tmp_path / "b", tmp_path / "hb")
    yield alice, bob
    alice.store.close()
    bob.store.close()


def test_a_supersede_whose_target_file_did_not_come_replaces_my_decision_here(
    clones: tuple[Clone, Clone],
) -> None:
    alice, bob = clones
    mine = bob.decide("auth", "Use JWT")
    bob.sharing().share()
    alice.take(bob)
    alice.sharing().import_files()
    theirs = alice.decide("auth", "Use opaque tokens", supersedes=mine)
    alice.sharing().share()
    bob.take(alice, theirs)  # only the new decision's file is committed
    report = bob.sharing().import_files()
    assert report.imported == [theirs], report
    # Before: the link was added, the decision stayed current (1 replaced decision current).
    assert split_truth(bob.store) == {}
    assert bob.store.memories.require(mine).status == "superseded"


def test_a_supersede_of_my_decision_edited_here_replaces_it_and_keeps_the_edit_conflict(
    clones: tuple[Clone, Clone],
) -> None:
    alice, bob = clones
    mine = bob.decide("db", "Use Postgres")
    bob.sharing().share()
    alice.take(bob)
    alice.sharing().import_files()
    theirs = alice.decide("db", "Use CockroachDB", supersedes=mine)
    alice.sharing().share()
    bob.store.memories.update(mine, content="Use Postgres 16")  # changed here too
    bob.take(alice)
    report = bob.sharing().import_files()
    assert report.conflicts == [mine] and report.imported == [theirs], report
    assert split_truth(bob.store) == {}  # before: replaced but current
    assert bob.store.memories.require(mine).status == "superseded"
    assert bob.store.memories.require(mine).content == "Use Postgres 16"


def test_a_file_saying_superseded_with_nothing_replacing_it_waits_as_a_conflict(
    clones: tuple[Clone, Clone],
) -> None:
    alice, bob = clones
    mine = bob.decide("queue", "Use SQS")
    bob.sharing().share()
    alice.take(bob)
    alice.sharing().import_files()
    alice.decide("queue", "Use Kafka", supersedes=mine)
    alice.sharing().share()
    bob.take(alice, mine)  # the replaced decision's file alone
    report = bob.sharing().import_files()
    # Before: the status was taken alone (1 superseded decision without a successor).
    assert split_truth(bob.store) == {}
    assert bob.store.memories.require(mine).status == "current"
    assert report.conflicts == [mine] and "nothing here or in .mama/" in report.problems[0]
    with pytest.raises(MamaError, match=r"nothing here or in \.mama/ replaces it"):
        bob.sharing().resolve(mine, "theirs")
    bob.sharing().resolve(mine, "mine")
    assert SharedFiles(bob.store).conflicts(bob.project) == []


def test_a_supersede_of_a_decision_replaced_here_by_another_waits_as_a_conflict(
    clones: tuple[Clone, Clone],
) -> None:
    alice, bob = clones
    mine = bob.decide("ci", "GitHub Actions")
    bob.sharing().share()
    alice.take(bob)
    alice.sharing().import_files()
    theirs = alice.decide("ci", "Buildkite", supersedes=mine)
    alice.sharing().share()
    ours = bob.decide("ci", "GitLab CI", supersedes=mine)
    bob.take(alice, theirs)
    report = bob.sharing().import_files()
    assert split_truth(bob.store) == {}
    # Before: two links replaced one decision, two current answers, no conflict said so.
    assert not bob.store.links.exists(theirs, mine, "supersedes")
    assert bob.store.links.exists(ours, mine, "supersedes")
    assert report.conflicts == [theirs], report
