"""Save latency under concurrent writers: 8 processes saving at once against one alone.

SQLite lets one writer in at a time; the others wait in its busy handler, which sleeps in
growing steps (up to 100 ms) between tries, so a save's latency grows a long tail under
contention even when nothing is lost. Each writer is its own process (as separate Claude Code
sessions and the CLI are), opens the store as they do and times ``saves`` decisions, each a
``BEGIN IMMEDIATE`` transaction through ``services.memories.save_decision``. The two setups
take turns on a fresh store; every save must be acknowledged and found afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from .checkout import ROOT
from .latency import percentile

WORKER = """
import json, sys, time
from pathlib import Path
from mama_plugin.config import Config
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.storage import Store
home, name, saves = sys.argv[1], sys.argv[2], int(sys.argv[3])
took = []
with Store.open(config=Config(Path(home))) as store:
    sys.stdin.readline()  # every writer starts together
    for i in range(saves):
        started = time.perf_counter()
        save_decision(store, "/bench/writers", {"topic": f"{name}_{i}", "decision": f"Use {i}",
                      "reasoning": "a save timed under concurrent writers"})
        took.append((time.perf_counter() - started) * 1000)
print(json.dumps(took))
"""


def _round(writers: int, saves: int) -> list[float]:
    """Latencies (ms) of every save by ``writers`` processes started together on one store."""
    with tempfile.TemporaryDirectory(prefix="mama-writers-") as home:
        env = {**os.environ, "MAMA_HOME": home, "PYTHONPATH": str(ROOT)}
        from mama_plugin.config import Config
        from mama_plugin.storage import Store

        Store.open(config=Config(Path(home))).close()  # created and migrated before the race
        procs = [subprocess.Popen([sys.executable, "-c", WORKER, home, f"w{k}", str(saves)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  env=env) for k in range(writers)]  # fmt: skip
        outs = [p.communicate("go\n", timeout=600)[0] for p in procs]
        took = [ms for out in outs for ms in json.loads(out)]
        with Store.open(config=Config(Path(home))) as store:
            kept = len(store.memories.recent(project="/bench/writers", limit=writers * saves))
        if kept != writers * saves or len(took) != kept:
            raise RuntimeError(f"{writers} writers: {len(took)} acknowledged, {kept} stored")
        return took


def writers_run(saves: int = 200, writers: int = 8) -> tuple[str, dict[str, object]]:
    """``saves`` saves by one writer alone, then by each of ``writers`` at once; the tails."""
    load_before = os.getloadavg()
    alone, together = _round(1, saves), _round(writers, saves)
    load_after = os.getloadavg()
    data: dict[str, object] = {"saves_per_writer": saves, "writers": writers}
    for name, values in (("alone", alone), ("together", together)):
        for q in (50, 95, 99):
            data[f"{name}_p{q}_ms"] = round(percentile(values, q), 1)
        data[f"{name}_max_ms"] = round(max(values), 1)
    data["p95_ratio"] = round(percentile(together, 95) / percentile(alone, 95), 1)
    data["load_average"] = [round(x, 2) for x in (*load_before, *load_after)]
    text = (
        f"save latency, {saves} saves per writer (every save acknowledged and stored), ms:\n"
        f"  {'':<22} {'p50':>7} {'p95':>7} {'p99':>7} {'max':>7}\n"
        + "".join(
            f"  {label:<22} {data[k + '_p50_ms']:>7} {data[k + '_p95_ms']:>7} "
            f"{data[k + '_p99_ms']:>7} {data[k + '_max_ms']:>7}\n"
            for label, k in (
                ("one writer alone", "alone"),
                (f"{writers} writers at once", "together"),
            )
        )
        + f"  p95 under {writers} writers: x{data['p95_ratio']} the p95 alone; load average "
        f"{load_before[0]:.2f} before, {load_after[0]:.2f} after ({os.cpu_count()} CPUs)\n"
    )
    return text, data
