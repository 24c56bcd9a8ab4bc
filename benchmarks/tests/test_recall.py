"""The recall benchmark: its labelled public prompts, its scores, its causes, the model judge."""

from __future__ import annotations

from pathlib import Path

from benchmarks import recall as bench_recall
from benchmarks import recall_assist, recall_causes, recall_data
from mama_plugin.config import Config
from mama_plugin.services.recall import prompt as recall
from tests.conftest import Counting


def test_the_labelled_set_is_public_and_large_enough() -> None:
    memories, cases, line = recall_data.klue()
    assert "CC BY-SA 4.0" in line and "KLUE" in line
    assert len(memories) == sum(c.related for c in cases) >= 150
    assert sum(not c.related for c in cases) >= 150
    assert {c.split for c in cases} == {"calibration", "held-out"}
    locomo = bench_recall.LOCOMO
    for candidate in (locomo, Path("/work/shared/bench/locomo10.json")):
        if candidate.is_file():
            data = recall_data.labelled(candidate)
            assert sum(c.related for c in data.cases) >= 300
            assert sum(not c.related for c in data.cases) >= 300
            break


def test_the_bench_scores_what_each_row_injects() -> None:
    cases = [
        recall_data.Case("a", frozenset({"m1"}), "ko", "klue-sts", "held-out"),
        recall_data.Case("b", frozenset({"m2"}), "en", "locomo", "held-out"),
        recall_data.Case("c", frozenset(), "ko", "klue-sts", "held-out"),
        recall_data.Case("d", frozenset(), "en", "locomo", "calibration"),
    ]
    figures = bench_recall.score(cases, [["m1", "x"], ["x"], [], ["m1"]], "held-out")
    assert figures["all"] == {"recall": 0.5, "silence": 1.0, "related": 2, "unrelated": 1}
    assert figures["ko"]["recall"] == 1.0 and figures["en"]["recall"] == 0.0


def test_the_bench_runs_on_a_slice_without_a_model() -> None:
    memories, cases, line = recall_data.klue()
    related = [c for c in cases if c.related][:6]
    unrelated = [c for c in cases if not c.related][:6]
    keep = {k for c in related for k in c.meant}
    data = recall_data.Labelled([m for m in memories if m.key in keep], related + unrelated, [line])
    figures = bench_recall.run(data, {}, bar=0.5)
    assert set(figures["rows"]) == {"today", "hybrid/keywords"}
    text = bench_recall.report(figures, load="1.0")
    assert "hybrid/keywords" in text and "held-out" in text and "CC BY-SA 4.0" in text
    row = figures["rows"]["hybrid/keywords"]
    assert row["held-out"]["all"]["related"] + row["calibration"]["all"]["related"] == 6
    # What limits it: every miss has one cause; the small stores and the smoke set ran too.
    causes = figures["causes"]["hybrid/keywords"]
    for half in ("calibration", "held-out"):
        c = causes[half]["all"]
        missed = round(c["related"] * (1 - row[half]["all"]["recall"]))
        assert sum(c[k] for k in recall_causes.CAUSES) == missed
    small = figures["small"]["hybrid/keywords"]
    assert set(small) == {str(recall.DF_PRIOR), "1.0"}
    assert small["1.0"]["all"]["pairs"] == row["held-out"]["all"]["related"]
    smoke = figures["smoke"]["hybrid/keywords"]
    assert smoke["related"] == smoke["unrelated"] == 16
    assert "by cause" in text and "one-memory stores" in text and "smoke set" in text


def held_out_slice(related: int, unrelated: int) -> recall_data.Labelled:
    """The first held-out KLUE-STS cases of each kind, with the memories the related ones mean."""
    memories, cases, line = recall_data.klue()
    asked = [c for c in cases if c.related and c.split == "held-out"][:related]
    asked += [c for c in cases if not c.related and c.split == "held-out"][:unrelated]
    keep = {k for c in asked for k in c.meant}
    return recall_data.Labelled([m for m in memories if m.key in keep], asked, [line])


def test_the_assist_judge_is_scored_against_what_each_prompt_meant() -> None:
    from mama_plugin.assist.runtime import Generation

    data = held_out_slice(4, 4)
    text = {m.key: m.content for m in data.memories}
    meant = {c.prompt: {text[k] for k in c.meant} for c in data.cases}
    asked: list[str] = []

    class Scripted:
        """Says related exactly when the prompt meant the memory."""

        name = "scripted"
        config = Config(Path("unused"))

        def generate(self, prompt, schema, **_):
            asked.append(prompt.head)
            memory, question = (line.split(": ", 1)[1] for line in prompt.head.split("\n"))
            return Generation(schema(related=memory in meant[question]), "ok", total_s=0.5)

    assert recall_assist.sample(data.cases, 3) == recall_assist.sample(data.cases, 3)
    figures = recall_assist.judge_run(data, None, Scripted(), 4, bar=0.5)  # type: ignore[arg-type]
    assert figures["prompts"] == {"related": 4, "unrelated": 4}
    assert asked and all(h.startswith("MEMORY: ") and "\nPROMPT: " in h for h in asked)
    said = figures["said_related"]
    assert said["other"]["yes"] == 0 and said["meant"]["yes"] == said["meant"]["of"] > 0
    # A judge that knows the labels keeps every meant memory found and stays silent.
    rules, model, both = (figures["rows"][k] for k in ("rules", "model", "both"))
    assert model["silence"] == 1.0 and both["silence"] == 1.0
    assert model["recall"] >= both["recall"] and rules["recall"] >= both["recall"]
    assert figures["verdict_s_p50"] == 0.5
    printed = "\n".join(recall_assist.report(figures))
    assert "says related to a memory the prompt meant" in printed
    assert "rules, then the model" in printed


