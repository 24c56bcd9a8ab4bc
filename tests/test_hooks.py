"""The command hook (SessionStart) and its pieces: cliffhanger, render cache, aliases, fail-open."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import CHECKPOINT, tell_story

from mama_plugin.config import Config
from mama_plugin.hooks import aliases
from mama_plugin.hooks.runner import run
from mama_plugin.services.saving.memories import record_outcome, save_decision
from mama_plugin.services.story import brief_cache, briefing
from mama_plugin.storage import Store

DAY = 86_400_000


def story(store: Store, project: str) -> dict[str, str]:
    """JWT (FAILED) → sessions + Redis, a checkpoint on it, and an old decision left open."""
    now = int(time.time() * 1000)
    told = tell_story(
        store, project, jwt_at=now - 30 * DAY, sessions_at=now - 2 * DAY, checkpoint=CHECKPOINT
    )
    orders = save_decision(store, project, {
        "topic": "database", "decision": "PostgreSQL 16 for orders",
        "reasoning": "orders and payments commit in one transaction"},
        created_at=now - 21 * DAY).memory  # fmt: skip
    return {
        "jwt": told.jwt,
        "sessions": told.sessions,
        "orders": orders.id,
        "cp": told.checkpoint,
    }


def session_start(cwd: str, source: str = "startup") -> str:
    out = io.StringIO()
    event = {"session_id": "s", "cwd": cwd, "hook_event_name": "SessionStart", "source": source}
    assert run("session-start", io.StringIO(json.dumps(event)), out) == 0
    if not out.getvalue():
        return ""
    answer = json.loads(out.getvalue())["hookSpecificOutput"]
    assert answer["hookEventName"] == "SessionStart"
    return str(answer["additionalContext"])


def test_the_cliffhanger_tells_where_we_stopped_and_the_evolution(
    store: Store, project: str
) -> None:
    ids = story(store, project)
    text = session_start(project)
    assert f"What I did ({time.strftime('%Y-%m-%d', time.gmtime())}, {ids['cp']})" in text
    assert "Sessions live in Redis; HA is not done" in text
    assert "Redis HA with Sentinel" in text  # remains
    assert "Redis is a single point of failure" in text  # the unresolved tension
    assert "Next step: Set up Redis Sentinel (HIGH) — infra/redis.tf:10-40" in text
    # The current decision over the failed one it replaced, and why that one failed.
    assert (f"D1 {ids['sessions']} [auth_strategy]: Server-side sessions in Redis > Use "
            f"stateless JWT access tokens for API auth ({ids['jwt']}) (0.7) — FAILED: token "
            "refresh hit the DB") in text  # fmt: skip
    # An old decision without an outcome is asked about, with its date (never "3 weeks ago":
    # the text stays byte-identical between sessions).
    day = time.strftime("%Y-%m-%d", time.gmtime(time.time() - 21 * 86_400))
    assert f"on {day} we chose PostgreSQL 16 for orders ({ids['orders']})" in text
    assert "ago" not in text
    body = text.split("<mama-memory>\n", 1)[1]
    assert body.index("</mama-memory>") > body.index("PostgreSQL")  # all of it fenced
    assert briefing.estimate_tokens(text) <= 600


def test_resume_and_compact_get_a_shorter_cliffhanger(store: Store, project: str) -> None:
    story(store, project)
    full, short = session_start(project), session_start(project, "compact")
    assert short and len(short) < len(full)
    assert "Set up Redis Sentinel" in short
    assert briefing.estimate_tokens(short) <= Config().get("resume_tokens")


def test_the_compact_start_tells_a_decision_by_its_choice_and_what_the_old_one_met(
    store: Store, project: str
) -> None:
    ids = story(store, project)
    # With room, each decision is told as the full start tells it: with why it was chosen.
    roomy = session_start(project, "compact")
    line = next(x for x in roomy.splitlines() if x.startswith(f"D1 {ids['sessions']}"))
    assert "— FAILED: token refresh hit the DB" in line and "; chosen because refresh" in line
    # Short of room, the reasons go first: the choice, what it replaced and why that failed
    # stay, and so do the open problems; why it was chosen is the full start's (and
    # /mama-resume's).
    Config().set("resume_tokens", str(briefing.estimate_tokens(roomy) - 25))
    short = session_start(project, "compact")
    line = next(x for x in short.splitlines() if x.startswith(f"D1 {ids['sessions']}"))
    assert line.startswith(f"D1 {ids['sessions']} [auth_strategy]: Server-side sessions in Redis")
    assert "(0.7) — FAILED: token refresh hit the DB" in line and "chosen" not in line
    assert "Redis is a single point of failure" in short
    assert "Set up Redis Sentinel" in short
    assert "chosen because" in session_start(project)


def test_budget_is_configurable_and_respected(store: Store, project: str) -> None:
    story(store, project)
    Config().set("session_start_tokens", "120")
    text = session_start(project)
    assert 0 < briefing.estimate_tokens(text) <= 120
    assert "What I did" in text


def test_nothing_for_a_project_without_memory(store: Store, project: str, tmp_path: Path) -> None:
    story(store, project)
    other = tmp_path / "elsewhere"
    other.mkdir()
    assert session_start(str(other)) == ""


def test_nothing_and_no_database_created_before_first_use(mama_home: Path, project: str) -> None:
    assert session_start(project) == ""
    assert not (mama_home / "mama.db").exists()


def test_a_disabled_project_gets_nothing(store: Store, project: str) -> None:
    story(store, project)
    Config().set("disabled_projects", project)
    assert session_start(project) == ""


def test_the_cache_serves_and_a_write_invalidates_it(store: Store, project: str) -> None:
    ids = story(store, project)
    first = session_start(project)
    assert store.meta(f"brief:full:{project}") is not None  # rendered once, cached
    assert session_start(project) == first
    record_outcome(store, {"memory_id": ids["sessions"], "outcome": "SUCCESS",
                           "details": "p99 41 ms held for a week"})  # fmt: skip
    assert "Server-side sessions in Redis (SUCCESS)" in session_start(project)


def test_proposed_links_wait_at_session_start_until_a_verdict(store: Store, project: str) -> None:
    ids = story(store, project)
    assert "Proposed links" not in session_start(project)  # cached: nothing pending yet
    made = [store.suggestions.add(project, ids["orders"], target, "relates_to", reason,
                                 judged_by="rules", sources=["same_topic_week"])
            for target, reason in ((ids["cp"], "the checkpoint's API is the orders API"),
                                   (ids["jwt"], "orders were signed with JWT until 2 days ago"),
                                   (ids["sessions"], "orders and sessions share the 10K req/s API"))]  # fmt: skip
    assert all(made)
    text = session_start(project)  # a new suggestion refreshes the cached cliffhanger
    assert "Proposed links, not in the graph until confirmed (evolve_link" in text
    first = made[-1]  # equal scores: the newest first
    assert first is not None
    assert (f"- #{first.id}: PostgreSQL 16 for orders ({ids['orders']}) relates_to Server-side "
            f"sessions in Redis ({ids['sessions']}) — orders and sessions share") in text  # fmt: skip
    assert "(1 more: suggest_links)" in text  # two shown of three
    assert "3 proposed links wait for a verdict" in session_start(project, "resume")
    for suggestion in made:
        assert suggestion is not None
        store.suggestions.decide(suggestion.id, "rejected", decided_by="user")
    assert "Proposed links" not in session_start(project)  # a verdict refreshes it too
    assert "proposed link" not in session_start(project, "resume")


def test_after_compaction_the_header_says_it_is_this_sessions_work(
    store: Store, project: str
) -> None:
    """/compact continues the session: its start is where this session's work stood, not
    "memory from earlier sessions"; resume and compact share one cached text."""
    story(store, project)
    resumed, compacted = session_start(project, "resume"), session_start(project, "compact")
    assert resumed.startswith(brief_cache.HEADER)
    assert compacted.startswith(brief_cache.COMPACTED) and "earlier sessions" in compacted
    assert "Memory from earlier sessions" not in compacted
    assert compacted[len(brief_cache.COMPACTED) :] == resumed[len(brief_cache.HEADER) :]
    assert session_start(project).startswith(brief_cache.HEADER)


def test_an_updated_renderer_renders_afresh(
    store: Store, project: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plugin update that changes how the start is written is not served the text its old
    code cached: every module of the package is part of the cache key, whichever it is (no
    list of the rendering modules to keep up to date)."""
    package = tmp_path / "mama_plugin"
    (package / "services" / "story").mkdir(parents=True)
    (package / "services" / "story" / "cliffhanger.py").write_text("# v1\n")
    monkeypatch.setattr(brief_cache, "PACKAGE", package)
    story(store, project)
    session_start(project)
    cached = store.meta(f"brief:full:{project}")
    session_start(project)
    assert store.meta(f"brief:full:{project}") == cached  # served from the cache
    keys = [json.loads(cached or "{}")["key"]]
    new_module = package / "services" / "story" / "someday.py"  # a module no list names
    new_module.write_text("# new\n")
    session_start(project)
    keys.append(json.loads(store.meta(f"brief:full:{project}") or "{}")["key"])
    os.utime(new_module, ns=(time.time_ns(), time.time_ns() + 10**9))
    session_start(project)
    keys.append(json.loads(store.meta(f"brief:full:{project}") or "{}")["key"])
    assert len({json.dumps(k) for k in keys}) == 3, keys


