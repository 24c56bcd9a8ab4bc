"""Links carry extra tags: saved with a link or by the link tool, shown with the link,
filtered by ``mama links --tag``, exported and imported; words and tags are redacted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mama_plugin.cli import main
from mama_plugin.config import Config
from mama_plugin.errors import LegacyImportError, ValidationError
from mama_plugin.schema import InsightInput, LoadContextInput, parse
from mama_plugin.schema.graph import FindLinksInput
from mama_plugin.schema.links import LinkMemoriesInput
from mama_plugin.server.base import Env
from mama_plugin.server.graph_tools import do_find_links
from mama_plugin.server.link_tools import do_link_memories
from mama_plugin.server.tools import do_load_context, do_save_insight
from mama_plugin.services.hygiene.forgetting import redact
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.storage import Store
from mama_plugin.storage.link_tags import LinkTags
from mama_plugin.storage.relationship_words import RelationshipWords
from mama_plugin.transfer.dump import export_data, import_dump

PROJECT = "/work/tags"


def _two(store: Store) -> tuple[str, str]:
    a = save_decision(
        store, PROJECT, {"topic": "cache", "decision": "Use Redis", "reasoning": "p99 307 ms"}
    ).memory.id
    b = save_decision(
        store, PROJECT, {"topic": "queue", "decision": "Use NATS", "reasoning": "fan-out 10k/s"}
    ).memory.id
    return a, b


def _env(store: Store) -> Env:
    return Env(store, PROJECT, None, config=Config())


def test_a_save_s_link_carries_its_tags_and_its_answer_shows_them(store: Store) -> None:
    a, _ = _two(store)
    args = parse(
        InsightInput,
        {
            "content": "Redis eviction needs a TTL on every key",
            "links": [
                {"to_id": a, "relationship": "refines", "reason": "TTLs bound memory",
                 "tags": ["perf", " perf ", "ops"]}
            ],
        },
    )  # fmt: skip
    answer = do_save_insight(_env(store), args)
    [link] = answer.data["links"]
    assert link["tags"] == ["ops", "perf"]  # trimmed, each once, sorted
    [stored] = store.links.of(answer.data["id"], direction="out")
    assert LinkTags(store).of([stored.id]) == {stored.id: ("ops", "perf")}


def test_the_link_tool_links_two_memories_with_tags_and_shows_them(store: Store) -> None:
    a, b = _two(store)
    args = parse(
        LinkMemoriesInput,
        {"from_id": b, "to_id": a, "relationship": "depends on", "reason": "NATS acks use Redis",
         "tags": ["infra"]},
    )  # fmt: skip
    answer = do_link_memories(_env(store), args)
    assert f"Linked {b} --depends_on--> {a}" in answer.text and "[tags: infra]" in answer.text
    assert answer.data["links"][0]["tags"] == ["infra"]
    found = do_find_links(_env(store), FindLinksInput(relationship="depends_on"))
    assert "[tags: infra]" in found.text and found.data["links"][0]["tags"] == ["infra"]
    told = do_load_context(_env(store), LoadContextInput(memory_id=a))
    assert "depends_on" in told.text and "[tags: infra]" in told.text
    assert told.data["neighbours"][0]["tags"] == ["infra"]
    with pytest.raises(ValidationError, match="looks like a secret"):
        do_link_memories(
            _env(store),
            parse(
                LinkMemoriesInput,
                {"from_id": a, "to_id": b, "relationship": "relates_to", "reason": "r",
                 "tags": ["ghp_" + "a" * 36]},
            ),
        )  # fmt: skip
    assert len(store.links.of(a, direction="out")) == 0  # nothing written
    with pytest.raises(ValidationError, match="to_id and relationship together"):
        parse(LinkMemoriesInput, {"from_id": a, "to_id": b, "reason": "r"})
    store.memories.delete(b)  # its links go, and their tags with them
    assert store.conn.execute("SELECT count(*) FROM link_tags").fetchall()[0][0] == 0


def test_mama_links_filters_by_tag(
    store: Store, mama_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = _two(store)
    link, _ = store.links.add(b, a, "depends_on", "acks")
    LinkTags(store).add(link.id, ["infra", "review"])
    other, _ = store.links.add(a, b, "relates_to", "both are transports")
    LinkTags(store).add(other.id, ["docs"])
    assert main(["--db", str(store.path), "links", "--tag", "infra", "--project", PROJECT]) == 0
    out = capsys.readouterr().out
    assert f"#{link.id} {b} --depends_on--> {a}" in out and "[tags: infra, review]" in out
    assert "relates_to" not in out
    assert main(["--db", str(store.path), "links", "--tag", "infra", "--project", PROJECT,
                 "--json"]) == 0  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert data["tag"] == "infra" and [ln["id"] for ln in data["links"]] == [link.id]
    assert main(["--db", str(store.path), "links", "--relationship", "relates_to", "--project",
                 PROJECT, "--no-model"]) == 0  # fmt: skip
    assert "[tags: docs]" in capsys.readouterr().out


def test_tags_and_relationship_words_travel_through_export(store: Store, tmp_path: Path) -> None:
    a, b = _two(store)
    link, _ = store.links.add(b, a, "motivated_by", "acks")
    LinkTags(store).add(link.id, ["infra"])
    RelationshipWords(store).merge("motivated_by", "inspired_by")  # a person's merge
    dump = export_data(store, project=PROJECT)
    assert dump["links"][0]["tags"] == ["infra"]
    assert [w["relationship"] for w in dump["relationship_words"]] == [
        "inspired_by",
        "motivated_by",
    ]
    with Store.open(tmp_path / "fresh.db", config=Config()) as fresh:
        result = import_dump(fresh, json.loads(json.dumps(dump)))
        assert result.counts["relationship_words"] == {"source": 2, "imported": 2}
        words = RelationshipWords(fresh).all()
        assert words["motivated_by"].canonical == "inspired_by"
        assert words["motivated_by"].decided_by == "user"
        [again] = list(fresh.links.iter())
        assert LinkTags(fresh).of([again.id]) == {again.id: ("infra",)}
        # A second import finds everything there: the words stay as the store records them.
        RelationshipWords(fresh).merge("motivated_by", "relates_to")
        result = import_dump(fresh, json.loads(json.dumps(dump)))
        assert result.counts["relationship_words"] == {"source": 2, "already_present": 2}
        assert RelationshipWords(fresh).all()["motivated_by"].canonical == "relates_to"
    bad = dict(dump, relationship_words=[dump["relationship_words"][0] | {"relationship": "A b"}])
    with (
        Store.open(tmp_path / "bad.db", config=Config()) as other,
        pytest.raises(LegacyImportError, match=r"relationship_words\[0\]: .*not a normalised"),
    ):
        import_dump(other, bad)


SECRET = "Quixotrellis"


def test_redact_masks_relationship_words_usage_and_tags(store: Store, mama_home: Path) -> None:
    a, b = _two(store)
    word = f"{SECRET.lower()}_integration_of"
    link, _ = store.links.add(b, a, word, "the vendor's hook")
    LinkTags(store).add(link.id, [f"{SECRET}-contract", "infra"])
    store.links.add(a, b, "redacted_integration_of", "already masked once")
    RelationshipWords(store).merge(word, f"{SECRET.lower()}_link")
    store.suggestions.add(PROJECT, a, b, word, "proposed", judged_by="rules", sources=["x"])

    done = redact(store, Config(mama_home), SECRET.upper())

    assert done.rows["memory_links.relationship"] == 1
    assert done.rows["relationship_usage"] == 1 and done.rows["link_tags"] == 1
    assert done.rows["relationship_words"] >= 2 and done.rows["link_suggestions.relationship"] == 1
    [masked] = store.links.of(b, direction="out")
    assert masked.relationship == "redacted_integration_of"
    assert LinkTags(store).of([masked.id])[masked.id] == ("[REDACTED]-contract", "infra")
    usage = {w: n for w, _, n in store.links.usage()}
    assert usage["redacted_integration_of"] == 2 and word not in usage  # merged, counted once each
    words = RelationshipWords(store).all()
    assert words["redacted_integration_of"].canonical == "redacted_link"
    assert all(SECRET.lower() not in w + r.canonical for w, r in words.items())
    assert [s.relationship for s in store.suggestions.iter()] == ["redacted_integration_of"]
    raw = b"".join(p.read_bytes() for p in store.path.parent.glob(f"{store.path.name}*"))
    assert SECRET.lower().encode() not in raw.lower()
