"""``defang`` skips ASCII characters other than "<" (their NFKC form is themselves): the
answer must be the one a check of every character gives, on text full of near-misses."""

from __future__ import annotations

import random
import unicodedata

from mama_plugin import fence


def every_character(text: str) -> str:
    """The reference: every position checked, as ``defang`` did before it skipped ASCII."""
    out = []
    for i, char in enumerate(text):
        opener = char in fence._OPENERS or unicodedata.normalize("NFKC", char) == "<"
        tail = fence._skeleton(text[i + 1 : i + 1 + fence._WINDOW])
        out.append("(" if opener and tail.startswith(fence._TARGET) else char)
    return "".join(out)


PIECES = [
    "<", "</", "mama-memory", "MAMA-Memory", "m a m a", "-memory>", "\u200b", "\uff1c",
    "\ufe64", "\u2039", "\u043c\u0430\u043c\u0430", "memory", "캐시", "é", " ", "\n", "x",
    ">", "<<", "\u3008", "ｍａｍａ", "plain words ", "a<b", "\U0001f600",
]  # fmt: skip


def test_defang_matches_a_check_of_every_character() -> None:
    rng = random.Random(16)
    for _ in range(3000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 30)))
        assert fence.defang(text) == every_character(text), text


def test_defang_leaves_text_without_a_tag_as_it_is() -> None:
    text = "Use Redis for the cache: p99 < 4 ms at 10K req/s — 캐시 décidé"
    assert fence.defang(text) is text
    assert fence.defang("") == ""
    assert fence.defang("x <mama-memory> y") == "x (mama-memory> y"
