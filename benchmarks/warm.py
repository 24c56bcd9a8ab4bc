"""``python -m benchmarks warm``: is the index warm when a short ``claude -p`` session needs it?

Each run is two real Claude Code sessions (``.tools/node_modules/.bin/claude -p``, the plugin
loaded from this checkout with ``--plugin-dir``) in a fresh HOME and MAMA_HOME, against the
scripted Messages API of ``tests/fake_anthropic.py``, with Claude Code's default settings:

1. the model saves a decision (``save_decision``) and ends its turn. Meanwhile the store is
   polled: **save to vector** is the time from the memory's ``created_at`` to its vector being
   there; **queued at exit** counts the project's memories still waiting for a vector when
   ``claude`` exits, and again once the server has exited too.
2. a new session opens with a paraphrase of the decision that shares at most one word with it
   (keywords alone miss it: the baseline, measured on the same store). **First prompt by
   vectors** counts the sessions whose ``observe_prompt`` recalled by vectors (server.log) and
   whose request to the model carries the decision in the UserPromptSubmit context.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mama_plugin.config import Config
from mama_plugin.errors import MamaError
from mama_plugin.project import project_key
from mama_plugin.services.recall.context import prompt_context
from mama_plugin.storage import Store

from .checkout import CLAUDE, ROOT, fake_anthropic
from .latency import percentile

if TYPE_CHECKING:
    from tests.fake_anthropic import FakeAnthropic

SAVE = "mcp__plugin_mama_mama__save_decision"
RUN_TIMEOUT_S = 120
AFTER_EXIT_S = 10.0  # how long the server may outlive claude before the count is final
POLL_S = 0.02
# Decisions and paraphrases sharing at most one content word (keyword recall misses them).
PAIRS: list[tuple[dict[str, str], str]] = [
    (
        {
            "topic": "cache_layer",
            "decision": "Cache product pages in Redis with a 5 minute TTL",
            "reasoning": "catalogue reads are 90% of traffic and prices change hourly",
        },
        "Where is the product listing cached and for how long?",
    ),
    (
        {
            "topic": "message_broker",
            "decision": "Publish order events to RabbitMQ, not Kafka",
            "reasoning": "we need per-message acks and routing; our volume is 200 msg/s",
        },
        "Which message queue carries our order notifications?",
    ),
    (
        {
            "topic": "deploy_target",
            "decision": "Deploy the services on Fly.io machines instead of Kubernetes",
            "reasoning": "two engineers cannot run a cluster; Fly gives regions and TLS for free",
        },
        "Where do we host our containers: a k8s cluster or a PaaS?",
    ),
    (
        {
            "topic": "auth_strategy",
            "decision": "Use stateless JWT access tokens for API auth",
            "reasoning": "no session store to run: the API must serve 10K req/s on two nodes",
        },
        "How do clients authenticate to the API?",
    ),
]
OBSERVED = re.compile(
    r"observe_prompt: (\d+) memories recalled by (vectors|keywords) \(waited ([\d.]+) s"
    r"(?:.*?; (\d+) more already told)?"
)


@dataclass
class Run:
    """What one run measured (None: not seen)."""

    topic: str
    save_to_vector_s: float | None  # created_at → vector present, seen by polling
    queued_at_exit: int  # the project's memories without a vector when claude exited
    queued_after_server: int  # the same once the server had exited too
    saved: bool  # the decision reached the store
    # "vectors" / "keywords" / "past the deadline" from server.log; None: no call logged
    first_prompt_path: str | None
    model_wait_s: float | None  # how long observe_prompt waited for the model
    injected: bool  # the decision was in the UserPromptSubmit context Claude Code sent
    told_at_start: bool  # or the session start told it (the prompt hook never repeats)
    already_told: int  # memories the prompt hook recalled but left out: told already
    keyword_baseline: bool  # the same prompt, keywords only, on the same store, recalls it
    wall_s: tuple[float, float]  # each session's claude -p wall time


def claude_path() -> Path:
    """Claude Code from npm in this checkout's .tools/, or a MamaError saying how to get it."""
    if not CLAUDE.exists():
        raise MamaError(
            f"no Claude Code at {CLAUDE}: run scripts/setup.sh --dev (it installs "
            "@anthropic-ai/claude-code with npm into .tools/)"
        )
    return CLAUDE