def test_misses_are_told_apart_by_cause() -> None:
    def case(meant: str, split: str = "held-out") -> recall_data.Case:
        return recall_data.Case("p", frozenset({meant}), "en", "locomo", split)

    cases = [case("a"), case("b"), case("c"), case("d"), case("e"), case("f", "calibration")]
    candidates = [["a"], ["x"], ["x", "y", "z", "c"], ["d"], ["e"], []]
    passed = [["a"], ["x"], ["x", "y", "z", "c"], [], [], []]
    figures = recall_causes.causes(cases, candidates, passed, [3, 3, 3, 3, 1, 3])
    held = figures["held-out"]["all"]
    assert {k: held[k] for k in recall_causes.CAUSES} == {
        "not candidate": 1, "judged out": 1, "cut": 1, "few terms": 1,
    }  # fmt: skip
    assert held["related"] == 5 and held["ceiling"] == 0.6  # a, d, e among the first three
    assert figures["calibration"]["en"]["not candidate"] == 1


def test_one_memory_stores_embed_each_prompt_once_for_every_prior() -> None:
    data = held_out_slice(2, 1)
    model = Counting()
    figures = recall_causes.small_stores(data, model, bar=0.5)
    assert figures["1.0"]["all"]["pairs"] == 2 and figures["1.0"]["ko"]["pairs"] == 2
    asked = [c.prompt for c in data.cases]
    assert all(model.texts.count(p) == 1 for p in asked), model.texts


def test_the_tiers_count_reach_chains_and_what_unrelated_prompts_got() -> None:
    from benchmarks.recall_data import Case
    from benchmarks.recall_tiers import figures

    cases = [
        Case("a b c", frozenset({"m1"}), "en", "t", "held-out"),
        Case("d e f", frozenset({"m2"}), "en", "t", "held-out"),
        Case("g h i", frozenset(), "en", "t", "held-out"),
        Case("j k l", frozenset(), "en", "t", "held-out"),
    ]
    answers = [
        {"tier": "chain", "chains": ["m1"], "pointers": [], "tokens": 0},
        {"tier": "pointer", "chains": [], "pointers": ["m9", "m2"], "tokens": 0},
        {"tier": "pointer", "chains": [], "pointers": ["m1"], "tokens": 40},
        {"tier": "none", "chains": [], "pointers": [], "tokens": 0},
    ]
    held = figures(cases, answers)["held-out"]["en"]
    assert (held["reach"], held["chain"]) == (1.0, 0.5)
    assert (held["noise_chain"], held["noise_pointer"], held["tokens_mean"]) == (0.0, 0.5, 20.0)


def test_the_ceiling_counts_the_memory_meant_among_the_first_one_or_two() -> None:
    from benchmarks.recall_data import Case
    from benchmarks.recall_ranking import ceiling

    cases = [
        Case("a b c", frozenset({"m1"}), "en", "t", "held-out"),
        Case("d e f", frozenset({"m2"}), "en", "t", "held-out"),
        Case("g h i", frozenset({"m3"}), "en", "t", "held-out"),
        Case("j k l", frozenset(), "en", "t", "held-out"),
    ]

    def found(*ids: str) -> list:
        return [(i, 0.5, 0.5, 2, 3, False, "m") for i in ids]

    seen = [found("m1", "x"), found("x", "m2"), found("x", "y", "m3"), found("m1")]
    held = ceiling(cases, seen)["held-out"]["en"]
    assert held == {"related": 3, "top1": 0.333, "top2": 0.667}


def test_the_rankings_compared_embed_each_prompt_once() -> None:
    import tempfile

    from benchmarks import recall_ranking
    from benchmarks.recall_core import store_of

    data = held_out_slice(2, 1)
    model = Counting()
    with tempfile.TemporaryDirectory() as tmp:
        store, keys = store_of(Path(tmp), data, model)
        try:
            figures = recall_ranking.compare(
                store, data.cases, keys, (model, None), bar=0.5, say=lambda _line: None
            )
        finally:
            store.close()
    assert set(figures) == {r.name for r in recall_ranking.RANKINGS}
    asked = [c.prompt for c in data.cases]
    assert all(model.texts.count(p) == 1 for p in asked), model.texts
    text = "\n".join(recall_ranking.report({"counting": figures}))
    assert "convex 0.3:0.7" in text and "top2" in text
