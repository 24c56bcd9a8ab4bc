"""Open work outlives the session that found it; a light session never takes the thread over
(services/story/cliffhanger.py, its resume point and story; services/story/briefing.py)."""

from __future__ import annotations

import json
from pathlib import Path

from mama_plugin.config import Config
from mama_plugin.services.saving.memories import save_checkpoint, save_decision
from mama_plugin.services.story import briefing
from mama_plugin.services.story.autosave import checkpoint_turn
from mama_plugin.services.story.fitting import left_out
from mama_plugin.services.story.resume import resume_point
from mama_plugin.services.story.words import same_item
from mama_plugin.storage import Store
from mama_plugin.text import estimate_tokens, tension
from mama_plugin.transcript import Command, Digest, FileTouch
from mama_plugin.transcript.digest import Task

SAVE = "mcp__plugin_mama_mama__save_decision"
TEST = FileTouch("/p/tests/test_stats.py", "created", (1, 12))
CACHE = FileTouch("/p/pricesvc/cache.py", "edited", (3, 9))
NEXT = "add stats() returning a copy of STATS in pricesvc/cache.py"


def pytest_run(*, failed: bool) -> Command:
    error = "exit 1, AttributeError: module 'pricesvc.cache' has no attribute 'stats'"
    return Command("pytest -q", "Run the tests", failed, error if failed else "", 1,
                   shown="" if failed else "3 passed in 0.05s")  # fmt: skip


def turn(store: Store, project: str, session: str, digest: Digest, last: str) -> None:
    checkpoint_turn(store, project, session_id=session, digest=digest, last_message=last, cwd="/p")


def wrote_the_test(store: Store, project: str) -> None:
    """Session A: wrote a failing test and said what comes next."""
    run = pytest_run(failed=True)
    digest = Digest(user_requests=["Write a test for the cache stats"], assistant_texts=["Done."],
                    files=[TEST], commands=[run], tool_names=["Write", "Bash"], turn_work=2,
                    last=run)  # fmt: skip
    turn(store, project, "A", digest, f"The new test fails as expected. Next: {NEXT}.")


def ran_the_tests(store: Store, project: str, session: str, *, failed: bool) -> None:
    run = pytest_run(failed=failed)
    digest = Digest(user_requests=["Run the tests."], assistant_texts=["Ran them."],
                    commands=[run], tool_names=["Bash"], turn_work=1, last=run)  # fmt: skip
    turn(store, project, session, digest, "1 test fails." if failed else "All 3 tests pass.")


def start(store: Store, project: str) -> str:
    return briefing.brief(store, project, Config(), "startup")


def test_a_session_that_only_reruns_a_known_failure_keeps_the_thread(
    store: Store, project: str
) -> None:
    wrote_the_test(store, project)
    ran_the_tests(store, project, "B", failed=True)
    point = resume_point(store, project)
    assert point.checkpoint is not None and point.checkpoint.session_id == "A"
    assert point.since == "one session ran `pytest -q`: still failing"
    text = start(store, project)
    assert f"Next step: {NEXT}" in text
    assert text.count("has no attribute 'stats'") == 1  # the failure, told once


def test_a_session_that_only_saves_a_decision_keeps_the_thread_and_tells_it(
    store: Store, project: str
) -> None:
    wrote_the_test(store, project)
    saved = save_decision(store, project, {
        "topic": "cache_stats", "decision": "Expose the hit rate at GET /price/stats",
        "reasoning": "operators asked for the hit rate", "session_id": "B",
    }).memory  # fmt: skip
    digest = Digest(user_requests=["Record that we expose the hit rate"], tool_names=[SAVE],
                    assistant_texts=[f"Saved {saved.id}."])  # fmt: skip
    turn(store, project, "B", digest, f"Saved {saved.id}.")
    point = resume_point(store, project)
    assert point.checkpoint is not None and point.checkpoint.session_id == "A"
    assert point.since == "one session saved one decision"
    text = start(store, project)
    assert f"Next step: {NEXT}" in text
    assert saved.id in text and "Expose the hit rate" in text