def session_env(fake: FakeAnthropic, home: Path, mama_home: Path, *, wait: bool) -> dict[str, str]:
    """Claude Code's environment: default settings unless ``wait`` (``-p`` waits for servers)."""
    env = fake_anthropic().claude_env(fake, home, MAMA_HOME=str(mama_home))
    if not wait:
        del env["MCP_CONNECTION_NONBLOCKING"]  # Claude Code's default: ~2 s for plugin servers
    return env


def run_session(
    script: list[dict[str, Any]],
    prompt: str,
    workdir: Path,
    *,
    wait: bool = False,
    during: Callable[[], None] | None = None,
    plugin: Path = ROOT,
) -> tuple[FakeAnthropic, float, int]:
    """One ``claude -p`` session with ``plugin``; returns the stopped fake, wall time, pid.

    ``during`` is called repeatedly while claude runs (the store poll). Raises MamaError when
    claude fails or runs over ``RUN_TIMEOUT_S``; claude and its children are killed then.
    """
    home, project, mama_home = workdir / "home", workdir / "project", workdir / "mama"
    for folder in (home, project, mama_home):
        folder.mkdir(exist_ok=True)
    command = [str(claude_path()), "-p", prompt, "--plugin-dir", str(plugin)]
    command += ["--allowedTools", "mcp__plugin_mama_mama"]
    with fake_anthropic().FakeAnthropic(script) as fake:
        started = time.monotonic()
        proc = subprocess.Popen(
            command,
            cwd=project,
            env=session_env(fake, home, mama_home, wait=wait),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group: the server is found by it
        )
        deadline = started + RUN_TIMEOUT_S
        while proc.poll() is None and time.monotonic() < deadline:
            if during is not None:
                during()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(POLL_S)
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise MamaError(f"claude -p ran over {RUN_TIMEOUT_S} s (killed)")
        out, err = proc.communicate()
        elapsed = time.monotonic() - started
    if proc.returncode != 0:
        raise MamaError(f"claude -p exited {proc.returncode}\nstdout: {out}\nstderr: {err}")
    return fake, elapsed, proc.pid


def injected(request: dict[str, Any], event: str) -> str:
    """The additional context a hook of ``event`` put into one request ("" if none)."""
    for message in request.get("messages", []):
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for block in blocks:
            body = block.get("text", "") if isinstance(block, dict) else ""
            if f"{event} hook additional context" in str(body):
                return str(body)
    return ""


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _wait_group(pgid: int, limit_s: float) -> None:
    """Wait (bounded) until nothing of claude's process group (its server) runs any more."""
    deadline = time.monotonic() + limit_s
    while _group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(POLL_S)


class _Poll:
    """Watches the store for the decision and its vector while a session runs."""

    def __init__(self, mama_home: Path, topic: str) -> None:
        self.config, self.topic = Config(mama_home, strict=False), topic
        self.store: Store | None = None
        self.created_at: int | None = None
        self.seq: int | None = None
        self.vector_at: float | None = None  # epoch seconds it was first seen

    def __call__(self) -> None:
        if self.vector_at is not None:
            return
        if self.store is None:
            if not self.config.db_path.exists():
                return
            self.store = Store.open(config=self.config)
        if self.seq is None:
            found = self.store.memories.by_topic(self.topic)
            if not found:
                return
            self.seq, self.created_at = found[0].seq, found[0].created_at
        if any(seq == self.seq for seq, _, _ in self.store.vectors.load()):
            self.vector_at = time.time()

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


