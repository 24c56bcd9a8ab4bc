"""Realistic fake credentials and personal data, in the sentences a session would hold them.

Every value is generated from a seeded random source in the format its issuer documents (the
``source`` of each kind names where the format comes from), so no real secret sits in the
repository and no scanner that looks for literal strings can be fitted to it. ``secret`` is
the part that must never reach disk; ``text`` is the line around it, as Claude or a command
would print it.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
from dataclasses import dataclass

from .checkout import DATA

UPPER, LOWER, DIGITS = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM = UPPER + LOWER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


@dataclass(frozen=True)
class Case:
    """One fake: its kind, where its format comes from, the line, and what must not leak."""

    kind: str
    source: str
    text: str
    secret: str
    personal: bool = False


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _luhn_complete(rng: random.Random, prefix: str, length: int) -> str:
    body = prefix + _pick(rng, DIGITS, length - len(prefix) - 1)
    for check in DIGITS:
        total = 0
        for i, ch in enumerate(reversed(body + check)):
            n = int(ch) * (2 if i % 2 else 1)
            total += n - 9 if n > 9 else n
        if total % 10 == 0:
            return body + check
    raise AssertionError("unreachable: one check digit always fits")


# The kinds, with where each format is documented (see the file's "about").
TABLE = DATA / "secrets_corpus.json"

_ALPHABETS = {
    "A": UPPER + "234567", "U": UPPER + DIGITS, "D": DIGITS, "H": HEX, "N": ALNUM, "B": B64,
    "S": URLSAFE, "P": LOWER + DIGITS + "!@#%^&*(-_=+)",
}  # fmt: skip
_WORDS = ("correcthorse", "bluebattery", "staplegun", "quietmeadow", "riverlantern")
_NAMES = ("ada", "linus", "grace", "ken", "barbara", "dennis", "margaret")
_FIELD = re.compile(r"\{(\w+)(?::([^}]*))?\}")


def _fill(shape: str, rng: random.Random) -> str:
    def one(m: re.Match[str]) -> str:
        name, arg = m.group(1), m.group(2) or ""
        if name in _ALPHABETS:
            return _pick(rng, _ALPHABETS[name], int(arg))
        if name == "word":
            return rng.choice(_WORDS)
        if name == "name":
            return rng.choice(_NAMES)
        if name == "basic":
            return base64.b64encode(f"{arg}:{rng.choice(_WORDS)}".encode()).decode()
        prefix, length = arg.split(":")
        return _grouped(_luhn_complete(rng, prefix, int(length)))

    return _FIELD.sub(one, shape)


def _grouped(digits: str) -> str:
    return " ".join(digits[i : i + 4] for i in range(0, len(digits), 4))


def corpus(seed: int = 7) -> list[Case]:
    """Every kind once, generated from ``seed``."""
    rng = random.Random(seed)
    cases = []
    table = json.loads(TABLE.read_text(encoding="utf-8"))
    for personal, rows in ((False, table["credentials"]), (True, table["personal"])):
        for row in rows:
            kind, shape, line, source = row["kind"], row["shape"], row["line"], row["source"]
            secret = _fill(shape, rng)
            text = _fill(line.replace("{s}", "\0").replace("{{", "{").replace("}}", "}"), rng)
            cases.append(Case(kind, source, text.replace("\0", secret), secret, personal))
    return cases


PRIVATE_VARIANTS = (
    "<private>{s}</private>",
    "<private >{s}</private >",
    '<private reason="customer">{s}</private>',
    "&lt;private&gt;{s}&lt;/private&gt;",
    "< PRIVATE >{s}< / private >",
    "<private>{s}",
)