def test_a_user_template_overrides_the_shipped_one(
    store: Store, project: str, mama_home: Path
) -> None:
    story(store, project)
    session_start(project)  # cached with the shipped template
    (mama_home / "templates").mkdir(parents=True)
    (mama_home / "templates" / "session_start.md.j2").write_text(
        "Our story: {{ cp.content }} ({{ decisions|length }} decisions)\n"
    )
    text = session_start(project)  # the user's words, still inside the fence
    assert (
        "<mama-memory>\nOur story: Sessions live in Redis; HA is not done (1 decisions)\n" in text
    )


def test_compiled_templates_are_kept_and_an_edited_override_is_compiled_afresh(
    mama_home: Path,
) -> None:
    """Jinja's bytecode cache under $MAMA_HOME/cache: a new process (a new environment) reads
    the compiled template; an override's new source is never served from the old code."""
    from mama_plugin.services import render as rendering

    def fresh(name: str) -> str:
        rendering._environment.cache_clear()  # as a new process starts
        return rendering.render(name, mama_home, greeting="hello")

    overrides = mama_home / "templates"
    overrides.mkdir(parents=True)
    (overrides / "probe.md.j2").write_text("one: {{ greeting }}\n")
    assert fresh("probe.md.j2") == "one: hello\n"
    kept = list((mama_home / "cache" / "templates").iterdir())
    assert len(kept) == 1 and oct(kept[0].stat().st_mode & 0o777) == "0o600"
    (overrides / "probe.md.j2").write_text("two: {{ greeting }}\n")
    assert fresh("probe.md.j2") == "two: hello\n"
    shutil.rmtree(mama_home / "cache" / "templates")  # a cache that cannot be written (a file
    (mama_home / "cache" / "templates").write_text("")  # where its folder goes): still renders
    (overrides / "probe.md.j2").write_text("three: {{ greeting }}\n")
    assert fresh("probe.md.j2") == "three: hello\n"