def _observed(log: Path, offset: int) -> tuple[str | None, float | None, int]:
    """The first observe_prompt line written after ``offset``: its path, model wait and how
    many memories it recalled but left out as told already this session."""
    if not log.exists():
        return None, None, 0
    with log.open(encoding="utf-8", errors="replace") as f:
        f.seek(offset)
        written = f.read()
    found = OBSERVED.search(written)
    if found:
        return found.group(2), float(found.group(3)), int(found.group(4) or 0)
    return ("past the deadline" if "observe_prompt ran past" in written else None), None, 0


def one_run(index: int, model: Path, *, wait: bool = False, plugin: Path = ROOT) -> Run:
    """Save a decision in one short session, then open the next with a paraphrase of it.

    ``plugin`` is the checkout Claude Code loads (another one gives a baseline).
    """
    decision, paraphrase = PAIRS[index % len(PAIRS)]
    double = fake_anthropic()
    with tempfile.TemporaryDirectory(prefix="mama-warm-") as tmp:
        workdir = Path(tmp)
        mama_home = workdir / "mama"
        mama_home.mkdir()
        Config(mama_home).set("embedding_model_path", str(model))
        project = project_key(str(workdir / "project"))
        poll = _Poll(mama_home, decision["topic"])
        try:
            script = [double.tool_use(SAVE, decision), double.text("Saved.")]
            ask = f"Record our decision: {decision['decision']}"
            _, first_s, pid = run_session(
                script, ask, workdir, wait=wait, during=poll, plugin=plugin
            )
            poll()
            with Store.open(config=poll.config) as store:
                at_exit = store.vectors.count_pending(project=project)
            deadline = time.monotonic() + AFTER_EXIT_S
            while _group_alive(pid) and time.monotonic() < deadline:
                poll()
                time.sleep(POLL_S)
            _wait_group(pid, 0.0)
            poll()
            with Store.open(config=poll.config) as store:
                after = store.vectors.count_pending(project=project)
                baseline = prompt_context(store, paraphrase, project=project, budget=300)
            log = mama_home / "logs" / "server.log"
            offset = log.stat().st_size if log.exists() else 0
            fake, second_s, pid = run_session(
                [double.text("Noted.")], paraphrase, workdir, wait=wait, plugin=plugin
            )
            _wait_group(pid, AFTER_EXIT_S)
        finally:
            poll.close()
        path, waited, already = _observed(log, offset)
        first = fake.main_requests[0] if fake.main_requests else {}
        context = injected(first, "UserPromptSubmit")
        to_vector = None
        if poll.vector_at is not None and poll.created_at is not None:
            to_vector = max(0.0, poll.vector_at - poll.created_at / 1000)
        return Run(
            topic=decision["topic"],
            save_to_vector_s=None if to_vector is None else round(to_vector, 3),
            queued_at_exit=at_exit,
            queued_after_server=after,
            saved=poll.seq is not None,
            first_prompt_path=path,
            model_wait_s=waited,
            injected=decision["decision"] in context,
            told_at_start=decision["decision"] in injected(first, "SessionStart"),
            already_told=already,
            keyword_baseline=decision["decision"] in baseline.text,
            wall_s=(round(first_s, 2), round(second_s, 2)),
        )


