"""What checking a store's integrity costs at 1k/10k/100k memories (benchmark ``integrity``).

Each synthetic store (``latency.build``, with random unit vectors standing in for embeddings:
the check reads bytes, not meaning) is checkpointed and closed, then timed on fresh
connections: opening the store without a check (the baseline), the header and schema read
every open makes, the b-tree walk an open makes up to ``QUICK_CHECK_BYTES``
(``structure_check``), ``PRAGMA quick_check`` and ``PRAGMA integrity_check``, and the day's
backup: the copy through SQLite's backup API (``backup``) and that copy with the check that
makes it count (``backup + check``, what ``storage.backup.daily_backup`` does). The page cache
of the operating system is warm after the first run; medians and p95 of the warm runs are
reported.
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw

from mama_plugin.config import Config
from mama_plugin.storage import Store
from mama_plugin.storage.backup import backup_to
from mama_plugin.storage.connection import connect
from mama_plugin.storage.diagnosis import check_file
from mama_plugin.storage.integrity import (
    QUICK_CHECK_BYTES,
    quick_check,
    sanity_read,
    structure_check,
)

from .latency import build, percentile


def _vectors(store: Store, dim: int) -> None:
    rng = random.Random(5)
    pending = store.vectors.pending(10_000_000)
    for start in range(0, len(pending), 2000):
        batch = []
        for seq, _ in pending[start : start + 2000]:
            raw = [rng.gauss(0, 1) for _ in range(dim)]
            norm = sum(x * x for x in raw) ** 0.5
            batch.append((seq, [x / norm for x in raw]))
        store.vectors.put(batch)


def _timed(db: Path, fn: Callable[[apsw.Connection], object], runs: int) -> list[float]:
    out = []
    for _ in range(runs + 1):  # the first run warms the page cache and is not counted
        conn = connect(db)
        started = time.perf_counter()
        fn(conn)
        out.append((time.perf_counter() - started) * 1000)
        conn.close()
    return out[1:]


def measure(n: int, *, runs: int = 5) -> dict[str, Any]:
    """Build a store of ``n`` memories and time the checks on it."""
    with tempfile.TemporaryDirectory(prefix="mama-integrity-") as tmp:
        home = Path(tmp)
        db = home / "mama.db"
        config = Config(home)
        with Store.open(db, config=config) as store:
            build(store, n, None)
            _vectors(store, config.settings.embedding_dim)
            store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

        def opened(_: apsw.Connection) -> object:
            with Store.open(db, config=config, check="none"):
                return None

        def backed_up(conn: apsw.Connection, *, checked: bool = False) -> object:
            copy = home / "backups" / "timed.db"
            backup_to(conn, copy)
            problems = check_file(copy, limit=1) if checked else []
            copy.unlink()
            return problems

        timings = {
            "open": _timed(db, opened, runs),
            "sanity": _timed(db, sanity_read, runs),
            "structure": _timed(db, lambda c: structure_check(c, limit=1), runs),
            "quick_check": _timed(db, lambda c: quick_check(c, limit=1), runs),
            "integrity_check": _timed(
                db, lambda c: c.execute("PRAGMA integrity_check(1)").fetchall(), runs
            ),
            "backup": _timed(db, backed_up, runs),
            "backup_checked": _timed(db, lambda c: backed_up(c, checked=True), runs),
        }
        size = db.stat().st_size
    result: dict[str, Any] = {"memories": n, "db_bytes": size}
    for name, values in timings.items():
        result[f"{name}_p50_ms"] = round(percentile(values, 50), 2)
        result[f"{name}_p95_ms"] = round(percentile(values, 95), 2)
    return result


_COLUMNS = (
    "open",
    "sanity",
    "structure",
    "quick_check",
    "integrity_check",
    "backup",
    "backup_checked",
)


def integrity_run(
    sizes: list[int], *, runs: int = 5, progress: Callable[[str], None] | None = None
) -> tuple[str, dict[str, Any]]:
    """Time the integrity checks on synthetic stores; the text to print and every figure."""
    rows = []
    for n in sizes:
        rows.append(measure(n, runs=runs))
        if progress:
            progress(f"{n} memories measured")
    load = os.getloadavg()
    lines = [
        f"Integrity checks (warm page cache, median / p95 of {runs} runs; "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})",
        f"{'memories':>9} {'DB MB':>7} {'open':>13} {'header+schema':>14} "
        f"{'b-tree walk':>15} {'quick_check':>17} {'integrity_check':>17} {'backup':>17} "
        f"{'backup + check':>17}",
    ]
    for r in rows:
        cells = [f"{r[f'{k}_p50_ms']:.1f} / {r[f'{k}_p95_ms']:.1f}" for k in _COLUMNS]
        lines.append(
            f"{r['memories']:>9} {r['db_bytes'] / 1e6:>7.1f} {cells[0]:>13} {cells[1]:>14} "
            + " ".join(f"{cell:>17}" if i else f"{cell:>15}" for i, cell in enumerate(cells[2:]))
        )
    lines.append(
        "(ms; open = Store.open without a check, the baseline; an open walks the b-trees up "
        f"to {QUICK_CHECK_BYTES >> 20} MiB, above that it reads the header and schema only)"
    )
    return "\n".join(lines) + "\n", {"load_average": load, "sizes": rows, "runs": runs}