def test_a_failure_stays_open_across_sessions_until_the_check_passes(
    store: Store, project: str
) -> None:
    wrote_the_test(store, project)
    # B edits the code and runs nothing: it is the resume point, and A's failure is still open.
    digest = Digest(user_requests=["Add stats()"], assistant_texts=["Added it."], files=[CACHE],
                    tool_names=["Edit"], turn_work=1, last=CACHE)  # fmt: skip
    turn(store, project, "B", digest, "Added stats() to the cache.")
    point = resume_point(store, project)
    assert point.checkpoint is not None and point.checkpoint.session_id == "B"
    assert any("has no attribute 'stats'" in f for f in point.failing)
    assert "has no attribute 'stats'" in start(store, project)
    # C only runs the tests, and they pass: the failure is made good, so C moved the work.
    ran_the_tests(store, project, "C", failed=False)
    point = resume_point(store, project)
    assert point.checkpoint is not None and point.checkpoint.session_id == "C"
    assert point.failing == ()
    assert "has no attribute 'stats'" not in start(store, project)


def test_the_check_where_the_work_stopped_is_told_once(store: Store, project: str) -> None:
    wrote_the_test(store, project)
    ran_the_tests(store, project, "B", failed=False)  # made the failure good: B is the thread
    text = start(store, project)
    assert "Where I stopped: I had just run `pytest -q` (run the tests): it passed" in text
    assert "`pytest -q` exited 0" not in text  # not again as "✅ … evidence: …"


def test_a_failure_where_the_work_stopped_is_spelled_once(store: Store, project: str) -> None:
    wrote_the_test(store, project)
    text = start(store, project)
    assert "Where I stopped: I had just run the tests: it failed (exit 1) — see Unresolved" in text
    assert text.count("`pytest -q`") == 1  # the command, in full, under Unresolved alone


def test_a_new_failure_is_work(store: Store, project: str) -> None:
    digest = Digest(user_requests=["Add stats()"], assistant_texts=["Added it."], files=[CACHE],
                    tool_names=["Edit"], turn_work=1, last=CACHE)  # fmt: skip
    turn(store, project, "A", digest, "Added stats().")
    ran_the_tests(store, project, "B", failed=True)
    point = resume_point(store, project)
    assert point.checkpoint is not None and point.checkpoint.session_id == "B"


def test_an_earlier_next_step_is_told_until_later_work_shows_it_done(
    store: Store, project: str
) -> None:
    wrote_the_test(store, project)
    # B works on something else and names no next step of its own.
    other = FileTouch("/p/README.md", "edited", (1, 4))
    digest = Digest(user_requests=["Document PRICE_DB"], assistant_texts=["Documented."],
                    files=[other], tool_names=["Edit"], turn_work=1, last=other)  # fmt: skip
    turn(store, project, "B", digest, "Documented PRICE_DB in the README.")
    text = start(store, project)
    assert "What I did" in text and "Document PRICE_DB" in text
    assert f"Next step: {NEXT}" in text and "still open from" in text
    # C does it and says so: the step is not told again.
    digest = Digest(user_requests=[f"Please {NEXT}"], assistant_texts=["Added stats()."],
                    files=[CACHE], tool_names=["Edit"], turn_work=1, last=CACHE)  # fmt: skip
    turn(store, project, "C", digest, "Added stats(), returning a copy of STATS.")
    assert "Next step: add stats()" not in start(store, project)


def test_a_problem_said_solved_is_not_unresolved() -> None:
    assert not tension("That problem is solved.")
    assert not tension("The race is gone now.")
    assert tension("The problem is still unsolved.")
    assert tension("That problem is solved, but the replica still lags 2 s.")


def test_a_compact_start_over_its_budget_keeps_the_decisions_and_no_bare_header(
    store: Store, project: str
) -> None:
    ids = []
    for n in range(3):
        saved = save_decision(store, project, {
            "topic": f"cache_{n}", "decision": f"Decision {n}: bound the price cache " + "x" * 80,
            "reasoning": f"memory grew without bound in load test {n} " + "y" * 80,
        }).memory  # fmt: skip
        ids.append(saved.id)
    long = "z" * 150
    save_checkpoint(store, project, {
        "summary": "Bounded the cache and documented it " + long,
        "what_was_done": [f"did step {n} {long}" for n in range(5)],
        "what_remains": [f"remains {n} {long}" for n in range(5)],
        "next_steps": [{"step": "load-test /price with 4 workers", "priority": "HIGH"}],
        "open_questions": [{"question": f"question {n} {long}"} for n in range(3)],
        "stopped_at": f"editing pricesvc/cache.py {long}",
        "current_state": f"the cache holds every SKU {long}",
        "target_state": f"the cache holds 1,024 SKUs at most {long}",
        "implements": ids,
    })  # fmt: skip
    text = briefing.brief(store, project, Config(), "compact")
    print(text)
    assert estimate_tokens(text) <= Config().settings.resume_tokens
    assert "[cut to the 300-token budget: resume_tokens]" in text
    lines = text.splitlines()
    assert any(line.startswith("D1 ") for line in lines), text
    assert "Next step: load-test /price with 4 workers" in text
    headers = ("Unresolved:", "Context:", "Decisions (")
    for i, line in enumerate(lines):  # a header is followed by an item of its own
        if line.startswith(headers):
            assert i + 1 < len(lines) and lines[i + 1].startswith(("- ", "D1 ", "✅", "⚠️", "❓"))


