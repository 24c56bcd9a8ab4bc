"""The tool exposure MAMA shipped before store seeding, frozen: the baseline of ``bench exposure``.

A core of three tools, grown per detected context (one change per new context) from the
prompt hook only — so a grown list reached a turn after the one that needed it. The rules
are main's at 0cbd0a7, verbatim. Not used by the server.
"""

from __future__ import annotations

import re

CORE = ("save_decision", "search_by_context", "load_checkpoint")
CONTEXTS = ("resuming", "deciding", "searching", "tracking")
CONTEXT_TOOLS: dict[str, tuple[str, ...]] = {
    "resuming": ("load_context", "search_recent", "save_checkpoint"),
    "deciding": (
        "search_by_topic",
        "evolve_supersede",
        "save_insight",
        "suggest_links",
        "evolve_link",
    ),
    "searching": ("search_by_topic", "load_context", "search_recent"),
    "tracking": (
        "evolve_outcome",
        "save_checkpoint",
        "search_recent",
        "suggest_links",
        "evolve_link",
    ),
}
_RULES: dict[str, tuple[str, ...]] = {
    "resuming": (
        r"\b(continue|resume|carry on|pick (it |this )?(back )?up|where (did|were) we)\b",
        r"\b(last (time|session)|yesterday'?s?|left off|get back to)\b",
        r"이어서|이어 ?가|계속(하|해|진행)|어제|지난번|지난 ?세션|하던 거|다시 시작",
    ),
    "deciding": (
        r"\b(should (we|i)|decide|decision|choose|which (one|is better|should)|go with)\b",
        r"\b(vs\.?|versus|trade-?offs?|pros and cons|instead of|or should|better option)\b",
        r"결정|선택|고를|어떤 ?(게|걸|것이) ?(나|좋)|할까|비교|대신|장단점",
    ),
    "searching": (
        r"\b(why did we|what did we (decide|choose|pick)|remind me|look up|history of)\b",
        r"\b(find|search|recall|previously|earlier decision|did we ever)\b",
        r"왜 .*(했|골랐|정했)|찾아|검색|기억|뭐였|전에 .*(했|정했)|이력",
    ),
    "tracking": (
        r"\b(it (worked|failed|broke)|turned out|outcome|results? (are|were|of)|regression)\b",
        r"\b(rolled back|roll back|succeeded|in production now|fell over|didn'?t work)\b",
        r"\b(held up|holds up|did(n'?t| not)? hold)\b",
        r"\b(accept|reject|confirm|approve|decline)\w*\b[^.?!\n]{0,40}(\blinks?\b|\bsuggestions?\b|#\d)",
        r"(\blinks?\b|\bsuggestions?\b|#\d)[^.?!\n]{0,40}\b(accept|reject|confirm|approve|decline)",
        r"성공|실패|결과|잘 ?됐|안 ?(돼|됐)|롤백|장애|터졌",
        r"(링크|제안).{0,20}(수락|승인|거절|확인)",
    ),
}
_COMMANDS = {"resume": "resuming", "save": "deciding", "search": "searching", "outcome": "tracking"}
_COMMAND = re.compile(r"^\s*/mama[-:](resume|save|search|outcome)\b", re.IGNORECASE)
_COMPILED = {name: [re.compile(p, re.IGNORECASE) for p in rules] for name, rules in _RULES.items()}


def detect(prompt: str) -> str | None:
    """The context the prompt signals most, or None (main's rule: one context per prompt)."""
    command = _COMMAND.match(prompt)
    if command:
        return _COMMANDS[command.group(1).lower()]
    best, best_score = None, 0
    for name in CONTEXTS:
        score = sum(
            1 + m.group(0).strip().count(" ")
            for rx in _COMPILED[name]
            for m in rx.finditer(prompt[:4000])
        )
        if score > best_score:
            best, best_score = name, score
    return best


class TodayExposure:
    """Main's growth: the core, plus each detected context's tools (a change per growth)."""

    def __init__(self) -> None:
        self.visible = set(CORE)
        self.changes = 0

    def observe(self, prompt: str) -> None:
        added = set(CONTEXT_TOOLS.get(detect(prompt) or "", ())) - self.visible
        if added:
            self.visible |= added
            self.changes += 1
