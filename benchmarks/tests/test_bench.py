"""The benchmarks: metrics, LoCoMo evidence cleaning, and small runs of ``python -m benchmarks``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks import metrics
from benchmarks.cli import main
from benchmarks.latency import percentile
from benchmarks.locomo import clean_evidence, load


def test_metrics_by_hand() -> None:
    ranked = ["a", "x", "b", "y", "c"]
    gold = {"a", "b", "z"}
    assert metrics.recall_at(ranked, gold, 1) == pytest.approx(1 / 3)
    assert metrics.recall_at(ranked, gold, 5) == pytest.approx(2 / 3)
    assert metrics.all_at(ranked, gold, 5) == 0.0 and metrics.all_at(ranked, {"a", "b"}, 3) == 1.0
    assert (
        metrics.reciprocal_rank(["x", "b"], gold) == 0.5
        and metrics.reciprocal_rank([], gold) == 0.0
    )
    ideal = 1 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)  # three gold, ranks 1..3
    dcg = 1 / math.log2(2) + 1 / math.log2(4)  # hits at ranks 1 and 3
    assert metrics.ndcg_at(ranked, gold, 10) == pytest.approx(dcg / ideal)
    assert metrics.distinct(["s1", "s2", "s1", "s3"]) == ["s1", "s2", "s3"]


@given(st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=8),
       st.sets(st.sampled_from("abcdefgh"), min_size=1), st.integers(1, 8))  # fmt: skip
def test_metrics_stay_in_range_and_grow_with_k(ranked, gold, k) -> None:
    for fn in (metrics.recall_at, metrics.all_at, metrics.ndcg_at):
        assert 0.0 <= fn(ranked, gold, k) <= 1.0 + 1e-9
    assert metrics.recall_at(ranked, gold, k) <= metrics.recall_at(ranked, gold, k + 1)
    assert metrics.ndcg_at(list(gold), gold, len(gold)) == pytest.approx(1.0)


def test_percentile() -> None:
    assert percentile([1, 2, 3, 4, 5], 50) == 3
    assert percentile([10, 20], 95) == pytest.approx(19.5)
    assert percentile([], 95) == 0.0


def test_malformed_evidence_is_cleaned() -> None:
    known = {"D8:6", "D9:17", "D11:26", "D30:5", "D1:1"}
    assert clean_evidence(["D8:6; D9:17"], known) == (["D8:6", "D9:17"], ["D8:6; D9:17"], [])
    assert clean_evidence(["D:11:26"], known)[0] == ["D11:26"]
    assert clean_evidence(["D30:05"], known)[0] == ["D30:5"]
    assert clean_evidence(["D"], known) == ([], ["D"], ["D"])
    assert clean_evidence(["D4:36", "D1:1"], known) == (["D1:1"], [], ["D4:36"])


def _mini_locomo(tmp_path: Path) -> tuple[Path, Path]:
    sessions = {
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy named Biscuit!"},
            {"speaker": "Bo", "dia_id": "D1:2", "text": "What breed is Biscuit?"},
            {"speaker": "Ann", "dia_id": "D1:3", "text": "A beagle, he loves the beach",
             "blip_caption": "a photo of a beagle on sand"},
        ],
        "session_2_date_time": "10:00 am on 9 June, 2023",
        "session_2": [
            {"speaker": "Bo", "dia_id": "D2:1", "text": "I started pottery classes downtown"},
            {"speaker": "Ann", "dia_id": "D2:2", "text": "Send me a picture of your first bowl"},
        ],
    }  # fmt: skip
    qa = [
        {"question": "What is the name of Ann's puppy?", "answer": "Biscuit", "evidence": ["D1:1"], "category": 4},
        {"question": "What breed is the puppy?", "answer": "beagle", "evidence": ["D01:3"], "category": 4},
        {"question": "When did Bo start pottery?", "answer": "June 2023", "evidence": ["D2:1; D2:2"], "category": 2},
        {"question": "What did Ann adopt?", "answer": "a puppy", "evidence": ["D9:9"], "category": 1},
        {"question": "What does Bo teach?", "adversarial_answer": "pottery", "evidence": ["D2:1"], "category": 5},
    ]  # fmt: skip
    dataset = tmp_path / "locomo10.json"
    dataset.write_text(
        json.dumps(
            [
                {
                    "sample_id": "s0",
                    "conversation": {"speaker_a": "Ann", "speaker_b": "Bo", **sessions},
                    "qa": qa,
                }
            ]
        )
    )
    audit = tmp_path / "locomo_audit_errors.json"
    audit.write_text(json.dumps([{"question_id": "locomo_0_qa1", "question": "What breed is the puppy?",
                                  "error_type": "WRONG_CITATION", "correct_evidence": ["D1:2", "D1:3"]}]))  # fmt: skip
    return dataset, audit


def test_load_cleans_and_applies_the_audit(tmp_path: Path) -> None:
    dataset, audit = _mini_locomo(tmp_path)
    conversations, cleaning = load(dataset, audit)
    questions = conversations[0].questions
    assert [q.original for q in questions] == [["D1:1"], ["D1:3"], ["D2:1", "D2:2"], ["D2:1"]]
    assert questions[1].audited == ["D1:2", "D1:3"]
    assert cleaning.questions_without_evidence == ["conv 0 q3"]
    assert (
        conversations[0].turns[2][2]
        == "Ann: A beagle, he loves the beach [shares a photo of a beagle on sand]"
    )


def test_bench_retrieval_keyword_only_end_to_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset, _ = _mini_locomo(tmp_path)
    out = tmp_path / "r.json"
    assert main(["retrieval", "--dataset", str(dataset), "--keyword-only", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "== evidence: original ==" in text and "== evidence: audited ==" in text
    data = json.loads(out.read_text())
    assert data["headline_questions"] == 3 and data["turns"] == 5
    assert 0.0 < data["turn_r10"] <= 1.0 and data["session_r10"] == 1.0
    assert set(data["figures"]["original"]) == {"bm25", "full", "today"}
    assert data["figures"]["original"]["bm25"]["turn"]["5"]["n"] == 1
    assert "turn R@5 / R@10 by category" in text and "session R@5 / R@10" in text


def test_bench_retrieval_with_the_real_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset, _ = _mini_locomo(tmp_path)
    out = tmp_path / "r.json"
    assert main(["retrieval", "--dataset", str(dataset), "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert {"full", "today", "bm25", "keyword", "vector", "+links", "-updates"} <= set(
        data["figures"]["original"]
    )
    assert data["embedding_model"] == "all-MiniLM-L6-v2"
    assert data["figures"]["original"]["full"]["turn"]["1-4"]["r10"] == 1.0  # 5 turns, k = 10


def test_bench_latency_small(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "lat.json"
    assert (
        main(
            [
                "latency",
                "--sizes",
                "300",
                "--queries",
                "5",
                "--keyword-only",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    data = json.loads(out.read_text())
    for key in ("search_p95_ms_300", "traverse_p95_ms_300", "save_p95_ms_300"):
        assert data[key] > 0
    assert data["sizes"]["300"]["db_bytes"] > 0
    assert "memories" in capsys.readouterr().out


def test_bench_needs_a_dataset(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["retrieval", "--keyword-only"])
    assert info.value.code == 2
    assert "required: --dataset" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["retrieval", "startup", "presence", "answers"])
def test_each_kind_takes_only_its_own_options(
    kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--help`` lists a kind's own options; another kind's option is a usage error."""
    from benchmarks.cli import build_parser

    with pytest.raises(SystemExit) as info:
        build_parser().parse_args([kind, "--help"])
    assert info.value.code == 0
    usage = capsys.readouterr().out
    assert usage.startswith(f"usage: python -m benchmarks {kind}") and "--json OUT" in usage
    assert ("--keyword-only" in usage) == (kind in ("retrieval", "answers"))
    assert ("--runs" in usage) == (kind in ("startup", "presence"))
    assert "--baseline-plugin" not in usage or kind == "presence"
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args([kind, "--plugin-dir", "x"])  # warm's alone
    assert info.value.code == 2