def test_one_item_of_open_work_is_told_once(store: Store, project: str) -> None:
    save_checkpoint(store, project, {
        "summary": "Added the TTL cache",
        "what_remains": ["_entries has no size bound yet", "document PRICE_DB in the README"],
        "next_steps": [{"step": "bound _entries at 1024", "priority": "HIGH"}],
        "tension": {"concerns": ["_entries grows without bound: no maxsize yet"]},
    })  # fmt: skip
    text = start(store, project)
    print(text)
    assert "Next step: bound _entries at 1024" in text
    assert text.count("_entries") == 1  # not again as remaining nor as unresolved
    assert "Remains: document PRICE_DB in the README" in text  # another item stays


def test_items_are_one_when_they_name_one_thing_and_share_most_words() -> None:
    assert same_item("_entries has no size bound yet", "bound _entries at 1024")
    assert same_item("STATS is not defined in app/cache.py", "define STATS in app/cache.py")
    assert not same_item("_entries has no size bound yet", "_entries is read without a lock")
    assert not same_item("bound the cache at 1024", "bound the queue at 1024")  # no name shared


def test_two_problems_stating_one_measurement_are_one_item() -> None:
    failed = (
        "`python bench_latency.py --new --max-p99=50` failed (Latency benchmark of the new "
        "build): exit 2, GET /price p99 93 ms at 2,000 req/s"
    )
    said = "The new build's p99 regression (93 ms vs 41 ms) is unexplained so far."
    assert same_item(failed, said) and same_item(said, failed)
    assert not same_item(failed, said, alike=False)  # a problem and a step stay two
    # Another measurement is another item, and so is the same one of two things named in code.
    assert not same_item(failed, "The cache warm-up takes 88 ms on the new build")
    assert not same_item("p99 of price_api is 93 ms on the new build, over its budget",
                         "p99 of stock_api reached 93 ms on the old build")  # fmt: skip


def test_a_failure_said_again_in_words_is_one_item() -> None:
    failed = (
        "`sh smoke.sh` failed (Run the smoke test): exit 7, curl: (7) Failed to connect to "
        "127.0.0.1 port 8765"
    )
    said = "The smoke test still fails until the service runs on 8765."
    assert same_item(said, failed) and same_item(failed, said)
    assert not same_item("The smoke test passes again.", failed)  # says no failure
    assert not same_item("The unit tests still fail on CI.", failed)  # another check
    assert not same_item(said, failed, alike=False)  # a problem and a step stay two
    script = "`sh smoke.sh` failed (Smoke script): exit 7, curl: (7) Failed to connect"
    assert same_item("Open: the smoke test still cannot connect.", script)  # test for script
    assert not same_item("The smoke screen cannot start.", script)  # names no check
    # One measurement of one named thing, though each names more.
    assert same_item(
        "`python bench.py --new` failed (Latency benchmark): exit 2, GET /price p99 93 ms",
        "Shipping as is would put /price p99 at 93 ms, nearly twice the 50 ms budget",
    )


def test_what_claudes_checkpoint_leaves_out_of_its_session_stays_unresolved(
    store: Store, project: str
) -> None:
    wrote_the_test(store, project)  # session A: its rolling checkpoint holds the failure
    save_checkpoint(store, project, {"summary": "Test for stats() written", "session_id": "A",
                                     "next_steps": [{"step": NEXT}]})  # fmt: skip
    point = resume_point(store, project)
    assert point.checkpoint is not None and not point.checkpoint.rolling
    assert "has no attribute 'stats'" in start(store, project)  # Claude's omits it
    # The session goes on after it and finds a risk: told with what it did after.
    digest = Digest(user_requests=["Write a test for the cache stats", "Now add stats()"],
                    files=[TEST, CACHE], tool_names=["Write", "Bash", "Edit"], turn_work=1,
                    turn_tools=2, last=CACHE)  # fmt: skip
    turn(store, project, "A", digest, "Added stats(). One risk: STATS is read without a lock.")
    point = resume_point(store, project)
    assert point.then is not None
    assert "- One risk: STATS is read without a lock." in start(store, project)


