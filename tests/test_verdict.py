"""What a command's result shows (transcript/verdict.py): the exit status is not proof."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mama_plugin.services.story.autosave import layers_of
from mama_plugin.services.story.commands import confirmed, stopped_at, unresolved
from mama_plugin.transcript import Command, Digest
from mama_plugin.transcript.verdict import (
    FAILED,
    INTERRUPTED,
    NOT_RUN,
    PASSED,
    UNKNOWN,
    core,
    masked,
    verdict,
)

PIPED = "python -m pytest tests -q 2>&1 | tail -15"
PYTEST_FAILED = """....F.F                                                    [100%]
FAILED tests/test_cache.py::test_stats - NameError: name 'STATS' is not defined
2 failed, 5 passed in 0.21s"""

PYTEST_CUT = """Exit code 1
..FF                                                                     [100%]
_______________________ test_ship_unknown_sku_is_refused _______________________
E       Failed: DID NOT RAISE KeyError
_______________________ test_ship_below_zero_is_refused ________________________
E       Failed: DID NOT RAISE ValueError
=========================== short test summary info ============================
FAILED tests/test_ledger.py::test_ship_below_zero_is_refused - Failed: DID NO...
2 failed, 2 passed in 2.49s"""

CUT_ALONE = "FAILED tests/test_ledger.py::test_ship_below_zero_is_refused - Failed: DID NO..."
PYTEST_CLASS = """Exit code 1
__________________________ TestShip.test_unknown_sku ___________________________
E       Failed: DID NOT RAISE KeyError
__________________________ TestShip.test_below_zero ____________________________
E       Failed: DID NOT RAISE ValueError
=========================== short test summary info ============================
FAILED tests/test_ledger.py::TestShip::test_below_zero - Failed: DID NOT RAIS...
2 failed in 0.49s"""


@pytest.mark.parametrize(
    ("command", "is_error", "output", "state", "line"),
    [
        # A pipeline's status is tail's: the output decides.
        (PIPED, False, PYTEST_FAILED, FAILED, "NameError: name 'STATS' is not defined"),
        (PIPED, False, "7 passed in 0.20s", PASSED, "7 passed in 0.20s"),
        (PIPED, False, "....... [100%]", UNKNOWN, ""),
        ("make test || true", False, "make: *** [Makefile:3: test] Error 2", FAILED, "make: *** [Makefile:3: test] Error 2"),
        ("make test || true", False, "done", UNKNOWN, ""),
        ("set -o pipefail; pytest -q | tail -3", False, "....", PASSED, ""),
        # Exit 0 that printed a failure is a failure; its own line is told, not a progress bar.
        ("pytest -q", False, "..F\nE   NameError: name 'STATS' is not defined\n1 failed", FAILED, "NameError: name 'STATS' is not defined"),
        ("python app.py", False, "Traceback (most recent call last):\n  File \"app.py\", line 1\nKeyError: 'PRICE_DB'", FAILED, "KeyError: 'PRICE_DB'"),
        ("pytest -q", True, "Exit code 1\n....F.F [100%]\nE   NameError: name 'STATS' is not defined", FAILED, "exit 1, NameError: name 'STATS' is not defined"),
        ("ls nothing", True, "Exit code 2\nls: cannot access 'nothing': No such file or directory", FAILED, "exit 2, ls: cannot access 'nothing': No such file or directory"),
        # Nothing that could hide a failure, nothing that reports one.
        ("python -m shop.app --check", False, "config ok", PASSED, ""),
        ("npm test", False, "Tests: 0 failed, 12 passed", PASSED, "Tests: 0 failed, 12 passed"),
        ("pytest -q", False, "....\n===== 4 passed in 0.1s =====", PASSED, "4 passed in 0.1s"),
        # A run cut by ``| head``: pytest's progress line and header tell the failure.
        ("pytest -q 2>&1 | head -3", False, "..FF                [100%]\n=== FAILURES ===", FAILED, "tests failed: ..FF [100%]"),
        ("pytest -q 2>&1 | head -2", False, "tests/test_a.py ..F.\n", FAILED, "tests failed: tests/test_a.py ..F."),
        # Claude Code moved it to the background: it has only started.
        ("sh warm_cache.sh", False, "Command running in background with ID: b1x2. Output is being written to: /tmp/b1x2.output", UNKNOWN, "Command running in background with ID: b1x2. Output is being written to: /tmp/b1x2.output"),
        ("ss -ltn | grep -q ':8765 '", False, "", UNKNOWN, ""),
        # Stopped before it ended, or never started (Claude Code 2.1.197's own answers).
        ("sleep 5", True, "Exit code 143\nCommand timed out after 1s", INTERRUPTED, "Command timed out after 1s"),
        ("pytest -q", True, "[Request interrupted by user for tool use]", INTERRUPTED, "[Request interrupted by user for tool use]"),
        ("touch zz", True, "touch in '/x/zz' was blocked. For security, Claude Code may only create or modify files in the allowed working directories for this session: '/p'.", NOT_RUN, "touch in '/x/zz' was blocked. For security, Claude Code may only create or modify files in the allowed working directories for this session: '/p'."),
        ("rm -rf build", True, "Claude requested permissions to use Bash, but you haven't granted it yet.", NOT_RUN, "Claude requested permissions to use Bash, but you haven't granted it yet."),
        ("grep -c 'a|b' notes.txt", False, "3", PASSED, ""),
        # pytest cut its short summary to the terminal's width: the failure's own E line tells
        # the message whole; without one, the cut word is left out.
        ("pytest -q", True, PYTEST_CUT, FAILED, "exit 1, FAILED tests/test_ledger.py::test_ship_below_zero_is_refused - Failed: DID NOT RAISE ValueError"),
        ("pytest -q", True, "Exit code 1\n" + CUT_ALONE, FAILED, "exit 1, " + CUT_ALONE.removesuffix(" DID NO...") + " DID…"),
        # A message of its own ending in "..." (shorter than the terminal) is told as it is.
        ("pytest -q", True, "Exit code 1\nFAILED t.py::test_b - Failed: waiting...", FAILED, "exit 1, FAILED t.py::test_b - Failed: waiting..."),
        # A test in a class: its section is "TestShip.test_below", and its E line is told.
        ("pytest -q", True, PYTEST_CLASS, FAILED, "exit 1, FAILED tests/test_ledger.py::TestShip::test_below_zero - Failed: DID NOT RAISE ValueError"),
    ],
)  # fmt: skip
def test_the_verdict_reads_the_output_as_well_as_the_status(
    command: str, is_error: bool, output: str, state: str, line: str
) -> None:
    found = verdict(command, is_error, output)
    assert (found.state, found.line) == (state, line)


def test_a_look_around_is_judged_by_its_status_alone() -> None:
    assert verdict("cat app.log", False, "ValueError: bad row", read_output=False).state == PASSED


@pytest.mark.parametrize(
    ("command", "hides"),
    [("pytest | tail -5", True), ("cd a && pytest -q 2>&1 | grep -E 'passed|failed'", True),
     ("pytest | tee out.txt", True), ("pytest || true", True), ("echo 'x | tail'", False),
     ("pytest -q; ls | wc -l", True), ("pytest -q && echo done", False), ("a || b", False),
     ("set -o pipefail && pytest | tail", False), ("pytest | python summarise.py", False),
     ("ss -ltn | grep -q ':8765 '", True)],
)  # fmt: skip
def test_what_hides_the_first_command_s_status(command: str, hides: bool) -> None:
    assert masked(command) is hides


@given(st.text(max_size=80), st.booleans(), st.text(max_size=300))
def test_any_command_and_output_get_a_verdict(command: str, is_error: bool, output: str) -> None:
    found = verdict(command, is_error, output)
    assert found.state in (PASSED, FAILED, UNKNOWN, INTERRUPTED, NOT_RUN)
    assert len(found.line) <= 160
    assert found.state in (FAILED, INTERRUPTED, NOT_RUN) or not is_error


def _run(command: str, description: str, output: str, is_error: bool = False) -> Command:
    found = verdict(command, is_error, output)
    return Command(command, description, found.state == FAILED, found.line, calls=1,
                   unknown=found.state == UNKNOWN)  # fmt: skip


def test_a_failing_piped_test_run_is_never_confirmed() -> None:
    """`pytest … | tail` printed "2 failed" and exited 0 (tail's status): the story tells the
    failure, with its own line, never a ✅."""
    run = _run(PIPED, "Run the tests", PYTEST_FAILED)
    digest = Digest(user_requests=["fix the cache"], commands=[run], tool_names=["Bash"], last=run)
    assert confirmed([run], unresolved([run])) == []
    assert "NameError: name 'STATS' is not defined" in unresolved([run])[0].failure()
    assert stopped_at(digest, "/p") == (
        f"I had just run `{PIPED}` (run the tests): it failed (NameError: name 'STATS' is not "
        "defined)"
    )
    layers = layers_of(digest, "fix the cache", "Done.", "/p", [])
    assert "confirmed" not in layers["continuity"]
    assert any("NameError" in c for c in layers["tension"]["concerns"])


def test_a_run_whose_output_shows_nothing_only_ran() -> None:
    run = _run(PIPED, "Run the tests", "....... [100%]")
    digest = Digest(user_requests=["run them"], commands=[run], tool_names=["Bash"], last=run)
    assert confirmed([run], []) == [] and unresolved([run]) == []
    assert stopped_at(digest, "/p") == (
        f"I had just run `{PIPED}` (run the tests): its output does not show whether it passed"
    )
    # It does not make good an earlier failure of the same command either.
    failed = _run(PIPED, "Run the tests", PYTEST_FAILED)
    assert unresolved([failed, run]) == [failed]
    passed = _run(PIPED, "Run the tests", "7 passed in 0.20s")
    assert unresolved([failed, passed]) == [] and confirmed([failed, passed], []) != []


def test_a_later_run_of_the_same_check_makes_good_a_piped_failure() -> None:
    """`pytest … 2>&1 | tail -15` failed; `pytest …` then passed: the failure is settled, as
    a run of the same check, whatever either was piped through."""
    failed = _run(PIPED, "Run the tests", PYTEST_FAILED)
    passed = _run("python -m pytest tests -q", "Run the tests", "7 passed in 0.20s")
    assert unresolved([failed, passed]) == [] and unresolved([passed, failed]) == [failed]
    assert core("python -m pytest -q 2>&1 | grep -E 'passed|failed' | head -3") == (
        "python -m pytest -q"
    )
    assert core("echo 'a | tail'") == "echo 'a | tail'" and core("a || tail") == "a || tail"


def test_a_long_failure_line_is_cut_at_a_words_end() -> None:
    message = "ValueError: " + " ".join(f"price{i}" for i in range(40))
    found = verdict("python app.py", True, f"Exit code 1\n{message}")
    assert found.line.endswith("…") and len(found.line) <= 160
    told = found.line.removesuffix("…")
    assert f"exit 1, {message}".startswith(told) and f"exit 1, {message}"[len(told)] == " "
