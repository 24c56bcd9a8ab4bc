"""Keep secrets and personal data out of the store: drop ``<private>`` spans, mask the rest.

Pure functions, standard library only. Every write path of the store runs its text through
:func:`redact_tree` before anything reaches SQLite and reports what it masked; rows are run
through it again when read, so memories written before a rule existed are masked too.

What is found, in this order:

1. ``<private>`` … ``</private>`` spans, dropped (also ``<private reason=…>``, ``< private >``,
   the HTML-escaped ``&lt;private&gt;``; an unclosed one hides the rest of the text);
2. private-key blocks;
3. provider credentials: gitleaks' rule table (:mod:`mama_plugin.secret_rules`) plus the
   prefixes in ``_TOKENS`` it has no rule for;
4. credentials by their place: passwords in URLs, ``Authorization`` headers, command-line
   flags (``--password``, ``-u user:pass``, ``mysql -pSECRET``), ``NAME=value`` and
   ``"name": "value"`` where the name says secret (a weaker name such as *key* or *auth*
   needs a high-entropy value), the credential columns of a CSV, and long high-entropy tokens;
5. personal data (:mod:`mama_plugin.personal`): e-mail addresses, phone numbers, card
   numbers — unless ``personal=False`` (the ``keep_personal_data`` setting).

Each finding becomes ``[REDACTED]`` (where the text around it names what it was) or
``[REDACTED:kind]``. Redacting twice changes nothing.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections import Counter
from typing import Any

from . import personal as _personal
from . import secret_rules

# An unclosed <private> hides everything after it: failing towards privacy.
_PRIVATE = re.compile(
    r"(?:<|&lt;|\\u003c)\s*private\b(?:[^>&\n]|&(?!gt;)){0,200}?(?:>|&gt;|\\u003e)"
    r".*?(?:(?:<|&lt;|\\u003c)\s*[/\\]+\s*private\s*(?:>|&gt;|\\u003e)|\Z)",
    re.IGNORECASE | re.DOTALL,
)
_PRIVATE_KEY = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----.*?(?:-----END \1-----|\Z)",
    re.DOTALL,
)

# Prefixed tokens gitleaks' table misses or bounds too tightly (sources in docs/privacy.md).
_TOKENS = re.compile(
    r"\b(?:sk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"  # Anthropic, OpenAI
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key id
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"  # GitHub
    r"|xox[abposre]-[A-Za-z0-9-]{10,}"  # Slack
    r"|AIza[0-9A-Za-z_-]{35}|GOCSPX-[A-Za-z0-9_-]{20,}"  # Google API key, OAuth secret
    r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab
    r"|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9+/=]{24,}"  # Stripe
    r"|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"  # SendGrid
    r"|hv[sbr]\.[A-Za-z0-9_-]{24,}"  # HashiCorp Vault
    r"|pypi-[A-Za-z0-9_-]{50,}"  # PyPI
    r"|npm_[A-Za-z0-9]{36}"  # npm
    r"|SK[0-9a-f]{32}"  # Twilio API key
    r")"
)
_URL_PASSWORD = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]*:(?P<v>[^\s@/]+)@")
_HEADER = re.compile(
    r"(?i)\b(?:(?:proxy-)?authorization\s*[:=]\s*[\"']?(?:[a-z0-9-]+\s+)?"
    r"|bearer\s+|token\s+(?=\S*\d))(?P<v>[A-Za-z0-9._~+/=:-]{8,})"
)
_BASIC = re.compile(r"\bBasic\s+(?P<v>[A-Za-z0-9+/]{8,}={0,2})(?![\w+/=])")
_CLI = re.compile(
    r"(?i)(?:(?<!\S)--?(?:[a-z]+-)*(?:password|passwd|pass|token|secret|api-?key|access-key)"
    r"(?:=|\s+)(?!-)"
    r"|\b(?:mysql|mysqldump|mysqladmin|mariadb|mysqlimport|mysqlcheck)\b[^\n|;&]*?\s-p(?=\S)"
    r"|\b(?:sshpass\s+-p|redis-cli\b[^\n|;&]*?\s-a)\s+"
    r"|(?<!\S)(?:-u\s*|--user[= ]\s*)[\"']?[^\s:\"'@]+:"
    r"|\blogin\s+\S+\s+password\s+)"
    r"(?P<v>\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'`]+)"
)
# NAME <sep> value, the name in quotes or not; the value quoted or bare.
_ASSIGNMENT = re.compile(
    r"(?<![A-Za-z0-9_.-])(?P<name>[A-Za-z_][A-Za-z0-9_.-]*+)[\"']?\s*(?P<sep>:=|=>|=|:)\s*"
    r"(?=(?P<q>[\"'`])(?P<quoted>[^\"'`\n]{1,400}?)(?:(?P=q)|(?=…))|(?P<bare>[^\s\"'`;&,<>]+))"
)  # the value is looked at, not consumed: "Learned: DB_PASS: x" holds a second assignment
_STRONG = frozenset({"password", "passwd", "pwd", "pass", "passphrase", "secret", "token"})
_STRONG_PAIRS = frozenset({"apikey", "accesskey", "privatekey", "accountkey", "secretkey"})
_WEAK = frozenset({"key", "auth", "credential", "credentials", "sig", "signature", "salt"})
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_CODE_VALUE = re.compile(r"[()\[\]{}$%]|^[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+$|^<.*>$")
# A run cut by an ellipsis (what a clip leaves): judged on what is left of it.
_CLIPPED = re.compile(
    r"(?<![^\s\"'`,;<>(){}\[\]])(?P<v>[^\s\"'`,;<>(){}\[\]]{6,300})(?:…|\.\.\.)"
)  # bounded and anchored at a run's start: a long run costs linear time, not quadratic
_CLIPPED_PREFIX = re.compile(
    r"(?i)gh[pousr]_|github_pat_|glpat-|xox[a-z]-|sk-|sk_|rk_|whsec_|aiza|gocspx-|sg\.|hv[sbr]\."
    r"|pypi-|npm_|hf_|dop_v1_|shp[a-z]{2}_|dapi|akia|asia|eyj|hooks\.slack\.com|://[^/\s]*:"
    r"|(?<![a-z])sk[0-9a-f]{8}"
)
_NAMED_BEFORE = re.compile(
    r"(?i)(?:pass|pwd|secret|token|key|auth|credential)[\w.-]*[\"']?\s*[:=]\s*[\"'`]?$"
)
_HEX = frozenset("0123456789abcdefABCDEF")
_TOKEN = re.compile(r"(?<![\w+/=.-])[A-Za-z0-9+/_=-]{32,}(?![\w+/=.-])")
_CSV_HEADER = re.compile(r"(?i)password|secret|token|access key|api key|private key")

_TYPED = {"jwt": "jwt", "private-key": "private_key"}
# Words one of which a text must hold for a detector to run at all (most text holds none).
_GATES = {
    "tokens": (
        *("sk", "akia", "asia", "gh", "xox", "aiza", "gocspx", "glpat", "k_", "whsec", "sg."),
        *("hv", "pypi-", "npm_"),
    ),
    "url": ("://",),
    "basic": ("basic",),
    "assignment": ("pass", "pwd", "secret", "token", "key", "auth", "cred", "sig", "salt"),
    "header": ("authoriz", "bearer", "token"),
    "cli": (" -", "\t-", "\n-", "login"),
    "csv": ("password", "secret", "token", "key"),
}


def redact_text(text: str, *, personal: bool = True) -> tuple[str, Counter[str]]:
    """Return ``text`` without private spans and with secrets masked, plus counts by kind.

    ``personal=False`` keeps e-mail addresses, phone numbers and card numbers.
    """
    counts: Counter[str] = Counter()
    text, n = _PRIVATE.subn("", text)
    if n:
        counts["private_block"] += n
    text, n = _PRIVATE_KEY.subn("[REDACTED:private_key]", text)
    if n:
        counts["private_key"] += n
    spans = _secret_spans(text)
    if personal:  # a secret found in an address (postgres://u:pw@host) stays a secret
        spans += [p for p in _personal.find(text) if not any(_overlap(p, s) for s in spans)]
    if not spans:
        return text, counts
    out: list[str] = []
    end = 0
    for start, stop, kind in _merged(spans):
        out.append(text[end:start])
        out.append("[REDACTED]" if kind in _CONTEXTUAL else f"[REDACTED:{kind}]")
        counts[kind] += 1
        end = stop
    out.append(text[end:])
    return "".join(out), counts


def redact_tree(value: Any, *, personal: bool = True) -> tuple[Any, Counter[str]]:
    """Apply :func:`redact_text` to every string inside nested dicts, lists and tuples."""
    counts: Counter[str] = Counter()

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            clean, found = redact_text(item, personal=personal)
            counts.update(found)
            return clean
        if isinstance(item, dict):
            return {key: walk(val) for key, val in item.items()}
        if isinstance(item, list | tuple):
            return [walk(val) for val in item]
        return item

    return walk(value), counts


_CONTEXTUAL = frozenset(
    {"assigned_secret", "url_password", "bearer_token", "command_line", "credential_csv"}
)


def _secret_spans(text: str) -> list[tuple[int, int, str]]:
    lowered = text.lower()
    found = secret_rules.find(text, lowered)
    spans = [(a, b, _TYPED.get(rule, "api_key")) for a, b, rule in found]
    gates = {name: any(w in lowered for w in words) for name, words in _GATES.items()}
    if gates["tokens"]:
        spans += [(m.start(), m.end(), "api_key") for m in _TOKENS.finditer(text)]
    if gates["url"]:
        spans += _valued(_URL_PASSWORD, text, "url_password")
    if gates["header"]:
        spans += _valued(_HEADER, text, "bearer_token")
    if gates["basic"]:
        spans += [
            (m.start("v"), m.end("v"), "bearer_token")
            for m in _BASIC.finditer(text)
            if _is_basic_credential(m.group("v"))
        ]
    if gates["cli"] or text.startswith("-"):
        spans += _valued(_CLI, text, "command_line")
    if gates["assignment"]:
        spans += _assignments(text)
    if gates["csv"] and "," in text:
        spans += _csv_columns(text)
    if any(len(word) >= 32 for word in text.split()):
        spans += [
            (m.start(), m.end(), "high_entropy")
            for m in _TOKEN.finditer(text)
            if _random(m.group())
        ]
    if "…" in text or "..." in text:
        spans += _clipped(text)
    return spans


def _clipped(text: str) -> list[tuple[int, int, str]]:
    """What is left of a credential that a clip cut short (``ghp_abc…``, ``'django-ins…``)."""
    spans = []
    for m in _CLIPPED.finditer(text):
        run = m.group("v")
        cut = (
            _CLIPPED_PREFIX.search(run)
            or _NAMED_BEFORE.search(text, max(0, m.start() - 60), m.start())
            or _random(run, min_entropy=3.5, min_digits=1)
            or (len(run) >= 16 and set(run) <= _HEX and not run.isdigit() and not run.isalpha())
        )
        if cut:
            spans.append((m.start(), m.end("v"), "clipped_secret"))
    return spans


def _valued(pattern: re.Pattern[str], text: str, kind: str) -> list[tuple[int, int, str]]:
    return [
        (m.start("v"), m.end("v"), kind)
        for m in pattern.finditer(text)
        if not secret_rules.is_placeholder(m.group("v").strip("\"'"))
    ]


def _merged(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Overlapping findings as one span each, named by the one that starts first."""
    merged: list[tuple[int, int, str]] = []
    for start, stop, kind in sorted(spans, key=lambda s: (s[0], -s[1])):
        if merged and start < merged[-1][1]:
            first = merged[-1]
            merged[-1] = (first[0], max(first[1], stop), first[2])
        else:
            merged.append((start, stop, kind))
    return merged


def _overlap(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _is_basic_credential(value: str) -> bool:
    """True when ``value`` decodes to ``user:password``, as HTTP Basic credentials do."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded and decoded.isascii() and decoded.decode("ascii").isprintable()


def _random(token: str, *, min_entropy: float = 4.0, min_digits: int = 2) -> bool:
    """True for a token that looks random: mixed case and digits, high entropy."""
    core = token.strip("=")
    if len(core) < 12:
        return False
    if not (any(c.isupper() for c in core) and any(c.islower() for c in core)):
        return False
    if sum(c.isdigit() for c in core) < min_digits or core.count("/") > len(core) // 8:
        return False
    return secret_rules.entropy(core) >= min_entropy


def _name_words(name: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(name.rsplit(".", 1)[-1])}


def _assignments(text: str) -> list[tuple[int, int, str]]:
    spans: list[tuple[int, int, str]] = []
    for m in _ASSIGNMENT.finditer(text):
        words = _name_words(m.group("name"))
        joined = {a + b for a in words for b in words}
        strong = bool(words & _STRONG or joined & _STRONG_PAIRS)
        if not strong and not words & _WEAK:
            continue
        value = m.group("quoted") if m.group("q") else m.group("bare")
        value = value.rstrip(".)")
        if len(value) < 3 or secret_rules.is_placeholder(value):
            continue
        if not m.group("q") and _CODE_VALUE.search(value):  # token = request.headers["x"]
            continue
        if strong:
            keep = m.group("sep") == ":" and not m.group("q") and not _odd(value)
        else:
            keep = len(value) < 16 or secret_rules.entropy(value) < 3.5
        if not keep:
            group = "quoted" if m.group("q") else "bare"
            spans.append((m.start(group), m.start(group) + len(value), "assigned_secret"))
    return spans


def _odd(value: str) -> bool:
    """True when a bare value after ``password:`` is not a plain word of prose."""
    if any(c.isdigit() for c in value) or not value.replace("-", "").replace("_", "").isalpha():
        return True
    return len(value) >= 10 and secret_rules.entropy(value) >= 3.2


def _csv_columns(text: str) -> list[tuple[int, int, str]]:
    """The values under a credential column of a CSV (AWS's credentials.csv, exports)."""
    spans: list[tuple[int, int, str]] = []
    columns: list[int] = []
    width = 0
    offset = 0
    for line in text.splitlines(keepends=True):
        fields = line.rstrip("\r\n").split(",")
        if len(fields) >= 2 and not columns:
            columns = [i for i, f in enumerate(fields) if _CSV_HEADER.search(f)]
            width = len(fields) if columns and len(line) < 300 else 0
            columns = columns if width else []
        elif columns and len(fields) == width:
            starts = [0]
            for f in fields[:-1]:
                starts.append(starts[-1] + len(f) + 1)
            for i in columns:
                if fields[i].strip() and not secret_rules.is_placeholder(fields[i].strip()):
                    spans.append(
                        (offset + starts[i], offset + starts[i] + len(fields[i]), "credential_csv")
                    )
        else:
            columns = []
        offset += len(line)
    return spans
