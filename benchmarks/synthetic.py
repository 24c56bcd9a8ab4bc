"""Synthetic memory stores with realistic narrative text and link graphs, for latency runs.

Deterministic (seeded). Each topic evolves through a supersede chain of 1–4 decisions, some
with outcomes; checkpoints implement decisions; a few associations link across topics.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mama_plugin.storage import Store

AREAS = ("auth", "cache", "queue", "database", "search", "billing", "deploy", "logging",
         "metrics", "storage", "email", "payments", "gateway", "scheduler", "uploads")  # fmt: skip
TECH = ("Redis", "PostgreSQL", "SQLite", "Kafka", "RabbitMQ", "JWT", "sessions", "S3",
        "Elasticsearch", "Tantivy", "gRPC", "REST", "Nginx", "Envoy", "Celery", "cron",
        "Prometheus", "OpenTelemetry", "Memcached", "DynamoDB")  # fmt: skip
SERVICES = ("checkout", "api", "worker", "admin", "mobile backend", "ingest", "reporting")
WHY = (
    "p99 latency was {n} ms at {k}K req/s in the load test",
    "the team already runs {tech} in production for {n} services",
    "it cut monthly cost by {n}% in the staging trial",
    "failover took {n} s with the previous setup, above the {k} s budget",
    "the previous choice lost {n} messages during the {k}-node chaos test",
)
RISKS = ("{tech} is a single point of failure until HA is set up",
         "migration of {n}K rows needs a maintenance window",
         "nobody on the team has operated {tech} at {k}K req/s")  # fmt: skip
QUERIES = (
    "auth for a high-traffic service", "which cache did we pick for the api",
    "why did the queue lose messages", "database choice for reporting",
    "search engine latency", "deploy failover budget", "what failed in billing",
    "cost of the metrics stack", "uploads storage decision", "scheduler for the worker",
)  # fmt: skip


@dataclass(frozen=True)
class Item:
    """One memory to save: a decision (maybe superseding or implementing) or a checkpoint."""

    kind: str
    data: dict[str, object]
    supersedes: int | None = None  # index of an earlier item
    implements: int | None = None
    relates_to: int | None = None
    outcome: tuple[str, str] | None = None


def generate(n: int, seed: int = 7) -> Iterator[Item]:
    """``n`` items; references point only at earlier items."""
    rng = random.Random(seed)
    made = 0
    topic_heads: dict[str, int] = {}
    decisions: list[int] = []
    while made < n:
        area = rng.choice(AREAS)
        topic = f"{area}_{rng.randrange(max(1, n // 8))}"
        tech = rng.choice(TECH)
        n_, k_ = rng.randrange(2, 400), rng.randrange(1, 50)
        fill: dict[str, object] = {"n": n_, "k": k_, "tech": tech}
        if decisions and rng.random() < 0.25:
            target = rng.choice(decisions)
            yield Item("checkpoint", {
                "summary": f"Wired {tech} into the {rng.choice(SERVICES)} {area} path; "
                           f"load test at {fill['k']}K req/s next",
                "what_was_done": [f"{area} client for {tech}", "integration tests"],
                "what_remains": [f"load test at {fill['k']}K req/s"],
                "next_steps": [{"step": f"run the {area} load test", "priority": "HIGH"}],
                "open_files": [f"src/{area}/{tech.lower()}.py"],
            }, implements=target)  # fmt: skip
        else:
            previous = topic_heads.get(topic)
            outcome = None
            if rng.random() < 0.3:
                status = rng.choice(("SUCCESS", "FAILED", "PARTIAL"))
                outcome = (status, rng.choice(WHY).format(**fill))
            relates = rng.choice(decisions) if decisions and rng.random() < 0.15 else None
            yield Item("decision", {
                "topic": topic,
                "decision": f"Use {tech} for {area} in the {rng.choice(SERVICES)} service",
                "reasoning": {"primary": rng.choice(WHY).format(**fill),
                              "alternatives_considered": [rng.choice(TECH)]},
                "specifics": [f"{fill['n']} ms p99", f"{fill['k']}K req/s"],
                "evidence": [f"benchmarks/{area}.txt:{n_}-{n_ + 40}"],
                "tension": {"risks": [rng.choice(RISKS).format(**fill)]},
                "next_steps": [{"step": f"review {area} after a month", "priority": "LOW"}],
                "confidence": round(rng.uniform(0.4, 0.95), 2),
            }, supersedes=previous, relates_to=relates, outcome=outcome)  # fmt: skip
            topic_heads[topic] = made
            decisions.append(made)
        made += 1


def save_generated(store: Store, project: str, n: int, *, lessons: bool = False) -> list[str]:
    """The first ``n`` generated memories saved through the product's save path, in one
    transaction: checkpoints implementing their decisions, supersede chains, ``relates_to``
    links and outcomes (with a lesson each when ``lessons``). Returns the ids in order."""
    from mama_plugin.services.saving.memories import record_outcome, save_checkpoint, save_decision

    ids: list[str] = []
    with store.transaction():
        for item in generate(n):
            if item.kind == "checkpoint":
                implements = [ids[item.implements]] if item.implements is not None else []
                data = {**item.data, "implements": implements}
                ids.append(save_checkpoint(store, project, data).memory.id)
                continue
            data = dict(item.data)
            if item.supersedes is not None:
                data["supersedes"] = ids[item.supersedes]
            if item.relates_to is not None:
                data["links"] = [
                    {
                        "to_id": ids[item.relates_to],
                        "relationship": "relates_to",
                        "reason": "same service, shared failure mode",
                    }
                ]
            memory_id = save_decision(store, project, data).memory.id
            ids.append(memory_id)
            if item.outcome:
                outcome: dict[str, Any] = {
                    "memory_id": memory_id,
                    "outcome": item.outcome[0],
                    "details": item.outcome[1],
                }
                if lessons:
                    topic = item.data["topic"]
                    outcome["learned"] = [f"check {topic} under load before committing"]
                record_outcome(store, outcome)
    return ids
