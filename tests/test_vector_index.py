"""The warm in-memory vector index agrees with sqlite-vec and follows every change."""

from __future__ import annotations

import random

import pytest

from mama_plugin.config import Config
from mama_plugin.services.saving.memories import save_insight
from mama_plugin.services.search import vector_index
from mama_plugin.storage import Store
from mama_plugin.storage import vectors as vec


@pytest.fixture(autouse=True)
def copied(monkeypatch: pytest.MonkeyPatch) -> None:
    """These stores are small: without this, sqlite-vec would answer and no copy be made."""
    monkeypatch.setattr(vector_index, "DIRECT_UP_TO", 0)


def _unit(rng: random.Random, dim: int = 16) -> list[float]:
    v = [rng.gauss(0, 1) for _ in range(dim)]
    norm = sum(x * x for x in v) ** 0.5
    return [x / norm for x in v]


def _fill(store: Store, project: str, n: int, rng: random.Random) -> list[int]:
    seqs = [save_insight(store, project, {"content": f"memory {i}"}).memory.seq for i in range(n)]
    store.vectors.reset("test-model", 16) if store.vectors.recorded_model()[0] is None else None
    store.vectors.put([(seq, _unit(rng)) for seq in vec_pending(store)])
    return seqs


def vec_pending(store: Store) -> list[int]:
    return [seq for seq, _ in store.vectors.pending(10_000)]


def test_agrees_with_sqlite_vec(store: Store) -> None:
    rng = random.Random(1)
    _fill(store, "/a", 40, rng)
    _fill(store, "/b", 30, rng)
    query = _unit(rng)
    for project in ("/a", "/b", None):
        ours = vector_index.knn(store, query, 10, project=project)
        theirs = store.vectors.knn(query, 10, project=project)
        assert [s for s, _ in ours] == [s for s, _ in theirs]
        assert [d for _, d in ours] == pytest.approx([d for _, d in theirs], abs=1e-5)


