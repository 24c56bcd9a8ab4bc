"""Provider credentials found by gitleaks' rule table: keyword first, then regex and entropy.

``secret_rules.json`` is gitleaks' default rule set (https://github.com/gitleaks/gitleaks,
``config/gitleaks.toml``, MIT licence, see ``secret_rules.LICENSE``) converted to Python
regexes by ``scripts/vendor_gitleaks.py``, which names the commit it was taken from. Rules
are matched as gitleaks matches them: a rule runs only when one of its keywords occurs in the
text (case-insensitively), its secret is the rule's secret group (else the first group that
matched, else the whole match), and a secret below the rule's Shannon entropy or holding one
of its stopwords is not a finding.

Standard library only; the table is read and each regex compiled on first need, so importing
this module costs nothing and a text without any keyword costs one pass per keyword.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

TABLE = Path(__file__).with_name("secret_rules.json")

# gitleaks' global allowlist: values that are references or templates, not secrets.
_PLACEHOLDER = re.compile(
    r"^(?:true|false|null|none)$|^\$\{?[A-Za-z_][A-Za-z0-9_.]*\}?$|^\{\{.*\}\}$|^%[A-Za-z_]+%$"
    r"|^\[REDACTED|^\*+$|^x+$|^\.+$|^<[^<>]*>$",
    re.IGNORECASE,
)


def is_placeholder(value: str) -> bool:
    """True for a value that stands for a secret without being one (``${TOKEN}``, ``***``)."""
    return bool(_PLACEHOLDER.match(value))


def entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character (gitleaks' ``shannonEntropy``)."""
    if not value:
        return 0.0
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in Counter(value).values())


@dataclass
class Rule:
    """One gitleaks rule, its regex compiled on first use."""

    id: str
    regex: str
    keywords: tuple[str, ...]
    entropy: float = 0.0
    group: int = 0
    stopwords: tuple[str, ...] = ()
    _compiled: re.Pattern[str] | None = field(default=None, repr=False)

    @property
    def pattern(self) -> re.Pattern[str]:
        """The compiled regex."""
        if self._compiled is None:
            self._compiled = re.compile(self.regex)
        return self._compiled

    def findings(self, text: str) -> Iterator[tuple[int, int]]:
        """Spans of this rule's secrets in ``text``."""
        for match in self.pattern.finditer(text):
            group = self.group or next(
                (i for i in range(1, (match.lastindex or 0) + 1) if match.group(i)), 0
            )
            secret = match.group(group)
            if not secret or is_placeholder(secret):
                continue
            if self.entropy and entropy(secret) < self.entropy:
                continue
            lowered = secret.lower()
            if any(word in lowered for word in self.stopwords):
                continue
            yield match.start(group), match.end(group)


@cache
def rules() -> tuple[Rule, ...]:
    """Every vendored rule, in the table's order."""
    table = json.loads(TABLE.read_text(encoding="utf-8"))
    return tuple(
        Rule(
            id=item["id"],
            regex=item["regex"],
            keywords=tuple(item["keywords"]),
            entropy=float(item["entropy"]),
            group=int(item["group"]),
            stopwords=tuple(item["stopwords"]),
        )
        for item in table["rules"]
    )


@cache
def _keywords() -> tuple[tuple[str, ...], dict[str, tuple[Rule, ...]]]:
    """Every keyword, and the rules each one wakes."""
    index: dict[str, list[Rule]] = {}
    for rule in rules():
        for keyword in rule.keywords:
            index.setdefault(keyword, []).append(rule)
    return tuple(index), {keyword: tuple(found) for keyword, found in index.items()}


def find(text: str, lowered: str | None = None) -> list[tuple[int, int, str]]:
    """Every secret the table finds in ``text``: ``(start, end, rule id)``, by position.

    ``lowered`` is ``text.lower()`` when the caller has it already.
    """
    lowered = text.lower() if lowered is None else lowered
    keywords, rules_of = _keywords()
    present = [keyword for keyword in keywords if keyword in lowered]
    if not present:
        return []
    candidates = {rule.id: rule for keyword in present for rule in rules_of[keyword]}
    spans = [
        (start, end, rule.id) for rule in candidates.values() for start, end in rule.findings(text)
    ]
    return sorted(spans)