def warm_run(
    runs: int,
    model: Path,
    *,
    wait: bool = False,
    plugin: Path = ROOT,
    progress: Callable[[str], None] | None = None,
) -> tuple[str, dict[str, object]]:
    """``runs`` pairs of sessions (``wait``: ``-p`` waits for servers); the report and figures.

    ``plugin`` is the checkout Claude Code loads: this one, or an older one as a baseline.
    """
    if not (plugin / ".mcp.json").is_file():
        raise MamaError(f"{plugin} is not a MAMA checkout (no .mcp.json): pass the plugin's root")
    if runs < 1:
        raise MamaError("bench warm needs --runs of at least 1")
    results: list[Run] = []
    for i in range(runs):
        results.append(one_run(i, model, wait=wait, plugin=plugin))
        if progress is not None:
            progress(f"run {i + 1}/{runs}: {asdict(results[-1])}")
    load = os.getloadavg()
    to_vector = [r.save_to_vector_s for r in results if r.save_to_vector_s is not None]
    # Matched by meaning: injected, or recalled and left out because the session start told it
    # (nothing twice).
    by_vectors = [
        r
        for r in results
        if r.first_prompt_path == "vectors"
        and (r.injected or (r.told_at_start and r.already_told > 0))
    ]
    told = sum(not r.injected for r in by_vectors)
    matched = sum(r.first_prompt_path == "vectors" for r in results)
    waits = [r.model_wait_s for r in results if r.model_wait_s is not None]
    settings = "-p waiting for servers" if wait else "default settings"
    if plugin != ROOT:
        settings += f", plugin {plugin}"
    data: dict[str, object] = {
        "runs": runs,
        "settings": settings,
        "plugin": str(plugin),
        "saved": sum(r.saved for r in results),
        "save_to_vector_p50_s": round(percentile(to_vector, 50), 3) if to_vector else None,
        "save_to_vector_p95_s": round(percentile(to_vector, 95), 3) if to_vector else None,
        "vectors_seen": len(to_vector),
        "queued_at_exit_total": sum(r.queued_at_exit for r in results),
        "queued_after_server_total": sum(r.queued_after_server for r in results),
        "first_prompt_matched_with_vectors": matched,
        "told_at_start": sum(r.told_at_start for r in results),
        "first_prompt_by_vectors": len(by_vectors),
        "first_prompt_by_vectors_told_at_start": told,
        "first_prompt_not_logged": sum(r.first_prompt_path is None for r in results),
        "first_prompt_past_deadline": sum(
            r.first_prompt_path == "past the deadline" for r in results
        ),
        "first_prompt_by_keywords": sum(r.first_prompt_path == "keywords" for r in results),
        "first_prompt_model_wait_p50_s": round(percentile(waits, 50), 3) if waits else None,
        "keyword_baseline_recalled": sum(r.keyword_baseline for r in results),
        "session_wall_p50_s": round(percentile([sum(r.wall_s) / 2 for r in results], 50), 2),
        "load_average": [round(x, 2) for x in load],
        "results": [asdict(r) for r in results],
    }
    text = (
        f"python -m benchmarks warm: {runs} runs of two real `claude -p` sessions ({settings}), "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}\n"
        f"  decisions saved: {data['saved']}/{runs} (none when the server was not connected "
        "in time)\n"
        f"  save → vector: p50 {data['save_to_vector_p50_s']} s, p95 "
        f"{data['save_to_vector_p95_s']} s ({len(to_vector)} vectors seen)\n"
        f"  queued when claude exited: {data['queued_at_exit_total']} in all; after the server "
        f"exited: {data['queued_after_server_total']}\n"
        f"  next session's first prompt (a paraphrase) matched with vectors: {matched}/{runs}; "
        f"the decision recalled by them {len(by_vectors)}/{runs} (injected "
        f"{len(by_vectors) - told}, left out as the session start told it {told}; the start "
        f"told it in {data['told_at_start']}/{runs}); by keywords "
        f"{data['first_prompt_by_keywords']}, past the hook's deadline "
        f"{data['first_prompt_past_deadline']}, no observe_prompt call logged "
        f"{data['first_prompt_not_logged']}; model wait p50 "
        f"{data['first_prompt_model_wait_p50_s']} s\n"
        f"  keywords alone on the same prompts and stores (baseline): "
        f"{data['keyword_baseline_recalled']}/{runs} recalled\n"
        f"  claude -p wall time p50 {data['session_wall_p50_s']} s a session\n"
    )
    return text, data