def test_bench_startup(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "s.json"
    assert main(["startup", "--runs", "2", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["serve_to_tools_list_p50_ms"] > data["bare_python_p50_ms"] > 0
    assert "first tools/list answered" in capsys.readouterr().out


def test_presence_reads_a_baseline_checkouts_store_without_upgrading_it(tmp_path: Path) -> None:
    """``--baseline-plugin`` runs an older checkout on its own store: checking its run must
    not migrate that store to this code's schema (its server would then refuse to open it)."""
    import sqlite3

    from benchmarks import presence
    from mama_plugin.config import Config
    from mama_plugin.storage import Store

    home = tmp_path / "mama"
    with Store.open(config=Config(home)):
        pass
    db = Config(home).db_path
    older = sqlite3.connect(db)
    (latest,) = older.execute("PRAGMA user_version").fetchone()
    older.execute(f"PRAGMA user_version = {latest - 1}")  # as an older MAMA left it
    older.commit()
    older.close()
    assert presence._checkpoint_written(home, "no-such-session") is False
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (latest - 1,)


def test_presence_refuses_a_baseline_checkout_without_its_environment(tmp_path: Path) -> None:
    from benchmarks import presence
    from mama_plugin.errors import MamaError

    if not presence.CLAUDE.exists():
        pytest.skip("needs Claude Code (scripts/setup.sh --dev)")
    with pytest.raises(MamaError, match=r"has no environment \(\.venv\).*ln -s"):
        presence.presence_run(1, baseline=tmp_path)
