"""The two sessions written by hand for scripts/record_transcripts.py, project and script.

A job queue moved from Redis to PostgreSQL (one prompt), and a catalog cache made
write-through instead of a TTL over two prompts.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from transcript_fixtures import Fixture, text, tool_use

# -- fixture 1: Redis or Postgres for the job queue ----------------------------------------------

BENCH_QUEUE = """\
Job queue load test, 2026-11-18
host: db-bench-2 (8 vCPU, 32 GB RAM), Postgres 16.4, Redis 7.2
workers: 16, jobs: 200,000, payload: 1 KB
target: 500 jobs/s at peak, p99 under 100 ms

== Postgres ==
polling, no locks: 610 jobs/s, p99 290 ms (312 jobs claimed twice)
advisory locks: 1,380 jobs/s, p99 71 ms
SKIP LOCKED: 2,140 jobs/s, p99 38 ms
SKIP LOCKED, 64 workers: 2,090 jobs/s, p99 55 ms
dead tuples after the run: 1.9 M (autovacuum defaults)

== Redis ==
BRPOPLPUSH: 9,800 jobs/s, p99 4 ms
BRPOPLPUSH across a failover: 37 jobs lost

== Notes ==
Postgres ran on the existing primary; Redis needed a new instance.
Redis figures exclude persistence (appendfsync everysec costs about 15%).
Re-run with: make bench-queue
"""

QUEUE_PY = '''\
"""Background job queue: web requests enqueue, workers claim and run."""

import json
import time

import redis

from app import db

MAX_ATTEMPTS = 5
QUEUE_KEY = "jobs:pending"
client = redis.Redis.from_url("redis://localhost:6379/0")


def retry_delay(attempt):
    """Seconds to wait before retry ``attempt``: exponential, capped at 5 minutes."""
    return min(300, 2**attempt)


def enqueue(kind, payload):
    client.lpush(QUEUE_KEY, json.dumps({"kind": kind, "payload": payload}))


def claim():
    raw = client.brpoplpush(QUEUE_KEY, "jobs:running", timeout=5)
    return json.loads(raw) if raw else None


def run_forever(handlers):
    while True:
        job = claim()
        if job is None:
            time.sleep(1)
            continue
        handlers[job["kind"]](job["payload"])
'''

OLD_QUEUE_OPS = """\
def enqueue(kind, payload):
    client.lpush(QUEUE_KEY, json.dumps({"kind": kind, "payload": payload}))


def claim():
    raw = client.brpoplpush(QUEUE_KEY, "jobs:running", timeout=5)
    return json.loads(raw) if raw else None
"""

NEW_QUEUE_OPS = '''\
def enqueue(kind, payload):
    db.execute("INSERT INTO jobs (kind, payload) VALUES (%s, %s)", (kind, json.dumps(payload)))


def claim():
    """Take the oldest pending job; SKIP LOCKED lets many workers claim at once."""
    return db.fetchone(
        "UPDATE jobs SET status = 'running', started_at = now(), attempts = attempts + 1"
        " WHERE id = (SELECT id FROM jobs WHERE status = 'pending' ORDER BY id"
        " FOR UPDATE SKIP LOCKED LIMIT 1)"
        " RETURNING id, kind, payload"
    )
'''

JOBS_SQL = """\
-- The job queue lives in Postgres (it replaces the Redis list jobs:pending).
CREATE TABLE jobs (
    id          bigserial   PRIMARY KEY,
    kind        text        NOT NULL,
    payload     jsonb       NOT NULL,
    status      text        NOT NULL DEFAULT 'pending',
    attempts    int         NOT NULL DEFAULT 0,
    created_at  timestamptz NOT NULL DEFAULT now(),
    started_at  timestamptz
);

