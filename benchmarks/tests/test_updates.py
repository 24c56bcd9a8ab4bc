"""The latest-first benchmark (SituatedQA's temporal split) on a small file."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import updates
from mama_plugin.schema.queries import instant_ms


def test_update_bench_on_a_small_file(tmp_path: Path) -> None:
    rows = [
        {"question": "who leads the band", "id": 1, "date": "2010", "date_type": "start",
         "answer": ["Ann"]},
        {"question": "who leads the band", "id": 1, "date": "March 02, 2015",
         "date_type": "start", "answer": ["Bo"]},
        {"question": "who leads the band", "id": 1, "date": "2016", "date_type": "sampled_year",
         "answer": ["Bo"]},
        {"question": "who leads the band", "id": 1, "date": "2012",
         "date_type": "sampled_year", "answer": ["Ann"]},
        {"question": "what colour is the sky", "id": 2, "date": "2020", "date_type": "orig",
         "answer": ["blue"]},
    ]  # fmt: skip
    path = tmp_path / "temp.test.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    facts = updates.load(path)
    assert [(f.question, f.static) for f in facts] == [
        ("who leads the band", False),
        ("what colour is the sky", True),
    ]
    assert facts[0].versions["Bo"] == instant_ms("2015-03-02")
    rates = updates.run(facts, None)
    full = rates["full"]
    assert (full["latest"]["n"], full["as_of"]["n"], full["static"]["n"]) == (1, 1, 1)
    assert full["latest"]["rate"] == full["as_of"]["rate"] == full["static"]["rate"] == 1.0
    assert set(rates) == {"bm25", "today", "as_of only", "full"}
    assert "latest first" in updates.table(rates)
