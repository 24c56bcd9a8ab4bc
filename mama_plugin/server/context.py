"""What the conversation is doing right now, from the user's prompt: fast deterministic rules.

Contexts: ``resuming`` (picking up earlier work), ``deciding`` (choosing between options),
``searching`` (asking what was decided or why), ``tracking`` (reporting how something turned
out), or None. English and Korean. Standard library only; microseconds per prompt.
"""

from __future__ import annotations

import re

CONTEXTS = ("resuming", "deciding", "searching", "tracking")

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
        # A verdict on a link MAMA proposed (the cliffhanger lists them as "#N").
        r"\b(accept|reject|confirm|approve|decline)\w*\b[^.?!\n]{0,40}(\blinks?\b|\bsuggestions?\b|#\d)",
        r"(\blinks?\b|\bsuggestions?\b|#\d)[^.?!\n]{0,40}\b(accept|reject|confirm|approve|decline)",
        r"성공|실패|결과|잘 ?됐|안 ?(돼|됐)|롤백|장애|터졌",
        r"(링크|제안).{0,20}(수락|승인|거절|확인)",
    ),
}
# MAMA's own slash commands say outright what comes next (typed as /mama-x or /mama:x).
_COMMANDS = {"resume": "resuming", "save": "deciding", "search": "searching",
             "outcome": "tracking"}  # fmt: skip
_COMMAND = re.compile(r"^\s*/mama[-:](resume|save|search|outcome)\b", re.IGNORECASE)
_COMPILED = {name: [re.compile(p, re.IGNORECASE) for p in rules] for name, rules in _RULES.items()}


def detect(prompt: str) -> str | None:
    """The context the prompt signals most, or None; ties go to the earlier of CONTEXTS.

    A phrase weighs one per word, so "what did we decide" (searching) outweighs the bare
    "decide" (deciding) inside it.
    """
    command = _COMMAND.match(prompt)
    if command:
        return _COMMANDS[command.group(1).lower()]
    text = prompt[:4000]
    best, best_score = None, 0
    for name in CONTEXTS:
        score = sum(
            1 + m.group(0).strip().count(" ") for rx in _COMPILED[name] for m in rx.finditer(text)
        )
        if score > best_score:
            best, best_score = name, score
    return best
