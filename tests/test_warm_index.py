"""A warm index when it matters: the embedder's readiness, a save's vector, the exit drain.

No test here times anything: waits are on events, each bounded by a deadline.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import DESKTOP as CLIENT
from conftest import connect

from mama_plugin import embeddings
from mama_plugin.config import Config
from mama_plugin.embeddings import Embedder
from mama_plugin.server import background, hook_tools
from mama_plugin.server.hook_table import HOOK_DEADLINE_S, PromptArgs
from mama_plugin.server.hook_tools import do_observe_prompt
from mama_plugin.server.state import State
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.services.search import indexing

LIMIT_S = 30  # every wait's deadline: far beyond what it needs, so only a hang trips it
CACHE = {
    "topic": "cache_layer",
    "decision": "Cache product pages in Redis with a 5 minute TTL",
    "reasoning": "catalogue reads are 90% of traffic and prices change hourly",
}
# Meaning and words both: recall no longer passes on a cosine alone (services/recall/prompt.py).
PARAPHRASE = "Do we cache product pages in Redis, with what TTL?"
ONE_WORD = "Where is the product listing cached and for how long?"  # one shared word


class Gate:
    """Stands in for open_embedder: blocks until released, then gives ``embedder``."""

    def __init__(self, embedder: Any) -> None:
        self.embedder, self.release, self.asked = embedder, threading.Event(), threading.Event()

    def __call__(self, config: Config, *, threads: int | None = None) -> Any:
        self.asked.set()
        assert self.release.wait(LIMIT_S), "the test never released the model"
        if self.embedder is None:
            raise embeddings.EmbeddingError("no model here")
        return self.embedder


class Waits:
    """Wraps ``state.embedder_ready.wait``: records each timeout and says when one began."""

    def __init__(self, state: State) -> None:
        self.timeouts: list[float | None] = []
        self.began = threading.Event()
        self._wait = state.embedder_ready.wait
        state.embedder_ready.wait = self  # type: ignore[method-assign]

    def __call__(self, timeout: float | None = None) -> bool:
        self.timeouts.append(timeout)
        self.began.set()
        return self._wait(timeout)


def observe(state: State, prompt: str) -> dict[str, Any]:
    return do_observe_prompt(state.env(), PromptArgs(prompt=prompt, session_id="s")).data


@pytest.fixture
def indexer(state: State) -> Iterator[Callable[[], None]]:
    """Starts index_in_background on its own event loop thread, until the test ends."""
    stop = threading.Event()
    loops: list[threading.Thread] = []

    async def main() -> None:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(background.index_in_background, state)
            await anyio.to_thread.run_sync(stop.wait)
            tasks.cancel_scope.cancel()

    def start() -> None:
        loops.append(threading.Thread(target=anyio.run, args=(main,), name="indexer"))
        loops[-1].start()

    yield start
    stop.set()
    for loop in loops:
        loop.join(LIMIT_S)


def test_without_a_loader_nobody_waits(state: State) -> None:
    waits = Waits(state)
    assert state.embedder_within(LIMIT_S) is None
    observe(state, PARAPHRASE)
    assert waits.timeouts == []


def test_no_model_sets_readiness_and_the_prompt_does_not_wait(
    state: State, monkeypatch: pytest.MonkeyPatch, indexer: Callable[[], None]
) -> None:
    gate = Gate(None)
    monkeypatch.setattr(embeddings, "open_embedder", gate)
    indexer()
    gate.release.set()
    assert state.embedder_ready.wait(LIMIT_S), "readiness was never set"
    assert state.embedder is None
    save_decision(state.store, state.project, CACHE)
    data = observe(state, "caching product pages in Redis")  # keywords still recall it
    assert [m["topic"] for m in data["memories"]] == ["cache_layer"]


def test_a_first_prompt_waits_for_the_loading_model_then_matches_by_vectors(
    state: State,
    embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
    indexer: Callable[[], None],
    caplog: pytest.LogCaptureFixture,
) -> None:
    save_decision(state.store, state.project, CACHE)  # left queued by an earlier session
    assert hook_tools.EMBEDDER_WAIT_S <= HOOK_DEADLINE_S / 2  # the hook answers well in time
    monkeypatch.setattr(hook_tools, "EMBEDDER_WAIT_S", float(LIMIT_S))  # a busy machine
    gate = Gate(embedder)
    monkeypatch.setattr(embeddings, "open_embedder", gate)
    indexer()
    assert gate.asked.wait(LIMIT_S), "the model was not loaded at start"
    waits = Waits(state)
    answer: dict[str, Any] = {}
    prompt = threading.Thread(target=lambda: answer.update(observe(state, PARAPHRASE)))
    with caplog.at_level("INFO", logger="mama"):
        prompt.start()
        assert waits.began.wait(LIMIT_S), "the prompt did not wait for the model"
        gate.release.set()
        prompt.join(LIMIT_S)
    assert waits.timeouts == [LIMIT_S]  # it waited on readiness, bounded
    [hit] = answer["memories"]
    assert hit["topic"] == "cache_layer" and hit["cosine"] is not None
    assert state.store.vectors.count_pending() == 0  # leftovers embedded before readiness
    assert "1 memories recalled by vectors" in caplog.text


def test_a_prompt_past_the_bound_is_matched_by_keywords(
    state: State, embedder: Embedder, monkeypatch: pytest.MonkeyPatch, indexer: Callable[[], None]
) -> None:
    save_decision(state.store, state.project, CACHE)
    gate = Gate(embedder)
    monkeypatch.setattr(embeddings, "open_embedder", gate)
    indexer()
    monkeypatch.setattr(hook_tools, "EMBEDDER_WAIT_S", 0.01)
    assert gate.asked.wait(LIMIT_S)
    try:
        assert observe(state, ONE_WORD)["memories"] == []  # keywords miss the paraphrase
        assert observe(state, "caching product pages in Redis")["memories"]
    finally:
        gate.release.set()


def test_a_save_wakes_the_indexer_without_waiting_for_the_poll(
    state: State, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(background, "DRAIN_IDLE_S", 3600.0)  # only a wake-up can explain it
    monkeypatch.setattr(embeddings, "open_embedder", lambda config, threads=None: embedder)
    embedded = threading.Event()
    embed_batch = indexing.embed_batch

    def embed_then_tell(*args: Any, **kwargs: Any) -> int:
        done = embed_batch(*args, **kwargs)
        if done:
            embedded.set()
        return done

    monkeypatch.setattr(indexing, "embed_batch", embed_then_tell)

    async def main() -> str:
        async with connect(state, CLIENT) as client, anyio.create_task_group() as tasks:
            tasks.start_soon(background.index_in_background, state)
            await anyio.to_thread.run_sync(state.embedder_ready.wait, LIMIT_S)
            assert state.store.vectors.count() == 0 and not embedded.is_set()
            saved = await client.call_tool("save_decision", CACHE)
            assert await anyio.to_thread.run_sync(embedded.wait, LIMIT_S), "never embedded"
            tasks.cancel_scope.cancel()
        return str(saved.structured_content["id"])  # type: ignore[index]

    saved = anyio.run(main)
    memory = state.store.memories.require(saved)
    assert {seq for seq, _, _ in state.store.vectors.load()} == {memory.seq}


def test_the_exit_drain_embeds_this_projects_queue(state: State, embedder: Embedder) -> None:
    state.embedder = embedder
    for i in range(3):
        save_decision(state.store, state.project, {**CACHE, "topic": f"cache_{i}"})
    save_decision(state.store, "elsewhere", CACHE)
    assert anyio.run(background.drain_before_exit, state, LIMIT_S) == 3
    assert state.store.vectors.count_pending(project=state.project) == 0
    assert state.store.vectors.count_pending(project="elsewhere") == 1  # not this server's


def test_the_fronts_exit_embeds_and_leaves_the_next_session_start_cached(
    state: State, embedder: Embedder
) -> None:
    """A short session ends before the background refresh would run: the front's exit drain
    renders the cliffhanger its writes made stale, so the next SessionStart hook serves it
    from the cache (the text a fresh render gives) instead of rendering it itself."""
    from mama_plugin.server.preload import drain_quietly
    from mama_plugin.services.story import briefing

    state.embedder = embedder
    save_decision(state.store, state.project, CACHE)
    state.session.brief_stale(state.project)  # as the Stop hook's checkpoint does
    assert briefing.cached_brief(state.store, state.project, state.config, "startup") is None
    drain_quietly(state, LIMIT_S)
    assert state.store.vectors.count_pending(project=state.project) == 0
    cached = briefing.cached_brief(state.store, state.project, state.config, "startup")
    assert cached and "Redis" in cached
    state.store.set_meta(f"brief:full:{state.project}", "{}")  # forget it: render afresh
    assert briefing.brief(state.store, state.project, state.config, "startup") == cached
    assert not state.session.stale_briefs


def test_the_exit_drain_waits_for_a_loading_model_within_its_budget(
    state: State, embedder: Embedder
) -> None:
    save_decision(state.store, state.project, CACHE)
    state.embedder_loading = True
    waits = Waits(state)

    def load_when_asked() -> None:
        assert waits.began.wait(LIMIT_S)
        state.embedder = embedder
        state.embedder_ready.set()

    loader = threading.Thread(target=load_when_asked)
    loader.start()
    assert background.drain_now(state, LIMIT_S) == (1, 0)
    loader.join(LIMIT_S)
    assert waits.timeouts and all(t is not None and t <= LIMIT_S for t in waits.timeouts)


def test_the_exit_drain_without_a_model_does_nothing(state: State) -> None:
    state.embedder_loading = True
    state.embedder_ready.set()  # the loader found no model
    save_decision(state.store, state.project, CACHE)
    assert anyio.run(background.drain_before_exit, state, LIMIT_S) == 0
    assert state.store.vectors.count_pending() == 1


def test_the_exit_drain_stops_at_its_deadline(state: State, embedder: Embedder) -> None:
    state.embedder = embedder
    for i in range(3):
        save_decision(state.store, state.project, {**CACHE, "topic": f"cache_{i}"})
    past = time.monotonic() - 1
    assert indexing.drain_until(state.store, embedder, past, project=state.project) == 0
    assert state.store.vectors.count_pending() == 3


def test_sigint_drains_then_ends_the_server(
    state: State, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code stops a server with SIGINT (SIGKILL follows 0.5 s later): drain, then end."""
    monkeypatch.setattr(background, "SIGNAL_DRAIN_S", float(LIMIT_S))
    ended: list[State] = []
    monkeypatch.setattr(background, "end_process", ended.append)  # not this test process
    state.embedder = embedder
    save_decision(state.store, state.project, CACHE)

    async def main() -> None:
        with anyio.fail_after(LIMIT_S):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(background.exit_on_signal, state)
                await anyio.sleep(0)  # the receiver is installed before the signal is sent
                os.kill(os.getpid(), signal.SIGINT)

    anyio.run(main)
    assert ended == [state]
    assert state.store.vectors.count_pending() == 0 and state.store.vectors.count() == 1