def test_bad_input_and_broken_templates_fail_open(
    store: Store, project: str, mama_home: Path
) -> None:
    story(store, project)
    out = io.StringIO()
    assert run("session-start", io.StringIO("{not json"), out) == 0
    assert out.getvalue() == ""
    (mama_home / "templates").mkdir(parents=True)
    (mama_home / "templates" / "session_start.md.j2").write_text("{% for %}")
    assert session_start(project) == ""
    log = (mama_home / "logs" / "hooks.log").read_text()
    assert "JSONDecodeError" in log and "TemplateSyntaxError" in log


def hook_process(project: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "mama_plugin.hooks", "session-start"],
        input=json.dumps({"cwd": project, "source": "startup"}),
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return proc, time.monotonic() - started


def test_a_writer_holding_the_lock_does_not_silence_the_cliffhanger(
    store: Store, project: str
) -> None:
    story(store, project)
    Config().set("session_start_tokens", "500")  # a new budget: the cache must be rebuilt
    store.conn.execute("BEGIN IMMEDIATE")
    try:
        proc, _ = hook_process(project)
    finally:
        store.conn.execute("ROLLBACK")
    assert proc.returncode == 0
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Set up Redis Sentinel" in context  # WAL readers never wait; the cache write gave up


def test_a_hook_past_its_deadline_exits_0_silently(
    store: Store, project: str, mama_home: Path
) -> None:
    story(store, project)
    (mama_home / "templates").mkdir(parents=True)
    (mama_home / "templates" / "session_start.md.j2").write_text(  # a render that never ends
        "{% for i in range(10**12) %}{% endfor %}"
    )
    proc, elapsed = hook_process(project)
    assert proc.returncode == 0 and proc.stdout == ""
    assert elapsed < 10  # Claude Code's timeout for this hook; the hook's own deadline is 2 s
    assert "gave up at the 2.0 s deadline" in (mama_home / "logs" / "hooks.log").read_text()


