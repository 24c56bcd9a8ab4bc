"""``python -m benchmarks share``: what ``mama share`` costs at each size, both ways.

For each size, one developer's store gets that many decisions (narrative layers, a link every
tenth one); the benchmark times the first share (every file written), a share that finds
nothing to do (the run-twice case), the session start's check of ``.mama/`` while nothing
changed, then a second developer's import into an empty store (every file parsed, inserted
and queued for embedding; embedding is the server's and not timed), and that import again
with nothing new.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mama_plugin.config import Config
from mama_plugin.share import scan
from mama_plugin.share.sync import Sharing
from mama_plugin.storage import NewMemory, Store


def _fill(store: Store, project: str, n: int) -> None:
    ids: list[str] = []
    with store.transaction():
        for i in range(n):
            memory, _ = store.memories.insert(
                NewMemory(
                    type="decision",
                    project=project,
                    topic=f"topic_{i % 97}",
                    content=f"Decision {i}: use option {i % 7} for component {i % 31}",
                    reasoning={
                        "primary": f"measured {i % 50} ms p99 against {i % 13} alternatives",
                        "alternatives_considered": [
                            {"option": f"option {i % 5}", "rejected_because": "slower"}
                        ],
                    },
                    evidence=[{"source": f"bench/run_{i % 40}.txt:{i % 90}-{i % 90 + 9}"}],
                    tension={"risks": [f"risk {i % 11}"]},
                    continuity={"next_steps": [{"step": f"follow up {i}", "priority": "LOW"}]},
                    tags=[f"area{i % 9}"],
                )
            )
            if ids and i % 10 == 0:
                store.links.add(memory.id, ids[-1], "refines", f"narrows decision {i - 1}")
            ids.append(memory.id)


def _median_ms(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def measure(n: int, *, runs: int) -> dict[str, Any]:
    """The figures of one size."""
    with tempfile.TemporaryDirectory(prefix="mama-share-bench-") as tmp:
        root = Path(tmp) / "checkout"
        (root / ".git").mkdir(parents=True)
        project = str(root)
        homes = [Path(tmp) / "home-a", Path(tmp) / "home-b"]
        configs = [Config(h) for h in homes]
        with Store.open(config=configs[0]) as store:
            _fill(store, project, n)
            alice = Sharing(store, configs[0], project, root)
            started = time.perf_counter()
            written = alice.share()
            alice.stamp()
            first_s = time.perf_counter() - started
            again_ms = _median_ms(alice.share, runs)
        files = scan.listing(root)
        notice_ms = _median_ms(lambda: scan.notice(homes[0], project), runs)
        with Store.open(config=configs[1]) as store:
            bob = Sharing(store, configs[1], project, root)
            started = time.perf_counter()
            imported = bob.import_files()
            bob.stamp()
            import_s = time.perf_counter() - started
            reimport_ms = _median_ms(bob.import_files, runs)
        return {
            "memories": n,
            "files": len(files),
            "bytes": sum(s.st_size for s in files.values()),
            "first_share_s": first_s,
            "first_share_per_s": len(written.written) / first_s,
            "share_again_ms": again_ms,
            "notice_ms": notice_ms,
            "import_s": import_s,
            "import_per_s": len(imported.imported) / import_s,
            "links_imported": imported.links_added,
            "import_again_ms": reimport_ms,
            "problems": len(written.problems) + len(imported.problems),
        }


def share_run(
    sizes: list[int], *, runs: int = 5, progress: Callable[[str], None] | None = None
) -> tuple[str, dict[str, Any]]:
    """Time sharing and importing at each size; the text to print and every figure."""
    rows = []
    for n in sizes:
        rows.append(measure(n, runs=runs))
        if progress:
            progress(f"{n} memories shared and imported")
    load = os.getloadavg()
    lines = [
        f"mama share (medians of {runs} runs where repeated; load average "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f})",
        f"{'memories':>9} {'MB':>6} {'first share s':>14} {'files/s':>8} {'again ms':>9} "
        f"{'notice ms':>10} {'import s':>9} {'memories/s':>11} {'again ms':>9} {'problems':>9}",
    ]
    for r in rows:
        lines.append(
            f"{r['memories']:>9} {r['bytes'] / 1e6:>6.1f} {r['first_share_s']:>14.2f} "
            f"{r['first_share_per_s']:>8.0f} {r['share_again_ms']:>9.0f} {r['notice_ms']:>10.1f} "
            f"{r['import_s']:>9.2f} {r['import_per_s']:>11.0f} {r['import_again_ms']:>9.0f} "
            f"{r['problems']:>9}"
        )
    lines.append(
        "(again: a share or an import that finds nothing to do; notice: the session start's "
        "check of .mama/ while nothing changed)"
    )
    return "\n".join(lines) + "\n", {"load_average": list(load), "sizes": rows}
