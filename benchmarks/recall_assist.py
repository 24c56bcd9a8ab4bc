"""The local generative model as prompt recall's judge: ``recall --assist-judge N``.

Issue 12 asks to measure a reranker run by llama.cpp. No cross-encoder's weights ship inside a
package on the registry; the llama.cpp model MAMA has is the assist model (Gemma 3 270M by
default, or any GGUF set as ``assist_model_path``). This puts it in the reranker's place, through
the real assist path (:class:`~mama_plugin.assist.runtime.Assistant`: grammar, timeout, retry):
for a seeded sample of held-out prompts, ``N`` related and ``N`` unrelated, each of a prompt's
first ``recall.MAX_HITS`` candidates (the hybrid's, before any bar) is put to the model as a
MEMORY and a PROMPT, and it answers ``{"related": true|false}``.

Printed: how often the model says related to a memory the prompt meant and to any other
candidate (a judge worth having says it far more often to the first); recall and silence on the
sample for today's rules, for the model alone (a candidate passes when the model says related)
and for both (the rules' passes the model confirms); the median seconds a verdict takes.
"""

from __future__ import annotations

import random
import statistics
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mama_plugin.assist.runtime import Assistant, Prompt
from mama_plugin.embeddings.protocol import EmbeddingModel
from mama_plugin.schema.assist import Relatedness
from mama_plugin.services.recall import prompt as recall

from .recall_core import candidates, fmt, judged, keyed, score, store_of
from .recall_data import Case, Labelled

SEED = 12
VERDICT_TOKENS = 12
INSTRUCTIONS = (
    "Each record is a MEMORY saved from earlier work and a PROMPT the user just typed. related "
    "is true when the memory tells something the prompt asks about or needs, false when the "
    "prompt is about something else."
)
# Written for this bench, not taken from either labelled source.
EXAMPLES = [
    (
        "MEMORY: We moved the image uploads to S3 because the disk on the web node filled up.\n"
        "PROMPT: Where do uploaded pictures end up now?",
        '{"related": true}',
    ),
    (
        "MEMORY: We moved the image uploads to S3 because the disk on the web node filled up.\n"
        "PROMPT: How do I sort a dictionary by value in Python?",
        '{"related": false}',
    ),
    (
        "MEMORY: 결제 모듈은 재시도를 세 번까지만 하기로 했다.\n"
        "PROMPT: 결제 실패하면 몇 번 다시 시도하지?",
        '{"related": true}',
    ),
]


def sample(cases: Sequence[Case], n: int, *, seed: int = SEED) -> list[Case]:
    """``n`` related and ``n`` unrelated held-out cases, drawn with ``seed``."""
    held = [c for c in cases if c.split == "held-out"]
    pick = random.Random(seed)
    related = [c for c in held if c.related]
    unrelated = [c for c in held if not c.related]
    return pick.sample(related, min(n, len(related))) + pick.sample(
        unrelated, min(n, len(unrelated))
    )


def verdict(assistant: Assistant, memory: str, prompt: str) -> tuple[bool | None, float]:
    """Whether the model calls ``memory`` related to ``prompt`` (None: no valid answer), and
    the seconds it took."""
    body = f"MEMORY: {memory}\nPROMPT: {prompt}"
    result = assistant.generate(
        Prompt(INSTRUCTIONS, EXAMPLES, body), Relatedness, max_tokens=VERDICT_TOKENS
    )
    return (result.value.related if result.value is not None else None), result.total_s


def judge_run(
    data: Labelled,
    embedder: EmbeddingModel | None,
    assistant: Assistant,
    n: int,
    *,
    bar: float,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The figures of the module docstring, on one store holding every labelled memory."""
    say = progress or (lambda _line: None)
    asked = sample(data.cases, n)
    content = {m.key: m.content for m in data.memories}
    model = embedder.name if embedder is not None else ""
    rows: dict[str, list[list[str]]] = {"rules": [], "model": [], "both": []}
    said = {"meant": [0, 0], "other": [0, 0], "no answer": [0, 0]}  # [related, asked]
    seconds: list[float] = []
    with tempfile.TemporaryDirectory(prefix="mama-bench-judge-") as tmp:
        store, keys = store_of(Path(tmp), data, embedder)
        try:
            say(f"assist judge: {len(asked)} prompts, {recall.MAX_HITS} candidates each")
            for case in asked:
                found = candidates(store, case.prompt, embedder)[: recall.MAX_HITS]
                rules = set(judged(found, bar, model))
                yes: list[str] = []
                for memory_id, *_ in found:
                    key = keys.get(memory_id, memory_id)
                    related, took = verdict(assistant, content.get(key, ""), case.prompt)
                    seconds.append(took)
                    kind = "meant" if key in case.meant else "other"
                    kind = "no answer" if related is None else kind
                    said[kind][0] += bool(related)
                    said[kind][1] += 1
                    if related:
                        yes.append(memory_id)
                rows["rules"].append([i for i, *_ in found if i in rules])
                rows["model"].append(yes)
                rows["both"].append([i for i in yes if i in rules])
        finally:
            store.close()
    meaning = sum(c.related for c in asked)
    return {
        "model": assistant.name,
        "prompts": {"related": meaning, "unrelated": len(asked) - meaning},
        "said_related": {k: {"yes": v[0], "of": v[1]} for k, v in said.items()},
        "rows": {
            name: score(asked, keyed(injected, keys), "held-out")["all"]
            for name, injected in rows.items()
        },
        "verdict_s_p50": round(statistics.median(seconds), 3) if seconds else None,
    }


def report(figures: dict[str, Any]) -> list[str]:
    """The judge's lines of the printed report."""
    said = figures["said_related"]
    prompts = figures["prompts"]
    lines = [
        "",
        f"The assist model ({figures['model']}) as the judge, held-out sample: "
        f"{prompts['related']} related, {prompts['unrelated']} unrelated prompts, "
        f"the first {recall.MAX_HITS} candidates of each",
    ]
    for kind, label in (("meant", "a memory the prompt meant"), ("other", "any other candidate")):
        count = said[kind]
        share = f"{count['yes'] / count['of']:.3f}" if count["of"] else "-"
        lines.append(f"  says related to {label}: {count['yes']} of {count['of']} ({share})")
    if said["no answer"]["of"]:
        lines.append(f"  no valid answer: {said['no answer']['of']}")
    for name, label in (
        ("rules", "today's rules"),
        ("model", "the model alone"),
        ("both", "rules, then the model"),
    ):
        row = figures["rows"][name]
        lines.append(f"  {label:<24} recall {fmt(row['recall'])}  silence {fmt(row['silence'])}")
    lines.append(f"  seconds a verdict (median): {figures['verdict_s_p50']}")
    return lines