def test_a_cold_hook_imports_only_the_standard_library_and_apsw(store: Store, project: str) -> None:
    story(store, project)
    session_start(project)  # fill the cache, as the server does after each turn
    probe = (
        "import io, json, sys; from mama_plugin.hooks.runner import run; "
        f"run('session-start', io.StringIO(json.dumps({{'cwd': {project!r}}})), io.StringIO()); "
        "print(json.dumps(sorted(sys.modules)))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    modules = set(json.loads(proc.stdout))
    loaded = {m.split(".")[0] for m in modules}
    assert not loaded & {"jinja2", "pydantic", "mcp", "numpy", "llama_cpp", "sqlite_vec"}
    assert "apsw" in loaded
    # Nor what only a rarer path needs (a write of an alias, a log handler, git, the
    # front's sqlite3 glance): each is ~3-9 ms of every session's start.
    assert not loaded & {"tempfile", "logging", "subprocess", "sqlite3", "shlex", "zipfile"}
    assert "hashlib" not in loaded  # the project has no .mama/: nothing to hash
    # A hit is read from a glance at the file: neither the store nor the services load.
    assert not modules & {"mama_plugin.storage.store", "mama_plugin.services.story.briefing"}
    # Nor the tables' modules: the schema version and the cited files' stat digest are the
    # glance's own (the migrations and the file-state repository were 40 ms of ~110).
    assert not {m for m in modules if m.startswith("mama_plugin.storage.")} - {
        "mama_plugin.storage.peek", "mama_plugin.storage.integrity"}  # fmt: skip


def test_aliases_are_written_once_and_never_over_a_users_file() -> None:
    folder = aliases.commands_dir()
    (folder).mkdir(parents=True)
    mine = folder / "mama-save.md"
    mine.write_text("my own save command\n")
    written = aliases.install_aliases()
    assert sorted(p.name for p in written) == ["mama-configure.md", "mama-resume.md"]
    assert mine.read_text() == "my own save command\n"
    resume = (folder / "mama-resume.md").read_text()
    assert "Skill(mama:resume)" in resume and aliases.MARKER in resume and "$ARGUMENTS" in resume
    assert aliases.install_aliases() == []  # already current
    removed = aliases.remove_aliases()
    assert sorted(p.name for p in removed) == ["mama-configure.md", "mama-resume.md"]
    assert mine.exists()


def test_session_start_installs_aliases_unless_switched_off(store: Store, project: str) -> None:
    session_start(project)
    assert (aliases.commands_dir() / "mama-resume.md").exists()
    Config().set("command_aliases", "false")
    session_start(project)
    assert not (aliases.commands_dir() / "mama-resume.md").exists()


@pytest.mark.parametrize(("ms", "phrase"), [(0, "just now"), (90_000, "1 minute ago"),
                                            (3 * DAY, "3 days ago"), (22 * DAY, "3 weeks ago")])  # fmt: skip
def test_ago(ms: int, phrase: str) -> None:
    assert brief_cache.ago(1_000_000_000_000 - ms, 1_000_000_000_000) == phrase