-- Workers only look at pending jobs, oldest first.
CREATE INDEX jobs_pending_idx ON jobs (id) WHERE status = 'pending';
"""


def postgres_job_queue() -> Fixture:
    fixture = Fixture(
        "postgres_job_queue",
        files={
            "bench/queue.txt": BENCH_QUEUE,
            "app/__init__.py": "",
            "app/db.py": '"""Database access (psycopg pool on DATABASE_URL)."""\n',
            "app/queue.py": QUEUE_PY,
            "migrations/001_users.sql": "CREATE TABLE users (id bigserial PRIMARY KEY);\n",
            "migrations/002_orders.sql": "CREATE TABLE orders (id bigserial PRIMARY KEY);\n",
            "migrations/003_orders_user.sql": "ALTER TABLE orders ADD COLUMN user_id bigint;\n",
        },
        turns=[],
        expected_errors=1,  # redis-cli: there is no Redis here
    )
    p = fixture.project
    script = [
        tool_use(
            "Read",
            {"file_path": f"{p}/bench/queue.txt"},
            say="Let me look at the load test results first.",
        ),
        tool_use(
            "Bash",
            {"command": "redis-cli ping", "description": "Check whether a Redis server is running"},
            say="Postgres with SKIP LOCKED is well above target. Do we run Redis at all?",
        ),
        tool_use(
            "Read",
            {"file_path": f"{p}/app/queue.py"},
            say="No Redis here: it would be a new service to operate. Now the current queue.",
        ),
        tool_use(
            "Edit",
            {
                "file_path": f"{p}/app/queue.py",
                "old_string": OLD_QUEUE_OPS,
                "new_string": NEW_QUEUE_OPS,
            },
            say="Redis would need its own HA setup; 2,140 jobs/s is 4x our peak of 500 jobs/s, "
            "so Postgres has the headroom. Switching enqueue and claim to the jobs table.",
        ),
        tool_use(
            "Edit",
            {
                "file_path": f"{p}/app/queue.py",
                "old_string": "import redis\n\nfrom app import db\n\nMAX_ATTEMPTS = 5\n"
                'QUEUE_KEY = "jobs:pending"\n'
                'client = redis.Redis.from_url("redis://localhost:6379/0")\n',
                "new_string": "from app import db\n\nMAX_ATTEMPTS = 5\n",
            },
        ),
        tool_use("Write", {"file_path": f"{p}/migrations/004_jobs.sql", "content": JOBS_SQL}),
        tool_use(
            "TaskCreate",
            {
                "subject": "Tune autovacuum for the jobs table",
                "description": "The load test left 1.9 M dead tuples with autovacuum defaults; "
                "lower autovacuum_vacuum_scale_factor on jobs.",
                "activeForm": "Tuning autovacuum for the jobs table",
            },
        ),
        text(
            "Postgres, because SKIP LOCKED handled 2,140 jobs/s in bench/queue.txt and we "
            "already operate it. Using Postgres instead of Redis avoids running another "
            "service. app/queue.py now claims jobs with FOR UPDATE SKIP LOCKED, and "
            "migrations/004_jobs.sql creates the jobs table with a partial index on pending "
            "jobs. But dead tuples can bloat the jobs table under churn: the run left 1.9 M "
            "of them. Next: tune autovacuum for the jobs table before the rollout."
        ),
    ]
    fixture.turns = [
        ("Should the job queue be Redis or Postgres? Check the load test and decide.", script)
    ]
    return fixture


# -- fixture 2: write-through or TTL for the catalog cache, over two prompts ---------------------

CACHE_PY = '''\
"""Product catalog cache in front of the prices table."""

import time

TTL_S = 60


class CatalogCache:
    def __init__(self, db, clock=time.monotonic):
        self.db = db
        self.clock = clock
        self.entries = {}

    def get_price(self, sku):
        hit = self.entries.get(sku)
        if hit is not None and self.clock() - hit[1] < TTL_S:
            return hit[0]
        price = self.db[sku]
        self.entries[sku] = (price, self.clock())
        return price

    def update_price(self, sku, price):
        self.db[sku] = price
'''

TEST_CACHE_PY = """\
from src.catalog.cache import CatalogCache


