"""What the conversation is doing right now, from the user's prompt: fast deterministic rules.

Contexts: ``resuming`` (picking up earlier work), ``deciding`` (choosing between options or
moving to a replacement), ``searching`` (asking what was decided or why), ``tracking``
(reporting how something turned out), ``linking`` (a verdict on a link MAMA proposed),
``editing`` (correcting, forgetting or promoting a memory), or None. A prompt may do several
at once: "the load test failed, move us to Redis sessions" is tracking and deciding. English
and Korean. Standard library only; microseconds per prompt.
"""

from __future__ import annotations

import re

CONTEXTS = ("resuming", "deciding", "searching", "tracking", "linking", "editing")

_RULES: dict[str, tuple[str, ...]] = {
    "resuming": (
        r"\b(continue|resume|carry on|pick (it |this |that )?(back )?up|where (did|were) we)\b",
        r"\b(last (time|session)|yesterday'?s?|left off|get back to|where we stopped)\b",
        r"이어서|이어 ?가|이어 ?하|계속(하|해|진행)|어제|지난번|지난 ?세션|하던 (거|것|작업)|"
        r"다시 시작|멈춘 (곳|데)",
    ),
    "deciding": (
        r"\b(should (we|i)|decide|decision|choose|which (one|is better|should)|go with)\b",
        r"\b(vs\.?|versus|trade-?offs?|pros and cons|instead of|or should|better option)\b",
        # Moving on to a replacement is a new decision.
        r"\b(move (us |it |them )?(over )?to|switch(ing)? (over )?to|migrate to|replace \w+|"
        r"replacement|let'?s (use|go)|we'?ll use|settle on)\b",
        r"결정|선택|고를|어떤 ?(게|걸|것이) ?(나|좋)|할까|비교|대신|장단점|중에 (뭐|뭘|어느)|"
        r"(쓸|갈|둘|바꿀|옮길)까|(으로|로) ?(바꾸|바꿔|옮기|옮겨|전환|교체|가자|갈아타|넘어가)|"
        r"갈아타|교체",
    ),
    "searching": (
        r"\b(why did we|what did we (decide|choose|pick)|remind me|look up|history of)\b",
        r"\b(find|search|recall|previously|earlier decision|did we ever|do you remember|"
        r"what was the reason)\b",
        r"왜 .*(했|었|았|골랐|정했|선택|바꿨|옮겼)|찾아|검색|기억나|뭐였|전에 .*(했|정했)|"
        r"이력|이유가 뭐",
    ),
    "tracking": (
        r"\b(it (worked|failed|broke)|turned out|outcome|results? (are|were|of)|regression)\b",
        r"\b(rolled back|roll back|succeeded|in production now|fell over|didn'?t work)\b",
        r"\b(held up|holds up|did(n'?t| not)? hold)\b",
        r"\b(failed|worked( out)?|went (well|fine|badly)|(load|stress) test|post-?mortem|"
        r"outage|incident|crashed|timed out)\b",
        r"성공|실패|결과|잘 ?(됐|되었|돌아)|안 ?(돼|됐)|롤백|장애|터졌|부하 ?테스트|문제 ?없",
    ),
    # A verdict on a link MAMA proposed (the cliffhanger lists them as "#N").
    "linking": (
        r"\b(accept|reject|confirm|approve|decline)\w*\b[^.?!\n]{0,40}(\blinks?\b|\bsuggestions?\b|#\d)",
        r"(\blinks?\b|\bsuggestions?\b|#\d)[^.?!\n]{0,40}\b(accept|reject|confirm|approve|decline)",
        r"(링크|제안|연결).{0,20}(수락|승인|거절|확인|받아|맞아)",
    ),
    # A memory to correct, forget or keep for every project ("forget dec_…", "that memory is
    # wrong"): the object names MAMA's memory, so "delete the cache entry" is not one.
    "editing": (
        r"\b(forget|delete|remove|erase|drop|correct|fix|update|edit|amend)\b[^.?!\n]{0,30}"
        r"\b(memor(y|ies)|(dec|chk|ins|ctx)_\w+|(that|the|this|your|saved) (decision|checkpoint|"
        r"insight|note))\b",
        r"\b(memor(y|ies)|(dec|chk|ins|ctx)_\w+)\b[^.?!\n]{0,30}\b(is|was|are) (wrong|outdated|"
        r"out of date|stale|incorrect)\b",
        r"\b(promote|keep (it|this|that) (for|in|across) (every|all) projects?|globally)\b",
        r"(기억|메모리|결정|체크포인트).{0,20}(잊어|지워|삭제|수정|고쳐|정정|틀렸)|"
        r"모든 프로젝트(에|에서)",
    ),
}
# MAMA's own slash commands say outright what comes next (typed as /mama-x or /mama:x).
_COMMANDS = {
    "resume": ("resuming",),
    "save": ("deciding",),
    "search": ("searching",),
    "outcome": ("tracking",),
}
_COMMAND = re.compile(r"^\s*/mama[-:](resume|save|search|outcome)\b", re.IGNORECASE)
_COMPILED = {name: [re.compile(p, re.IGNORECASE) for p in rules] for name, rules in _RULES.items()}


def scores(prompt: str) -> dict[str, int]:
    """How strongly the prompt signals each context (absent: not at all).

    A phrase weighs one per word, so "what did we decide" (searching) outweighs the bare
    "decide" (deciding) inside it. A MAMA slash command signals its own context only.
    """
    command = _COMMAND.match(prompt)
    if command:
        return dict.fromkeys(_COMMANDS[command.group(1).lower()], 1)
    text = prompt[:4000]
    found = {}
    for name in CONTEXTS:
        score = sum(
            1 + m.group(0).strip().count(" ") for rx in _COMPILED[name] for m in rx.finditer(text)
        )
        if score:
            found[name] = score
    return found


def detect(prompt: str) -> str | None:
    """The context the prompt signals most, or None; ties go to the earlier of CONTEXTS."""
    found = scores(prompt)
    return max(found, key=lambda name: (found[name], -CONTEXTS.index(name)), default=None)


def detect_all(prompt: str) -> list[str]:
    """Every context the prompt signals, strongest first."""
    found = scores(prompt)
    return sorted(found, key=lambda name: (-found[name], CONTEXTS.index(name)))
