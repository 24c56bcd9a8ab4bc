"""``python -m benchmarks view``: how long ``mama view``'s page takes to load in a browser.

A synthetic store of each size (:func:`build_store`: a base saved through the product's save
path — supersede chains, outcomes, checkpoints, associations — then grown by copies with
their links, spread over a year and over sessions, a few link suggestions left pending) is
gathered and written as ``mama view`` does, then opened in headless Chromium
(:class:`.browser.Page`). Printed per size: the page's bytes, gathering and writing in
Python, and the browser's figures: ``drawn`` is ``performance.now()`` when the page's script
has drawn every section (from navigation start: parsing the HTML and the embedded JSON
included), ``opened`` the wall time from navigation to that, then three choices a person
makes, each timed inside the page around its own handler: a topic chosen in the graph's
filter (single memories laid out), the filters reset (back to the whole store), the chains'
next page.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from mama_plugin.config import Config
from mama_plugin.storage import Store, now_ms

from . import browser
from .synthetic import save_generated

PROJECT = "/bench/view"
BASE = 600  # memories saved through the save path; a larger store grows by copies
YEAR_MS = 365 * 24 * 3600 * 1000
SESSION_SIZE = 25  # memories per synthetic session


def build_store(store: Store, n: int, *, project: str = PROJECT, now: int | None = None) -> None:
    """``n`` synthetic memories of ``project``: chains, outcomes, links, pending suggestions.

    Benchmarks and tests only (writes ``store.conn`` directly past the base).
    """
    now = now_ms() if now is None else now
    save_generated(store, project, min(n, BASE), lessons=True)
    conn = store.conn
    with store.transaction():
        _grow(conn, n)
        # Spread over a year, oldest first; an outcome a week after its decision.
        conn.execute(
            "UPDATE memories SET created_at = ? - (? - seq) * ?, updated_at = ? - (? - seq) * ?, "
            "session_id = 'session-' || (seq / ?) WHERE project = ?",
            (now, n, YEAR_MS // n, now, n, YEAR_MS // n, SESSION_SIZE, project),
        )
        conn.execute(
            "UPDATE memories SET outcome = json_set(outcome, '$.recorded_at', "
            "created_at + 7 * 86400000) WHERE outcome_status != 'PENDING' AND project = ?",
            (project,),
        )
        rows = conn.execute(
            "SELECT b.id, a.id FROM memories a JOIN memories b ON a.topic = b.topic "
            "AND a.seq < b.seq WHERE a.type = 'decision' AND b.type = 'decision' "
            "AND a.project = ? AND b.project = ? LIMIT 40",
            (project, project),
        ).fetchall()
        for newer, older in rows:
            conn.execute(
                "INSERT INTO link_suggestions(project, from_id, to_id, relationship, reason, "
                "sources, score, judged_by, status, created_at, decided_by) VALUES "
                "(?, ?, ?, 'refines', 'same topic, later decision', '[\"topic\"]', 0.6, "
                "'rules', 'pending', ?, '')",
                (project, newer, older, now),
            )


def _grow(conn: Any, n: int) -> None:
    """Copy the base's memories (and the links among them) under new ids up to ``n``."""
    from .bulk import _COLUMNS

    base = int(conn.execute("SELECT count(*) FROM memories").fetchall()[0][0])
    count, round_ = base, 0
    while count < n:
        round_ += 1
        take = min(base, n - count)
        offset = int(conn.execute("SELECT max(seq) FROM memories").fetchall()[0][0])
        conn.execute(
            f"INSERT INTO memories(seq, id, {_COLUMNS}) SELECT seq + ?, id || '~' || ?, "
            f"{_COLUMNS} FROM memories WHERE seq <= ? ORDER BY seq",
            (offset, round_, take),
        )
        conn.execute(
            "INSERT INTO memory_links(from_id, to_id, relationship, reason, evidence, context, "
            "link_category, confidence, created_by, created_at) SELECT from_id || '~' || ?1, "
            "to_id || '~' || ?1, relationship, reason, evidence, context, link_category, "
            "confidence, created_by, created_at FROM memory_links WHERE "
            "from_id IN (SELECT id FROM memories WHERE seq <= ?2) AND "
            "to_id IN (SELECT id FROM memories WHERE seq <= ?2)",
            (round_, take),
        )
        count += take


READY = "document.body && document.body.dataset.renderedMs"
# Each interaction as the page runs it on a person's choice, timed inside the page (ms).
TIMED = "(() => {{ const t0 = performance.now(); {action}; return performance.now() - t0; }})()"
CHOOSE = (
    "const c = document.getElementById('f-topic'); c.value = {topic}; "
    "c.dispatchEvent(new Event('change'))"
)
RESET = "document.getElementById('f-reset').click()"
PAGER = "document.querySelector('#chain-pager button:last-of-type').click()"


def measure(n: int, folder: Path) -> dict[str, Any]:
    """Build a store of ``n`` memories, write its page, open it in Chromium and use it."""
    from mama_plugin.view import gather, write_page

    home = folder / f"home-{n}"
    home.mkdir()
    config = Config(home)
    with Store.open(home / "mama.db", config=config) as store:
        build_store(store, n)
        started = time.perf_counter()
        data = gather(store, PROJECT, config.settings)
        gathered = time.perf_counter() - started
    started = time.perf_counter()
    page = write_page(data, folder / f"view-{n}.html")
    written = time.perf_counter() - started
    topic = json.dumps(data.chains[0].topic)
    with browser.Page() as tab:
        opened = tab.open(page.as_uri(), ready=READY)
        rendered = float(tab.js("document.body.dataset.renderedMs"))
        mode = tab.js("document.querySelector('#graph-canvas svg').dataset.mode")
        chosen = tab.js(TIMED.format(action=CHOOSE.format(topic=topic)))
        reset = tab.js(TIMED.format(action=RESET))
        paged = tab.js(TIMED.format(action=PAGER))
    return {
        "memories": n,
        "bytes": page.stat().st_size,
        "gather_ms": gathered * 1000,
        "write_ms": written * 1000,
        "rendered_ms": rendered,
        "open_s": opened,
        "graph_mode": mode,
        "topic_ms": chosen,
        "reset_ms": reset,
        "next_page_ms": paged,
    }


def view_run(sizes: list[int]) -> tuple[str, dict[str, Any]]:
    """The report and figures for each size."""
    if browser.chromium() is None:
        raise RuntimeError("no chromium on PATH: apt-get install chromium")
    rows = []
    with tempfile.TemporaryDirectory(prefix="mama-view-") as tmp:
        for n in sizes:
            rows.append(measure(n, Path(tmp)))
    lines = [
        "mama view: the page in headless Chromium (drawn: performance.now() when every "
        "section is drawn; a choice: the page's own handler, timed in the page)",
        f"{'memories':>9} {'page':>9} {'gather':>8} {'write':>7} {'drawn':>8} {'opened':>7} "
        f"{'graph':>7} {'a topic':>8} {'reset':>7} {'next page':>9}",
    ]
    for r in rows:
        lines.append(
            f"{r['memories']:>9} {r['bytes'] / 1e6:>7.1f}MB {r['gather_ms']:>6.0f}ms "
            f"{r['write_ms']:>5.0f}ms {r['rendered_ms']:>6.0f}ms {r['open_s']:>6.1f}s "
            f"{r['graph_mode']:>7} {r['topic_ms']:>6.0f}ms {r['reset_ms']:>5.0f}ms "
            f"{r['next_page_ms']:>7.0f}ms"
        )
    return "\n".join(lines) + "\n", {"sizes": rows}


__all__ = ["PROJECT", "build_store", "measure", "view_run"]