def test_a_risk_the_session_named_outlives_claudes_checkpoint(store: Store, project: str) -> None:
    digest = Digest(user_requests=["Bound the cache"], assistant_texts=["Done."], files=[CACHE],
                    tool_names=["Edit"], turn_work=1, last=CACHE)  # fmt: skip
    turn(store, project, "A", digest, "Bounded it. One risk: eviction drops hot entries.")
    save_checkpoint(store, project, {"summary": "Bounded the cache", "session_id": "A"})
    point = resume_point(store, project)
    assert point.checkpoint is not None and not point.checkpoint.rolling and point.then is None
    assert "- One risk: eviction drops hot entries." in start(store, project)


def test_a_turn_that_only_says_what_comes_next_keeps_what_was_unresolved(
    store: Store, project: str
) -> None:
    risk = "One risk: eviction drops the oldest entry, so a hot SKU can go while cold ones stay."
    digest = Digest(user_requests=["Bound the cache"], assistant_texts=["Done."], files=[CACHE],
                    tool_names=["Edit"], turn_work=1, last=CACHE)  # fmt: skip
    turn(store, project, "A", digest, f"Bounded it. {risk}")
    digest.user_requests.append("Leave it for today.")
    digest.turn_tools, digest.turn_work = len(digest.tool_names), 0
    turn(store, project, "A", digest, "Bounded today. Next step: run the smoke test.")
    text = start(store, project)
    assert "Next step: run the smoke test" in text
    assert "eviction drops the oldest entry" in text


def test_a_concern_that_points_back_is_told_with_what_it_points_at(
    store: Store, project: str
) -> None:
    digest = Digest(user_requests=["Is the new build shippable?"], assistant_texts=["No."],
                    files=[CACHE], tool_names=["Edit"], turn_work=1, last=CACHE)  # fmt: skip
    shipping = "Shipping as is would put p99 at 93 ms, twice the budget"
    turn(store, project, "A", digest, f"{shipping}. That is a real downside for conversion.")
    text = start(store, project)
    assert f"- {shipping}: that is a real downside for conversion." in text


def test_a_step_that_carries_on_a_task_or_a_decision_is_told_once(
    store: Store, project: str
) -> None:
    lru = save_decision(store, project, {
        "topic": "cache_eviction", "decision": "LRU eviction for TTLCache (OrderedDict)",
        "reasoning": "oldest-first eviction dropped hot SKUs",
        "next_steps": [{"step": "Switch TTLCache to an OrderedDict", "priority": "HIGH"}],
    }).memory  # fmt: skip
    save_checkpoint(store, project, {
        "summary": "LRU switch in progress", "implements": [lru.id],
        "tasks": [{"task": "Add a serve mode to shop/app.py", "status": "in_progress"},
                  {"task": "Start the service before the smoke test", "status": "pending"}],
        "what_remains": ["run the service with PRICE_DB set and rerun smoke.sh",
                         "Start the price service for the smoke test"],
        "next_steps": [{"step": "write the --serve flag with a /health handler, then finish "
                                "the LRU switch", "priority": "HIGH"}],
    })  # fmt: skip
    text = start(store, project)
    assert (
        "Next step: write the --serve flag with a /health handler, then finish the LRU "
        "switch (HIGH) — for the task in progress, “Add a serve mode to shop/app.py”"
    ) in text
    assert "Tasks: Start the service before the smoke test (pending)\n" in text  # fmt: skip
    assert "Switch TTLCache to an OrderedDict" not in text  # the step carries it on
    # "Start" and "run" are one action: the two say one item.
    assert "Remains: run the service with PRICE_DB set and rerun smoke.sh\n" in text
    assert same_item("Start the price service for the smoke test",
                     "run the service with PRICE_DB set and rerun smoke.sh")  # fmt: skip


