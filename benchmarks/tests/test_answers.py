"""The answers benchmark: stale entries before and none after, and how it judges an answer."""

from __future__ import annotations

from benchmarks.answers import answers_run, judge
from mama_plugin.services.story.answers import ANSWER_TOKENS
from mama_plugin.storage import Store


def test_the_benchmark_finds_stale_entries_before_and_none_after() -> None:
    text, data = answers_run()
    last = data["sessions"][-1]
    assert last["before"]["stale"] > 0 and last["before"]["tokens_max"] > ANSWER_TOKENS
    for row in data["sessions"]:
        after = row["after"]
        assert after["tokens_max"] <= ANSWER_TOKENS
        assert after["auto_in_stands"] == 0 and after["repeated"] == 0
    assert "| 7 serve_mode |" in text
    story, split = data["done_detection"]["story"], data["done_detection"]["split"]
    default = next(key for key in story if key.startswith("default ("))
    for figures in (story[default], split[default]):
        assert figures["wrongly_dropped"] == 0  # no open work hidden, in the story or the cuts
    assert story[default]["right"] > 0 and story[default]["stale"] < story[default]["right"]
    start = next(iter(story))  # the rules this benchmark first ran: one open line hidden
    assert story[start]["lines_wrongly_dropped"] == [
        "run the service with price_db set and rerun smoke.sh"
    ]
    assert "done detection on the recordings cut in two" in text


def test_the_judge_counts_from_the_text(store: Store) -> None:
    judged = judge(store, "Stands now:\n- a\nRemains:\n- add the bound (HIGH)\n- b", [],
                   ["add the bound"])  # fmt: skip
    assert (judged.stands, judged.remains, judged.done_in_remains) == (1, 2, 1)
