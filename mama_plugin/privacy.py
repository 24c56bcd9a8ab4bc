"""Keep secrets out of the store: drop ``<private>`` spans, mask obvious credentials.

Pure functions, standard library only. Every write path of the store runs its text through
:func:`redact_tree` before anything reaches SQLite, and reports what it masked.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

# An unclosed <private> hides everything after it: failing towards privacy.
_PRIVATE = re.compile(r"<private>.*?(?:</private>|\Z)", re.IGNORECASE | re.DOTALL)

_SECRET_NAME = r"(?:api[_-]?key|secret|passw(?:or)?d|passwd|token)"

_PATTERNS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "private_key",
        re.compile(
            r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----.*?"
            r"(?:-----END \1-----|\Z)",
            re.DOTALL,
        ),
        "[REDACTED:private_key]",
    ),
    (
        "url_password",
        re.compile(
            r"(?P<keep>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:)(?!\[REDACTED\])[^\s@/]+(?=@)"
        ),
        r"\g<keep>[REDACTED]",
    ),
    (
        "bearer_token",
        re.compile(r"(?P<keep>\b(?:Bearer|Token)\s+)[A-Za-z0-9._~+/-]{16,}=*", re.IGNORECASE),
        r"\g<keep>[REDACTED:token]",
    ),
    (
        "jwt",
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        "[REDACTED:jwt]",
    ),
    (
        "api_key",
        re.compile(
            r"\b(?:"
            r"sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"  # Anthropic, OpenAI
            r"|AKIA[0-9A-Z]{16}"  # AWS access key id
            r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"  # GitHub
            r"|xox[abposr]-[A-Za-z0-9-]{10,}"  # Slack
            r"|AIza[0-9A-Za-z_-]{35}"  # Google
            r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab
            r"|(?:sk|rk|pk)_live_[A-Za-z0-9]{16,}"  # Stripe
            r")"
        ),
        "[REDACTED:api_key]",
    ),
    (
        "assigned_secret",
        # Quoted values after a secret-ish name are masked whatever they look like ...
        re.compile(
            r"(?P<keep>\b[A-Za-z0-9_]*" + _SECRET_NAME + r"[A-Za-z0-9_]*[\"']?\s*[:=]\s*"
            r"(?P<q>[\"']))(?!\[REDACTED)[^\"'\n]{4,}(?=(?P=q))",
            re.IGNORECASE,
        ),
        r"\g<keep>[REDACTED]",
    ),
    (
        "assigned_secret",
        # ... bare ones only when they hold a digit, so prose like "token: refresh" survives.
        re.compile(
            r"(?P<keep>\b[A-Za-z0-9_]*" + _SECRET_NAME + r"[A-Za-z0-9_]*\s*[:=]\s*)"
            r"(?!\[REDACTED)(?=[^\s\"',;]*\d)[^\s\"',;]{6,}",
            re.IGNORECASE,
        ),
        r"\g<keep>[REDACTED]",
    ),
)


def redact_text(text: str) -> tuple[str, Counter[str]]:
    """Return ``text`` without private spans and with credentials masked, plus counts by kind."""
    counts: Counter[str] = Counter()
    text, n = _PRIVATE.subn("", text)
    if n:
        counts["private_block"] += n
    for kind, pattern, replacement in _PATTERNS:
        text, n = pattern.subn(replacement, text)
        if n:
            counts[kind] += n
    return text, counts


def redact_tree(value: Any) -> tuple[Any, Counter[str]]:
    """Apply :func:`redact_text` to every string inside nested dicts, lists and tuples."""
    counts: Counter[str] = Counter()

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            clean, found = redact_text(item)
            counts.update(found)
            return clean
        if isinstance(item, dict):
            return {key: walk(val) for key, val in item.items()}
        if isinstance(item, list | tuple):
            return [walk(val) for val in item]
        return item

    return walk(value), counts
