"""After ``embedding_model`` changes, the server of the new model re-embeds the store; one of
the old choice, still running, leaves it alone."""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

import anyio
import pytest

from mama_plugin import embeddings
from mama_plugin.embeddings import Embedder
from mama_plugin.server import background
from mama_plugin.server.state import State
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.services.search import indexing
from mama_plugin.storage.vectors import from_blob

LIMIT_S = 30
DECISIONS = [
    {
        "topic": "cache_layer",
        "decision": "Cache product pages in Redis with a 5 minute TTL",
        "reasoning": "catalogue reads are 90% of traffic and prices change hourly",
    },
    {
        "topic": "auth_strategy",
        "decision": "Server-side sessions in Redis for API auth",
        "reasoning": "JWT refresh hit the DB: p99 307 ms at 10K req/s",
    },
    {
        "topic": "job_queue",
        "decision": "Retry failed jobs three times with backoff",
        "reasoning": "a third of the failures were timeouts that passed on retry",
    },
]


class OldModel:
    """The model the store's vectors came from before the change."""

    name = "old-model"

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0] + [0.0] * (self.dim - 1) for _ in texts]


@pytest.fixture
def old_store(state: State, embedder: Embedder) -> State:
    for decision in DECISIONS:
        save_decision(state.store, state.project, decision)
    indexing.drain(state.store, OldModel(embedder.dim))
    assert state.store.vectors.recorded_model() == ("old-model", embedder.dim)
    return state


@contextlib.contextmanager
def _serve(state: State) -> Iterator[None]:
    """The server's indexer on its own event loop thread, until the block ends."""
    until = threading.Event()

    async def main() -> None:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(background.index_in_background, state)
            await anyio.to_thread.run_sync(until.wait, LIMIT_S)
            tasks.cancel_scope.cancel()

    loop = threading.Thread(target=anyio.run, args=(main,), name="indexer")
    loop.start()
    try:
        yield
    finally:
        until.set()
        loop.join(LIMIT_S)


def _wait_for(check: Any) -> bool:
    deadline = time.monotonic() + LIMIT_S
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


def test_the_new_models_server_re_embeds_every_memory(
    old_store: State, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = old_store
    monkeypatch.setattr(embeddings, "open_embedder", lambda config, threads=None: embedder)
    with _serve(state):
        done = _wait_for(
            lambda: (
                state.store.vectors.recorded_model()[0] == embedder.name
                and state.store.vectors.count_pending() == 0
                and state.store.vectors.count() == len(DECISIONS)
            )
        )
    assert done, state.store.vectors.recorded_model()
    # The vectors are the new model's, one per memory, none the old one's.
    stored = [from_blob(blob) for _, _, blob in state.store.vectors.load()]
    assert len({tuple(vector) for vector in stored}) == len(DECISIONS)
    assert OldModel(embedder.dim).embed(["x"])[0] not in stored


def test_a_server_of_the_old_choice_leaves_the_store_alone(
    old_store: State,
    embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    state = old_store
    monkeypatch.setattr(embeddings, "open_embedder", lambda config, threads=None: embedder)
    # The server read its config before the user chose another model (state.config): its
    # model is no longer the home's choice.
    state.config.home.mkdir(parents=True, exist_ok=True)
    state.config.path.write_text(json.dumps({"embedding_model": "mpnet"}), encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="mama"), _serve(state):
        paused = _wait_for(lambda: "embedding paused" in caplog.text)
    assert paused, caplog.text
    assert state.store.vectors.recorded_model()[0] == "old-model"
    assert "re-embedding" not in caplog.text
