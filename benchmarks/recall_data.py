"""The labelled prompts of ``python -m benchmarks recall``: public data nobody on this team wrote.

Three sources, each split in halves (``calibration`` to set a bar on, ``held-out`` to report):

- **KLUE-STS v1.1 dev** (Korean; CC BY-SA 4.0; shipped as ``recall_klue_sts.json`` with its
  source and licence). Human-scored sentence pairs (0–5). A pair scored ≥ ``KLUE_RELATED``
  (a paraphrase) stores its first sentence as a memory and asks its second: it must recall
  that memory. A pair scored < ``KLUE_UNRELATED`` asks its second sentence with its first
  left out of the store: nothing stored is about it, so it must recall nothing.
- **LoCoMo-10** (English; CC BY-NC 4.0; read from ``shared/bench/locomo10.json``, not
  shipped). The store holds the per-session observations of ``STORED`` conversations (distilled
  facts such as "Caroline attended an LGBTQ support group…", each citing the dialog turn it
  came from): memories, as MAMA saves them. A single-hop or temporal question (categories 4
  and 2) of a stored conversation must recall an observation that cites one of its evidence
  turns; every question (categories 1–4) of an ``UNSTORED`` conversation (other people, other
  lives) must recall nothing.
- **Stack Overflow duplicate questions** (English, software engineering; CC BY-SA; shipped as
  ``recall_tech.json`` with its source and licence). Questions of 2008 closed as duplicates:
  the title of the question a group repeats is a memory, each other duplicate's title a related
  prompt that must recall it; duplicates of groups with no memory stored must recall nothing.
  A developer's rewording of the same question, often in other words; reported in a column
  of its own (``tech``, :attr:`Case.group`), apart from LoCoMo's English.

Halves: KLUE by the parity of the pair's number, LoCoMo by the parity of the question's, the
technical set by the parity of the prompt's Stack Overflow id.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mama_plugin.errors import MamaError

from .checkout import DATA

KLUE = DATA / "recall_klue_sts.json"
TECH = DATA / "recall_tech.json"
OWN_GROUP = ("tech",)
GROUPS = ("all", "en", "ko", *OWN_GROUP)  # the columns: en LoCoMo, ko KLUE-STS, tech Stack Overflow
KLUE_RELATED = 3.5
KLUE_UNRELATED = 1.5
STORED = (0, 1, 2)
UNSTORED = (7, 8, 9)
RELATED_CATEGORIES = (2, 4)
UNRELATED_CATEGORIES = (1, 2, 3, 4)
_DIA = re.compile(r"D:?0*(\d+):0*(\d+)")


@dataclass(frozen=True)
class Memory:
    """One memory to save: its key (what a case names), topic and text."""

    key: str
    topic: str
    content: str


@dataclass(frozen=True)
class Case:
    """One prompt and the memories it must recall (none: it must recall nothing)."""

    prompt: str
    meant: frozenset[str]
    language: str
    source: str
    split: str

    @property
    def related(self) -> bool:
        return bool(self.meant)

    @property
    def group(self) -> str:
        """Its column in the report: its source when that has one of its own, else its language."""
        return self.source if self.source in OWN_GROUP else self.language


@dataclass
class Labelled:
    """The memories to store and the cases to ask, with where they came from."""

    memories: list[Memory]
    cases: list[Case]
    sources: list[str]


def _half(number: int) -> str:
    return "calibration" if number % 2 == 0 else "held-out"


def klue(path: Path = KLUE) -> tuple[list[Memory], list[Case], str]:
    """KLUE-STS memories and cases, and the source line to print."""
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise MamaError(f"cannot read the KLUE-STS sample {path}: {exc}") from exc
    memories: list[Memory] = []
    cases: list[Case] = []
    for guid, _source, first, second, score in data["pairs"]:
        split = _half(int(guid))
        if score >= KLUE_RELATED:
            key = f"klue:{guid}"
            memories.append(Memory(key, "", first))
            cases.append(Case(second, frozenset({key}), "ko", "klue-sts", split))
        elif score < KLUE_UNRELATED:
            cases.append(Case(second, frozenset(), "ko", "klue-sts", split))
    return memories, cases, f"{data['name']}: {data['source']}; {data['licence'].split(';')[0]}"


def tech(path: Path = TECH) -> tuple[list[Memory], list[Case], str]:
    """The Stack Overflow duplicate-question memories and cases, and the source line to print."""
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise MamaError(f"cannot read the technical set {path}: {exc}") from exc
    memories: dict[str, Memory] = {}
    cases: list[Case] = []
    for memory_id, memory, _how, prompt_id, prompt in data["pairs"]:
        key = f"tech:{memory_id}"
        memories.setdefault(key, Memory(key, "", memory))
        cases.append(Case(prompt, frozenset({key}), "en", "tech", _half(int(prompt_id))))
    for prompt_id, prompt in data["unrelated"]:
        cases.append(Case(prompt, frozenset(), "en", "tech", _half(int(prompt_id))))
    line = f"{data['name']}: {data['source'].split(':')[0]}; {data['licence'].split(';')[0]}"
    return list(memories.values()), cases, line


def _observations(sample: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(dialog id, observation) of every session of one LoCoMo sample."""
    for facts in sample.get("observation", {}).values():
        for items in facts.values():
            for text, evidence in items:
                cited = evidence if isinstance(evidence, list) else [evidence]
                for entry in cited:
                    for session, turn in _DIA.findall(str(entry)):
                        yield f"D{int(session)}:{int(turn)}", str(text)


def locomo(path: Path) -> tuple[list[Memory], list[Case], str]:
    """LoCoMo observations of the stored conversations, and questions of both kinds."""
    try:
        samples: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise MamaError(f"cannot read the LoCoMo dataset {path}: {exc}") from exc
    memories: list[Memory] = []
    cases: list[Case] = []
    for number in STORED:
        cites: dict[str, set[str]] = {}
        seen: dict[str, str] = {}
        for dia, text in _observations(samples[number]):
            key = seen.setdefault(text, f"locomo:{number}:{len(seen)}")
            cites.setdefault(dia, set()).add(key)
        memories.extend(Memory(key, "", text) for text, key in seen.items())
        for index, qa in enumerate(samples[number]["qa"]):
            if int(qa.get("category", 0)) not in RELATED_CATEGORIES:
                continue
            evidence = [f"D{int(s)}:{int(t)}" for e in qa.get("evidence", []) for s, t in
                        _DIA.findall(str(e))]  # fmt: skip
            meant = frozenset(k for dia in evidence for k in cites.get(dia, ()))
            if meant:
                cases.append(Case(qa["question"], meant, "en", "locomo", _half(index)))
    for number in UNSTORED:
        for index, qa in enumerate(samples[number]["qa"]):
            if int(qa.get("category", 0)) in UNRELATED_CATEGORIES:
                cases.append(Case(qa["question"], frozenset(), "en", "locomo", _half(index)))
    return memories, cases, f"LoCoMo-10 ({path}): snap-research/LoCoMo; CC BY-NC 4.0"


def labelled(locomo_path: Path | None) -> Labelled:
    """Every source that is present: KLUE-STS and the technical set always (shipped), LoCoMo
    when its file is given."""
    memories, cases, line = klue()
    out = Labelled(memories, cases, [line])
    more, asked, line = tech()
    out.memories.extend(more)
    out.cases.extend(asked)
    out.sources.append(line)
    if locomo_path is not None:
        more, asked, line = locomo(locomo_path)
        out.memories.extend(more)
        out.cases.extend(asked)
        out.sources.append(line)
    return out