def test_new_vectors_are_seen_without_a_full_reload(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(2)
    _fill(store, "/a", 5, rng)
    assert vector_index.has_vectors(store) and vector_index.load(store) == 5  # the first copy
    loads: list[int] = []
    real = vec.Vectors.load
    monkeypatch.setattr(
        vec.Vectors, "load", lambda s, after=0: loads.append(after) or real(s, after)
    )
    target = _unit(rng)
    seq = save_insight(store, "/a", {"content": "newcomer"}).memory.seq
    store.vectors.put([(seq, target)])
    assert vector_index.knn(store, target, 1, project="/a")[0][0] == seq
    assert loads and all(after > 0 for after in loads)  # only the new rows were read


def test_deleted_and_reembedded_memories_reload(store: Store) -> None:
    rng = random.Random(3)
    _fill(store, "/a", 8, rng)
    target = _unit(rng)
    first = vector_index.knn(store, target, 1, project="/a")[0][0]
    victim = next(m for m in store.memories.iter() if m.seq == first)
    store.memories.delete(victim.id)
    assert first not in [s for s, _ in vector_index.knn(store, target, 8, project="/a")]
    other = vector_index.knn(store, target, 1, project="/a")[0][0]
    edited = next(m for m in store.memories.iter() if m.seq == other)
    store.memories.update(edited.id, content="rewritten")  # queued again for a fresh vector
    store.vectors.put([(other, [-x for x in target])])  # re-embedded far away
    assert vector_index.knn(store, target, 1, project="/a")[0][0] != other


def test_sees_vectors_written_by_another_connection(store: Store) -> None:
    rng = random.Random(4)
    _fill(store, "/a", 3, rng)
    vector_index.knn(store, _unit(rng), 3, project="/a")
    target = _unit(rng)
    with Store.open(store.path, config=Config()) as other:
        seq = save_insight(other, "/a", {"content": "from elsewhere"}).memory.seq
        other.vectors.put([(seq, target)])
    assert vector_index.knn(store, target, 1, project="/a")[0][0] == seq


def test_empty_store(store: Store) -> None:
    assert not vector_index.has_vectors(store)
    assert vector_index.knn(store, [1.0] + [0.0] * 15, 5) == []


def test_mama_processes_ask_for_one_blas_thread() -> None:
    import subprocess
    import sys

    code = "import os, mama_plugin; print(os.environ['OPENBLAS_NUM_THREADS'])"
    env = {k: v for k, v in __import__("os").environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == "1"
    env["OPENBLAS_NUM_THREADS"] = "4"  # a user's own choice wins
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == "4"


def test_a_memory_is_embedded_once_even_by_two_embedders(store: Store) -> None:
    rng = random.Random(5)
    store.vectors.reset("test-model", 16)
    seq = save_insight(store, "/a", {"content": "contested"}).memory.seq
    first, second = _unit(rng), _unit(rng)
    store.vectors.put([(seq, first)])
    before = store.vectors.state()
    store.vectors.put([(seq, second)])  # a second process finished the same batch later
    assert store.vectors.state() == before  # skipped: no replacement, no reload for anyone
    assert vector_index.knn(store, first, 1, project="/a") == [(seq, pytest.approx(0.0, abs=1e-5))]


def test_a_commit_during_a_sync_is_not_loaded_twice(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(6)
    _fill(store, "/a", 3, rng)
    vector_index.knn(store, _unit(rng), 3, project="/a")
    target = _unit(rng)
    seq = save_insight(store, "/a", {"content": "first newcomer"}).memory.seq
    store.vectors.put([(seq, _unit(rng))])
    real = vec.Vectors.load
    interloper: list[int] = []

    def racing(s, after=0):  # another process commits between reading the state and the rows
        if not interloper:
            with Store.open(store.path, config=Config()) as other:
                late = save_insight(other, "/a", {"content": "second newcomer"}).memory.seq
                other.vectors.put([(late, target)])
                interloper.append(late)
        return real(s, after)

    monkeypatch.setattr(vec.Vectors, "load", racing)
    vector_index.knn(store, target, 10, project="/a")
    monkeypatch.setattr(vec.Vectors, "load", real)
    hits = [s for s, _ in vector_index.knn(store, target, 10, project="/a")]
    assert hits.count(interloper[0]) == 1 and hits[0] == interloper[0]


def _clustered(rng: random.Random, centres: list[list[float]]) -> list[float]:
    base = rng.choice(centres)
    v = [x + rng.gauss(0, 0.05) for x in base]
    norm = sum(x * x for x in v) ** 0.5
    return [x / norm for x in v]


def test_the_two_pass_search_finds_the_exact_nearest_with_exact_distances(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(7)
    centres = [_unit(rng, 128) for _ in range(8)]  # clusters, as embeddings of like texts
    store.vectors.reset("test-model", 128)
    seqs = [save_insight(store, "/a", {"content": f"m {i}"}).memory.seq for i in range(600)]
    store.vectors.put([(seq, _clustered(rng, centres)) for seq in seqs])
    monkeypatch.setattr(vector_index, "EXACT_UP_TO", 50)  # 600 rows: two passes,
    monkeypatch.setattr(vector_index, "RERANK_MIN", 100)  # re-ranking a sixth of them
    calls: list[int] = []
    real = vector_index._nearest_by_bits
    monkeypatch.setattr(vector_index, "_nearest_by_bits", lambda *a: calls.append(a[2]) or real(*a))
    for _ in range(10):
        query = _clustered(rng, centres)
        fast = vector_index.knn(store, query, 10, project="/a")
        exact = vector_index.knn(store, query, 10, project="/a", exact=True)
        assert [s for s, _ in fast] == [s for s, _ in exact]
        assert [d for _, d in fast] == pytest.approx([d for _, d in exact], abs=1e-6)
        # every distance is the float cosine, not a Hamming estimate
        theirs = dict(store.vectors.knn(query, 600, project="/a"))
        assert all(d == pytest.approx(theirs[s], abs=1e-5) for s, d in fast)
    assert calls == [100] * 10  # the first pass ran


def test_sign_bits_pack_every_dimension() -> None:
    np = pytest.importorskip("numpy")
    matrix = np.asarray([[1.0, -1.0] * 50, [-1.0] * 100], dtype=np.float32)  # 100 dims: 2 words
    bits = vector_index.sign_bits(matrix, np)
    assert bits.shape == (2, 2)
    assert [int(np.bitwise_count(bits[:, row]).sum()) for row in range(2)] == [50, 0]


def test_a_small_partition_is_searched_exactly(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(8)
    _fill(store, "/a", 30, rng)
    monkeypatch.setattr(vector_index, "_nearest_by_bits", lambda *a: pytest.fail("two passes"))
    assert len(vector_index.knn(store, _unit(rng), 5, project="/a")) == 5


def test_a_small_partition_is_scanned_by_sqlite_vec_without_numpy_or_a_copy(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A short-lived process's one query of a small project: no numpy import, no load."""
    rng = random.Random(5)
    _fill(store, "/a", 30, rng)
    query = _unit(rng)
    copy = vector_index.knn(store, query, 10, project="/a")  # DIRECT_UP_TO 0: the copy
    monkeypatch.setattr(vector_index, "DIRECT_UP_TO", 30)
    monkeypatch.setattr(vector_index, "_numpy", lambda: pytest.fail("numpy was asked for"))
    direct = vector_index.knn(store, query, 10, project="/a")
    assert [s for s, _ in direct] == [s for s, _ in copy]
    assert [d for _, d in direct] == pytest.approx([d for _, d in copy], abs=1e-6)
    assert vector_index.has_vectors(store)
    monkeypatch.setattr(vector_index, "DIRECT_UP_TO", 29)  # one memory more than that: a copy
    with pytest.raises(pytest.fail.Exception, match="numpy was asked for"):
        vector_index.knn(store, query, 10, project="/a")


def test_a_zero_vector_is_the_most_distant_on_both_paths(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(6)
    _fill(store, "/a", 3, rng)
    zero = [0.0] * 16
    copy = vector_index.knn(store, zero, 3, project="/a")
    monkeypatch.setattr(vector_index, "DIRECT_UP_TO", 10)
    assert vector_index.knn(store, zero, 3, project="/a") and all(
        d == pytest.approx(1.0) for _, d in vector_index.knn(store, zero, 3, project="/a")
    )
    assert all(d == pytest.approx(1.0) for _, d in copy)


def test_has_vectors_follows_every_change_of_the_vectors(store: Store) -> None:
    """Its answer is kept between searches until the vectors' state moves."""
    assert not vector_index.has_vectors(store)
    rng = random.Random(7)
    seqs = _fill(store, "/a", 2, rng)
    assert vector_index.has_vectors(store)
    store.vectors.reset("test-model", 16)  # every vector dropped, every memory queued again
    assert not vector_index.has_vectors(store)
    store.vectors.put([(seqs[0], _unit(rng))])
    assert vector_index.has_vectors(store)