@pytest.mark.parametrize("sdk", [False, True], ids=["front", "sdk"])
def test_mama_serve_drains_on_sigint_and_exits(
    sdk: bool, tmp_path: Path, built_model: Path
) -> None:
    """`mama serve` (the front, and the SDK server) for real: stopped the way Claude Code stops
    it, it exits (130 for the front's interrupted read, 0 for the SDK's), nothing queued."""
    from benchmarks.stdio import SERVE, StdioServer
    from mama_plugin.storage import Store

    home = tmp_path / "mama"
    home.mkdir()
    Config(home).set("embedding_model_path", str(built_model))
    log = home / "logs" / "server.log"
    command = (*SERVE, "--sdk") if sdk else SERVE
    server = StdioServer({**os.environ, "MAMA_HOME": str(home)}, cwd=str(tmp_path), command=command)
    try:
        deadline = time.monotonic() + LIMIT_S
        while "embedding model loaded" not in (log.read_text() if log.exists() else ""):
            assert time.monotonic() < deadline, "the model never loaded"
            time.sleep(0.05)
        server.request("tools/call", {"name": "save_decision", "arguments": CACHE})
        server.proc.send_signal(signal.SIGINT)
        assert server.proc.wait(LIMIT_S) == (0 if sdk else 130)
    finally:
        server.close()
    if sdk:
        assert "signal 2: embedding what is queued" in log.read_text()
    with Store.open(config=Config(home)) as store:
        assert store.vectors.count_pending() == 0 and store.vectors.count() == 1


