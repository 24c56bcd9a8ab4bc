"""The items benchmark: pairs from a start's entries, the rules' verdicts, scores and the bar."""

from __future__ import annotations

from benchmarks.items import Pair, best_bar, by_rules, pairs_of, report_of, scored
from benchmarks.items_closed import scored as closed_scores
from benchmarks.story_judge import Judged


def _start(*entries: tuple[str, str, list[str]]) -> Judged:
    return Judged(0, True, None, [(h, e, o, []) for h, e, o in entries], [], [], [], [], False)


def test_two_entries_telling_one_labelled_item_are_one_and_disjoint_ones_are_two() -> None:
    start = _start(
        ("remains", "Start the price service for the smoke test", ["start_service"]),
        ("next step", "run the service with PRICE_DB set and rerun smoke.sh", ["start_service"]),
        ("unresolved", "`sh smoke.sh` failed: exit 7", ["smoke_fails"]),
        ("tasks", "Told nothing labelled", []),  # tells no open item: in no pair
    )
    pairs = pairs_of([(None, 1, start, ""), (None, 2, start, "")])  # the same start twice
    assert len(pairs) == 3  # each pair once, whichever start told it
    one = [p for p in pairs if p.same]
    assert len(one) == 1 and {one[0].a, one[0].b} == {
        "Start the price service for the smoke test",
        "run the service with PRICE_DB set and rerun smoke.sh",
    }
    failure = next(p for p in pairs if "smoke.sh` failed" in p.a + p.b)
    assert {failure.kind_a, failure.kind_b} == {"problem", "step"}


def test_the_rules_merge_the_same_step_and_keep_a_failure_and_its_fix_apart() -> None:
    step = "tune autovacuum for the jobs table before the rollout"
    failure = "`make lint` failed: E501 in api/client.py"
    pairs = [
        Pair("Tune autovacuum for the jobs table", step, "step", "step", True),
        Pair(failure, "wrap the long lines in api/client.py", "problem", "step", False),
    ]
    said = by_rules(pairs)
    assert said == [True, False]
    assert scored(said, pairs) == {"precision": 1.0, "recall": 1.0, "false_merges": 0, "merged": 1}
    assert scored([True, True], pairs)["false_merges"] == 1
    assert scored([False, False], pairs)["precision"] is None  # merged nothing: no precision


def test_the_best_bar_separates_when_the_cosines_do() -> None:
    pairs = [Pair("a", "b", "step", "step", s) for s in (True, True, False, False)]
    steps = [{"done": True}, {"done": False}]

    def closing(said: list[bool]) -> dict[str, object]:
        return closed_scores(said, steps)

    assert best_bar([0.9, 0.7, 0.5, 0.2], pairs) == 0.7
    data = {
        "starts_of": ["/x"],
        "pairs": 4,
        "one_item": 2,
        "embedding_model": "m",
        "judges": {"rules": scored([True, False, False, False], pairs)},
        "closes": {"pairs": 2, "steps": 1, "done": 1, "judges": {"rules": closing([True, True])}},
        "load_before": "l",
        "load_after": "l",
    }
    text = report_of(data)
    assert "| rules | 1.00 | 0.50 | 0 | – |" in text
    assert "| judge | precision | recall | closed while open |" in text
    assert "| rules | 0.50 | 1.00 | 1 | – |" in text  # closed both, one of them still open