def test_a_new_price_is_served_at_once():
    cache = CatalogCache({"sku-1": 1000})
    assert cache.get_price("sku-1") == 1000
    cache.update_price("sku-1", 1250)
    assert cache.get_price("sku-1") == 1250


def test_a_miss_reads_the_database():
    assert CatalogCache({"sku-2": 700}).get_price("sku-2") == 700
"""


def cache_invalidation() -> Fixture:
    fixture = Fixture(
        "cache_invalidation",
        files={
            "src/__init__.py": "",
            "src/catalog/__init__.py": "",
            "src/catalog/cache.py": CACHE_PY,
            "tests/test_cache.py": TEST_CACHE_PY,
        },
        turns=[],
        # `python` is the recording interpreter (it has pytest): the test run passes.
        env={"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"},
    )
    p = fixture.project
    first = [
        tool_use(
            "TaskCreate",
            {
                "subject": "Make the catalog cache write-through",
                "description": "update_price() must update the cached entry, not wait for TTL.",
                "activeForm": "Making the catalog cache write-through",
            },
            say="Let me track this.",
        ),
        tool_use(
            "TaskCreate",
            {
                "subject": "Add a cache hit-rate panel to the catalog dashboard",
                "description": "Watch the 97% hit rate after the switch.",
                "activeForm": "Adding a cache hit-rate panel",
            },
        ),
        tool_use("TaskUpdate", {"taskId": "1", "status": "in_progress"}),
        tool_use(
            "Read",
            {"file_path": f"{p}/src/catalog/cache.py"},
            say="Now the cache itself.",
        ),
        text(
            "The TTL is the problem: update_price() writes the prices table but leaves the "
            "cached entry alone, so a product page keeps the old price until its 60 s TTL "
            "runs out. Write-through fixes that at the cost of one extra cache write per "
            "price update (about 0.4 ms). Shall I switch it to write-through?"
        ),
    ]
    second = [
        tool_use(
            "Edit",
            {
                "file_path": f"{p}/src/catalog/cache.py",
                "old_string": "    def update_price(self, sku, price):\n"
                "        self.db[sku] = price\n",
                "new_string": "    def update_price(self, sku, price):\n"
                "        self.db[sku] = price\n"
                "        # Write-through: the next read serves the new price, not a stale one.\n"
                "        self.entries[sku] = (price, self.clock())\n",
            },
            say="A 5 s TTL would still show stale prices and would drop the hit rate from 97% "
            "to about 80%; write-through keeps the hit rate and removes the stale window.",
        ),
        tool_use(
            "Bash",
            {
                "command": "python -m pytest -q -p no:cacheprovider tests/test_cache.py",
                "description": "Run the catalog cache tests",
            },
        ),
        tool_use("TaskUpdate", {"taskId": "1", "status": "completed"}),
        text(
            "We chose write-through over a 60 s TTL because stale prices were shown for up "
            "to 60 s after every price change. We considered a 5 s TTL rather than "
            "write-through, but it would cut the hit rate from 97% to about 80% and still "
            "serve stale prices. update_price() in src/catalog/cache.py now updates the "
            "cached entry too, which adds about 0.4 ms per price update, and "
            "tests/test_cache.py passes (2 tests). Next: add the cache hit-rate panel to the "
            "catalog dashboard and watch the 97% hold after the deploy."
        ),
    ]
    fixture.turns = [
        (
            "Product pages show old prices for up to a minute after a price change. Should "
            "the catalog cache be write-through, or keep the TTL expiry? Look at "
            "src/catalog/cache.py.",
            first,
        ),
        ("Yes, switch it to write-through and run the cache tests.", second),
    ]
    return fixture


FIXTURES: dict[str, Callable[[], Fixture]] = {
    "postgres_job_queue": postgres_job_queue,
    "cache_invalidation": cache_invalidation,
}
