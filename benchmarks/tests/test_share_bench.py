"""``python -m benchmarks share`` on a small store: every file written is imported, nothing lost."""

from __future__ import annotations

from benchmarks.share import measure, share_run


def test_every_memory_shared_is_imported_by_the_teammate() -> None:
    row = measure(12, runs=1)
    assert row["files"] == 12 and row["problems"] == 0
    assert row["links_imported"] == 1  # the 11th refines the 10th
    text, data = share_run([5], runs=1)
    assert "memories/s" in text and data["sizes"][0]["files"] == 5