def test_an_earlier_task_in_progress_and_the_step_carrying_it_on_are_one(
    store: Store, project: str
) -> None:
    serve = Task("1", "Add a serve mode to shop/app.py", "in_progress")
    digest = Digest(user_requests=["Start on the serve mode"], assistant_texts=["Started."],
                    files=[CACHE], tool_names=["Edit"], turn_work=1, last=CACHE,
                    tasks={"1": serve})  # fmt: skip
    turn(store, project, "A", digest, "Next: write the --serve flag with a /health handler.")
    later = Digest(user_requests=["Bound the cache"], assistant_texts=["Bounded."],
                   files=[CACHE], tool_names=["Edit"], turn_work=1, last=CACHE)  # fmt: skip
    turn(store, project, "B", later, "Bounded the cache at 1,000 entries.")
    text = start(store, project)
    assert "write the --serve flag with a /health handler" in text  # A's step, still open
    assert "Add a serve mode to shop/app.py" not in text  # the task it carries on: once


def test_load_checkpoint_after_a_start_adds_only_what_the_start_left_out() -> None:
    said = (
        "MAMA — where this project's work stopped. Memory …\n<mama-memory>\n"
        "What I did (2026-12-02, chk_1): Added the cache\n- Changed app/cache.py:1-9 (created)\n"
        "Unresolved:\n- `pytest -q` failed\nNext step: bound _entries at 1024 (HIGH)\n"
        "</mama-memory>\nMore: /mama-resume."
    )
    told = (
        "MAMA — where this project's work stopped. Memory …\n<mama-memory>\n"
        "What I did (2026-12-02, chk_1): Added the cache\n- Changed app/cache.py:1-9 (created)\n"
        "- Wrote the README\nUnresolved:\n- `pytest -q` failed\n- the replica lags 2 s\n"
        "Decisions (chosen > alternative (confidence) — why):\nD1 dec_1: TTL 60 s (0.7) — why\n"
        "Next step: bound _entries at 1024 (HIGH)\nFiles: app/cache.py\n</mama-memory>"
    )
    rest = left_out(told, said)
    assert rest.splitlines() == [
        "MAMA — where this project's work stopped. Memory …", "<mama-memory>",
        "- Wrote the README", "Unresolved:", "- the replica lags 2 s",
        "Decisions (chosen > alternative (confidence) — why):", "D1 dec_1: TTL 60 s (0.7) — why",
        "Files: app/cache.py", "</mama-memory>",
    ]  # fmt: skip
    assert left_out(said, said) == ""


def test_a_session_that_did_nothing_leaves_no_lasting_memory(store: Store, project: str) -> None:
    from mama_plugin.services.hygiene import gc
    from mama_plugin.settings import Settings

    wrote_the_test(store, project)
    hello = Digest(user_requests=["hello"], assistant_texts=["Hi."])
    turn(store, project, "B", hello, "Hi.")
    assert "hello" not in start(store, project)  # not told, not even in "Since then"
    later = 31 * 86_400_000 + max(m.updated_at for m in store.memories.iter(project=project))
    done = gc.collect(store, Settings(), now=later)
    assert done.trivial == 1 and store.meta("trivial_sessions") == "1"
    assert [m.session_id for m in store.memories.iter(project=project)] == ["A"]


def test_open_work_travels_with_the_memories_it_is_read_from(
    store: Store, project: str, tmp_path: Path
) -> None:
    """The open items are read from the memories that hold them, so an export imported into
    another store tells the same start: the same resume point, next step and failure."""
    from mama_plugin.transfer.dump import export_data, import_dump

    wrote_the_test(store, project)
    ran_the_tests(store, project, "B", failed=True)
    before = start(store, project)
    data = json.loads(json.dumps(export_data(store, project=project)))
    with Store.open(tmp_path / "other.db", config=Config(tmp_path / "home")) as other:
        with other.transaction():
            import_dump(other, data)
        assert start(other, project) == before
    assert f"Next step: {NEXT}" in before and "still failing" in before


def test_a_concern_that_holds_until_something_is_lifted_when_later_work_does_it(
    store: Store, project: str
) -> None:
    save_decision(store, project, {
        "topic": "auth_strategy", "decision": "Server-side sessions in Redis",
        "reasoning": "a session lookup is one round trip",
        "tension": {"risks": ["Redis is a single point of failure until HA is set up"]},
    })  # fmt: skip
    assert "until HA is set up" in start(store, project)
    infra = FileTouch("/p/infra/redis.tf", "edited", (12, 30))
    digest = Digest(user_requests=["Set up Redis HA for sessions"], files=[infra],
                    assistant_texts=["Sentinel is configured."], tool_names=["Edit"],
                    turn_work=1, last=infra)  # fmt: skip
    turn(store, project, "B", digest, "Sentinel is configured in infra/redis.tf.")
    assert "until HA is set up" not in start(store, project)