def test_a_save_and_the_stop_hooks_checkpoint_both_wake_the_indexer(
    state: State, project: str
) -> None:
    """While no indexer runs, the wake-ups wait in the session's backlog (one per project)."""
    from mama_plugin.schema import DecisionInput
    from mama_plugin.server.hook_table import TurnArgs
    from mama_plugin.server.hook_tools import do_checkpoint_turn
    from mama_plugin.server.tools import do_save_decision

    do_save_decision(state.env(), DecisionInput.model_validate(CACHE))
    assert state.session.embed_wanted == {project}
    state.session.embed_wanted.clear()
    turn = TurnArgs(session_id="s", last_assistant_message="Done.")
    assert do_checkpoint_turn(state.env(), turn).data["checkpoint"]
    assert state.session.embed_wanted == {project}


_KILLED_SERVER = """
import os, signal, subprocess, sys, threading
from mama_plugin.config import Config
from mama_plugin.server import preload

spawn = subprocess.Popen
def popen(*args, **kwargs):
    builder = spawn(*args, **kwargs)
    print(builder.pid, flush=True)
    os.killpg(0, signal.SIGKILL)  # what ends a server's group: the builder is not in it
    return builder
subprocess.Popen = popen
preload.build_outliving(Config())
"""


def test_the_model_build_outlives_a_server_killed_with_its_process_group(
    tmp_path: Path,
) -> None:
    """A short session ends the server long before a first build ends (2–4 s): the build
    runs in a process of its own, so the next session finds the model cached."""
    from conftest import requirements_missing

    from mama_plugin.embeddings import cache_path
    from mama_plugin.embeddings.ggufmeta import is_model_file

    if reason := requirements_missing():
        pytest.skip(reason)
    import subprocess
    import sys

    env = {**os.environ, "MAMA_HOME": str(tmp_path)}
    server = subprocess.Popen(
        [sys.executable, "-c", _KILLED_SERVER], env=env, stdout=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    assert server.stdout is not None
    with server.stdout:
        builder = int(server.stdout.readline())
    assert server.wait(LIMIT_S) == -signal.SIGKILL and builder != server.pid
    model = cache_path(Config(tmp_path))
    deadline = time.monotonic() + 4 * LIMIT_S
    while not is_model_file(model):
        assert time.monotonic() < deadline, "the builder died with the server"
        time.sleep(0.2)


def test_no_builder_runs_when_the_model_is_cached_or_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    from mama_plugin.server import preload

    started: list[object] = []
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: started.append(a))
    config = Config(tmp_path)
    config.set("embedding_model_path", str(tmp_path / "model.gguf"))
    preload.build_outliving(Config(tmp_path))
    config.unset("embedding_model_path")
    config.set("embedding_model", "multilingual-e5")
    preload.build_outliving(Config(tmp_path))
    assert started == []
