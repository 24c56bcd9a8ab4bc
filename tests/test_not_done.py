"""What did not happen is not told as done: a refused save, an interrupted command, a failed
write (issue 35, item 5), read from transcript lines shaped as Claude Code 2.1.197 writes them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mama_plugin.services.render import because, clip, confidence
from mama_plugin.services.story.autosave import activity, layers_of
from mama_plugin.services.story.commands import stopped_at
from mama_plugin.transcript import Digest, read_transcript

SAVE = "mcp__plugin_mama_mama__save_decision"
NOT_READY = (
    "MAMA is installing its Python environment (first run: about a minute for the core; progress "
    "in /h/.mama/logs/bootstrap.log). Nothing was saved or looked up by this call. This session's "
    "work will be checkpointed automatically once the environment is ready."
)


def _transcript(tmp_path: Path, calls: list[tuple[str, dict[str, Any], str, bool]]) -> Path:
    """A transcript of one request and ``calls`` (tool, input, result text, is_error)."""
    lines: list[dict[str, Any]] = [
        {"type": "user", "cwd": "/p", "message": {"role": "user", "content": "fix the cache"}}
    ]
    for i, (name, arguments, result, error) in enumerate(calls):
        use = {"type": "tool_use", "id": f"t{i}", "name": name, "input": arguments}
        lines.append({"type": "assistant", "message": {"role": "assistant", "content": [use]}})
        block = {"type": "tool_result", "tool_use_id": f"t{i}", "content": result}
        lines.append(
            {"type": "user", "message": {"role": "user", "content": [block | {"is_error": error}]}}
        )
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


def test_a_refused_save_is_told_as_not_saved(tmp_path: Path) -> None:
    digest = read_transcript(
        _transcript(tmp_path, [(SAVE, {"topic": "cache", "decision": "TTL"}, NOT_READY, True)])
    )
    layers = layers_of(digest, "fix the cache and save the decision", "Saved.", "/p", [])
    assert layers["tension"]["concerns"] == [
        "not saved: save_decision answered “MAMA is installing its Python environment (first "
        "run: about a minute for the core; progress in /h/.mama/logs/bootstrap.log).”"
    ]
    assert layers["metadata"]["work"] is False  # a refused save did nothing


def test_a_save_that_went_through_later_makes_the_refusal_good(tmp_path: Path) -> None:
    digest = read_transcript(
        _transcript(
            tmp_path,
            [
                (SAVE, {"topic": "cache"}, NOT_READY, True),
                (SAVE, {"topic": "cache"}, "Saved dec_1.", False),
            ],
        )
    )
    assert digest.refused == []


def test_a_failed_edit_is_told_as_not_in_the_file(tmp_path: Path) -> None:
    edit = {"file_path": "/p/app/cache.py", "old_string": "x", "new_string": "y"}
    digest = read_transcript(
        _transcript(
            tmp_path,
            [
                (
                    "Edit",
                    edit,
                    "<tool_use_error>String to replace not found in file.\nString: x"
                    "</tool_use_error>",
                    True,
                )
            ],
        )
    )
    layers = layers_of(digest, "fix the cache", "Done.", "/p", [])
    assert layers["tension"]["concerns"] == [
        "the edit of app/cache.py failed, so it is not in the file: String to replace not found "
        "in file."
    ]
    assert layers["continuity"]["open_files"] == [] and layers["metadata"]["work"] is False
    assert stopped_at(digest, "/p") == ""


def test_an_interrupted_command_is_not_a_pass_and_a_refused_one_did_nothing(
    tmp_path: Path,
) -> None:
    timed_out = ("Bash", {"command": "pytest -q", "description": "Run the tests"},
                 "Exit code 143\nCommand timed out after 2m 0s", True)  # fmt: skip
    blocked = ("Bash", {"command": "rm -rf build", "description": "Clean"},
               "Claude requested permissions to use Bash, but you haven't granted it yet.", True)  # fmt: skip
    digest = read_transcript(_transcript(tmp_path, [timed_out, blocked]))
    layers = layers_of(digest, "fix the cache", "Done.", "/p", [])
    assert stopped_at(digest, "/p") == (
        "I had just run `pytest -q` (run the tests): it was interrupted (Command timed out after "
        "2m 0s)"
    )
    assert layers["tension"]["concerns"] == [
        "`pytest -q` was interrupted (Run the tests): Command timed out after 2m 0s"
    ]
    assert "confirmed" not in layers["continuity"]
    only_refused = read_transcript(_transcript(tmp_path, [blocked]))
    assert layers_of(only_refused, "clean", "Done.", "/p", [])["metadata"]["work"] is False
    assert stopped_at(only_refused, "/p") == ""


def test_a_session_that_recorded_an_outcome_says_so() -> None:
    tools = ["mcp__plugin_mama_mama__search_by_context", "mcp__plugin_mama_mama__evolve_outcome"]
    assert activity(Digest(tool_names=tools)) == "recorded an outcome and searched memory"
    assert activity(Digest(tool_names=tools[:1])) == "searched memory"
    assert activity(Digest(tool_names=["Read"])) == "changed nothing"


def test_the_words_the_model_reads_as_its_own() -> None:
    """A confidence is told as recorded, a cut ends at a word, "because" takes no capital
    unless the word is a name."""
    assert [confidence(x) for x in (0.75, 0.8, 1.0, 0.333)] == ["0.75", "0.8", "1.0", "0.33"]
    assert clip("replace the lru_cache with a TTL cache", 30) == "replace the lru_cache with a…"
    assert clip("가격캐시를무효화한다" * 5, 12) == "가격캐시를무효화한다가…"
    assert because("The p99 was 307 ms") == "because the p99 was 307 ms"
    assert because("Redis is already run") == "because Redis is already run"
    assert because("JWT refresh hit the DB") == "because JWT refresh hit the DB"


def test_a_pronoun_in_a_next_step_keeps_its_referent() -> None:
    last = "The _entries dict grows without bound. Next: cap it at 1024."
    layers = layers_of(Digest(user_requests=["bound the cache"]), "bound the cache", last, "/p", [])
    assert layers["continuity"]["next_steps"][0] == {
        "step": "cap it at 1024",
        "priority": "HIGH",
        "context": "“it” is what I said just before: “The _entries dict grows without bound.”",
    }
    plain = layers_of(Digest(), "x", "Next: check that the cache expires entries.", "/p", [])
    assert plain["continuity"]["next_steps"][0]["context"] == "from Claude's last message"


def test_a_file_written_after_a_failed_edit_is_made_good(tmp_path: Path) -> None:
    failed = ("Edit", {"file_path": "/p/a.py", "old_string": "x", "new_string": "y"},
              "<tool_use_error>File has not been read yet.</tool_use_error>", True)  # fmt: skip
    written = ("Write", {"file_path": "/p/a.py", "content": "y\n"}, "File created", False)
    assert read_transcript(_transcript(tmp_path, [failed, written])).refused == []


def test_what_a_failed_write_held_written_elsewhere_makes_it_good(tmp_path: Path) -> None:
    """/proc refused the release notes; CHANGELOG.md took them (truth_edits): done. A later
    Write of something else leaves the failure told."""
    notes = "# stock 0.2\n\n- receive() is now restock()\n"
    failed = ("Write", {"file_path": "/proc/notes.md", "content": notes},
              "ENOENT: no such file or directory, open '/proc/notes.md.tmp'", True)  # fmt: skip
    moved = "# Changelog\n\n## 0.2\n\n- `Ledger.receive()` is now `Ledger.restock()`.\n"
    elsewhere = ("Write", {"file_path": "/p/CHANGELOG.md", "content": moved}, "File created", False)
    assert read_transcript(_transcript(tmp_path, [failed, elsewhere])).refused == []
    other = (
        "Write",
        {"file_path": "/p/b.py", "content": "def restock(sku, n): ...\n"},
        "ok",
        False,
    )
    (left,) = read_transcript(_transcript(tmp_path, [failed, other])).refused
    assert left.target == "/proc/notes.md" and left.tool == "Write"


def test_a_concern_is_told_as_a_sentence_of_its_own() -> None:
    last = "Sentinel is configured. But the replica lags 2 s under peak load."
    layers = layers_of(Digest(user_requests=["set up HA"]), "set up HA", last, "/p", [])
    assert layers["tension"]["concerns"] == ["The replica lags 2 s under peak load."]
