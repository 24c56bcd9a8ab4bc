"""Rebuild mama_plugin/secret_rules.json from gitleaks' default rule set.

Usage: python scripts/vendor_gitleaks.py PATH/TO/gitleaks.toml COMMIT

gitleaks (https://github.com/gitleaks/gitleaks, MIT licence, Copyright (c) 2019 Zachary Rice)
keeps its rules in config/gitleaks.toml, generated from cmd/generate/config. Its regexes are
Go RE2; this script rewrites the few constructs Python's ``re`` reads differently (a flag
group in the middle of a pattern, POSIX classes, ``\\z``), keeps each rule's keywords,
entropy, secret group and stopwords, and drops the rules MAMA covers itself (listed in
SKIPPED with the reason). Every converted regex is compiled before it is written.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "mama_plugin" / "secret_rules.json"

SKIPPED = {
    # Replaced by MAMA's own KEY=value rule, which weighs the name and the value's entropy
    # together; gitleaks' generic rule relies on a stopword list of 1,500 words.
    "generic-api-key": "covered by privacy.py's assignment and entropy rules",
    # Spans several lines and many optional groups; privacy.py masks Authorization headers.
    "curl-auth-header": "covered by privacy.py's header rule",
    "curl-auth-user": "covered by privacy.py's command-line rule",
}

_POSIX = {
    "[:alnum:]": "a-zA-Z0-9",
    "[:alpha:]": "a-zA-Z",
    "[:digit:]": "0-9",
    "[:upper:]": "A-Z",
    "[:lower:]": "a-z",
    "[:xdigit:]": "0-9a-fA-F",
    "[:space:]": r"\s",
    "[:word:]": r"\w",
}


_LEAD = r"[\w.-]{0,50}?"


def python_regex(go: str) -> str:
    """The Python spelling of one gitleaks (Go RE2) regex."""
    for posix, python in _POSIX.items():
        go = go.replace(posix, python)
    go = go.replace(r"\z", r"\Z")
    return _without_lead(_scope_inline_flags(go))


def _without_lead(pattern: str) -> str:
    r"""Drop the optional, lazy identifier prefix most keyword rules open with.

    ``[\w.-]{0,50}?`` matches nothing the secret group needs (it only widens the match to
    the left); RE2 scans it in linear time, Python's backtracking retries it 50 times at every
    position, which made a text stuffed with keywords take seconds.
    """
    while True:
        for head, kept in ((_LEAD, ""), ("(?i)" + _LEAD, "(?i)"), ("(?i:" + _LEAD, "(?i:")):
            if pattern.startswith(head):
                pattern = kept + pattern[len(head) :]
                break
        else:
            return pattern


def _scope_inline_flags(pattern: str) -> str:
    """Turn a mid-pattern ``(?i)`` into ``(?i:`` … ``)`` closing where its group closes.

    Go applies such a flag to the rest of the enclosing group; Python 3.11 refuses global
    flags anywhere but at the start.
    """
    out: list[str] = []
    closers: list[int] = []  # per open group: how many scoped flag groups to close with it
    extra = 0  # scoped flag groups opened at the top level
    i, in_class = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
            out.append(ch)
        elif ch == "[":
            in_class = True
            out.append(ch)
            if pattern[i + 1 : i + 2] == "]":
                out.append("]")
                i += 1
        elif (match := re.match(r"\(\?([a-zA-Z-]+)\)", pattern[i:])) and i > 0:
            out.append(f"(?{match.group(1)}:")
            if closers:
                closers[-1] += 1
            else:
                extra += 1
            i += match.end()
            continue
        elif ch == "(":
            closers.append(0)
            out.append(ch)
        elif ch == ")":
            out.append(")" * closers.pop() + ")")
        else:
            out.append(ch)
        i += 1
    return "".join(out) + ")" * extra


def convert(toml_path: Path, commit: str) -> dict[str, object]:
    """The rule table MAMA ships, read from gitleaks' config."""
    config = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    rules = []
    for rule in config["rules"]:
        if rule["id"] in SKIPPED or "regex" not in rule or not rule.get("keywords"):
            continue
        regex = python_regex(rule["regex"])
        re.compile(regex)
        stopwords = sorted(
            {word for allow in rule.get("allowlists", []) for word in allow.get("stopwords", [])}
        )
        rules.append(
            {
                "id": rule["id"],
                "regex": regex,
                "keywords": sorted({k.lower() for k in rule["keywords"]}),
                "entropy": rule.get("entropy", 0),
                "group": rule.get("secretGroup", 0),
                "stopwords": stopwords,
            }
        )
    return {
        "source": "https://github.com/gitleaks/gitleaks/blob/" + commit + "/config/gitleaks.toml",
        "licence": "MIT, Copyright (c) 2019 Zachary Rice (gitleaks); see secret_rules.LICENSE",
        "converted_by": "scripts/vendor_gitleaks.py",
        "skipped": SKIPPED,
        "rules": rules,
    }


def main() -> None:
    """Write the table."""
    toml_path, commit = Path(sys.argv[1]), sys.argv[2]
    table = convert(toml_path, commit)
    OUT.write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(table['rules'])} rules written to {OUT}")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
