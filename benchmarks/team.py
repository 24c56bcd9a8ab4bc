"""``python -m benchmarks team``: the team store's sync throughput and save-to-appearance lag.

A real PostgreSQL with pgvector (:mod:`.pgcluster`) and two developers, each with a MAMA home
of their own. Alice's store gets ``--size`` memories; connecting queues them, one sync pass
pushes them (push throughput), Bob's first pass pulls them all (pull throughput). Then both
run the product's :class:`~mama_plugin.team.follow.Follower` in a thread each, as the MCP
server does, and Alice saves ``--saves`` decisions one after another: the lag is the time from
her save's commit to the memory being in Bob's store (read every 5 ms).
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from mama_plugin.cli.options import argument, command
from mama_plugin.config import Config
from mama_plugin.errors import MamaError
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.storage import Store
from mama_plugin.storage.records import NewMemory
from mama_plugin.team.follow import POLL_S

from .latency import percentile
from .options import count, figures_option, progress, report

PROJECT = "/bench/{who}/shop"
LAG_DEADLINE_S = 60.0


def _fill(store: Store, project: str, size: int) -> None:
    with store.transaction():
        for i in range(size):
            store.memories.insert(
                NewMemory(
                    type="decision",
                    project=project,
                    topic=f"area {i % 97}",
                    content=f"decision {i}: use component {i % 113} for service {i % 89}",
                    reasoning={"primary": f"measured {i % 50} ms faster in the load test"},
                    specifics=[f"{i % 300} req/s"],
                )
            )


def _follow(store: Store, project: str, stop: threading.Event, poll_s: float) -> None:
    from mama_plugin.team.follow import Follower

    follower = Follower(store, project, poll_s=poll_s)
    try:
        while not stop.is_set():
            follower.step()
    finally:
        follower.close()


def team_run(size: int, saves: int, poll_s: float) -> tuple[str, dict[str, Any]]:
    """Run the benchmark; its report text and figures."""
    from mama_plugin.team import admin
    from mama_plugin.team.joining import join
    from mama_plugin.team.sync import sync_project

    from .pgcluster import start_cluster

    cluster = start_cluster()
    stores: dict[str, Store] = {}
    try:
        database = cluster.new_database()
        owner = cluster.url(database)
        admin.setup(owner)
        with tempfile.TemporaryDirectory(prefix="mama-team-bench-") as tmp:
            for who in ("alice", "bob"):
                admin.grant(owner, f"bench_{who}", "shop")
                stores[who] = Store.open(config=Config(Path(tmp) / who))
            alice, bob = stores["alice"], stores["bob"]
            a_project, b_project = PROJECT.format(who="alice"), PROJECT.format(who="bob")
            progress(f"saving {size} memories in Alice's store")
            _fill(alice, a_project, size)
            join(alice, a_project, cluster.url(database, "bench_alice"), "shop")
            progress("Alice's first sync")
            pushed = sync_project(alice, a_project)
            join(bob, b_project, cluster.url(database, "bench_bob"), "shop")
            progress("Bob's first sync")
            pulled = sync_project(bob, b_project)
            for r in (pushed, pulled):
                if r.error:
                    raise MamaError(r.error)
            got = sum(pulled.pulled.values())
            lags = _lags(alice, a_project, bob, saves, poll_s)
    finally:
        for store in stores.values():
            store.close()
        cluster.close()
    lag = {
        "p50": percentile(lags, 50),
        "p95": percentile(lags, 95),
        "max": max(lags),
        "runs": len(lags),
    }
    figures: dict[str, Any] = {
        "memories": size,
        "push_seconds": pushed.seconds,
        "push_per_s": pushed.pushed_memories / pushed.seconds,
        "pull_seconds": pulled.seconds,
        "pull_per_s": got / pulled.seconds,
        "pulled": got,
        "poll_s": poll_s,
        "lag_ms": lag,
    }
    text = (
        f"team store: {size} memories on a real PostgreSQL + pgvector, two developers\n"
        f"  push   {pushed.pushed_memories} memories in {pushed.seconds:.2f} s = "
        f"{figures['push_per_s']:.0f} memories/s\n"
        f"  pull   {got} memories in {pulled.seconds:.2f} s = {figures['pull_per_s']:.0f} "
        "memories/s (into an empty store: inserted, full-text indexed, queued to embed)\n"
        f"  lag    save on Alice → in Bob's store, {lag['runs']} saves, followers polling the "
        f"outbox every {poll_s:g} s and listening for the database's announcements:\n"
        f"         p50 {lag['p50']:.0f} ms, p95 {lag['p95']:.0f} ms, max {lag['max']:.0f} ms\n"
    )
    return text, figures


def _lags(alice: Store, a_project: str, bob: Store, saves: int, poll_s: float) -> list[float]:
    stop = threading.Event()
    threads = [
        threading.Thread(target=_follow, args=(s, p, stop, poll_s), daemon=True)
        for s, p in ((alice, a_project), (bob, PROJECT.format(who="bob")))
    ]
    for t in threads:
        t.start()
    lags: list[float] = []
    try:
        time.sleep(2 * poll_s)  # both listening
        for i in range(saves):
            saved = save_decision(
                alice,
                a_project,
                {
                    "topic": f"lag {i}",
                    "decision": f"lag probe {i}",
                    "reasoning": {"primary": "measures the team sync"},
                },
            ).memory.id
            start = time.perf_counter()
            deadline = start + LAG_DEADLINE_S
            while bob.memories.get(saved) is None:
                if time.perf_counter() > deadline:
                    raise MamaError(f"{saved} did not reach Bob in {LAG_DEADLINE_S:.0f} s")
                time.sleep(0.005)
            lags.append((time.perf_counter() - start) * 1000)
            progress(f"save {i + 1}/{saves}: {lags[-1]:.0f} ms")
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=10)
    return lags


@command("team", "team store on PostgreSQL + pgvector: sync memories/s and save-to-teammate lag")
@argument(
    "--size", type=count, default=10_000, metavar="N", help="memories on the server (default 10000)"
)
@argument("--saves", type=count, default=10, metavar="N", help="saves timed for lag (default 10)")
@argument(
    "--poll",
    type=float,
    default=POLL_S,
    metavar="S",
    help=f"how often a follower looks at its outbox (default {POLL_S}, the MCP server's)",
)
@figures_option()
def team(args: argparse.Namespace) -> int:
    return report(args, *team_run(args.size, args.saves, args.poll))
