"""The shared files' YAML: a deterministic writer, and PyYAML's safe reader for what people write.

The writer emits a small subset: block mappings (keys are plain words or JSON-quoted), block
sequences, ``[]`` and ``{}``, and scalars — plain strings that cannot be misread, JSON
double-quoted strings (valid YAML), integers, floats, ``true``, ``false`` and ``null``, two
spaces an indent. It always emits the same text for the same value (keys in the order given).

The reader is PyYAML's safe loader (imported when a file is read), so what a person writes in
an editor or a pull request reads: comments, flow lists and mappings, block scalars, every
quoting style. It reads scalars as JSON would, whatever YAML 1.1 says (``yes`` and
``2026-12-01`` stay strings, ``0123`` is no octal number), so that the writer's output reads
back exactly. It refuses what a teammate's file must not do: a key given twice, a tag
(``!!binary``, ``!!set``), an alias (a few lines of them expand to gigabytes), a number too
large to read, nesting past :data:`~mama_plugin.intake.MAX_DEPTH` levels; every refusal is a
:class:`ShareFormatError` naming the line.
"""

from __future__ import annotations

import functools
import json
import math
import re
from typing import Any

from ..errors import MamaError
from ..intake import MAX_DEPTH

INDENT = 2
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")
# JSON's numbers: what the writer quotes when a string looks like one, and the reader reads.
_INT_TEXT = r"-?(?:0|[1-9][0-9]*)"
_FLOAT_TEXT = _INT_TEXT + r"(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
_INT = re.compile(_INT_TEXT + r"\Z")
_FLOAT = re.compile(_FLOAT_TEXT + r"\Z")
_RESERVED = frozenset({"true", "false", "null", "~", "yes", "no", "on", "off", "y", "n"})
# What may not start a plain scalar: YAML indicators, quotes, and anything that reads as
# markup in the body (a heading) or as a merge conflict marker.
_NO_START = frozenset("-?:,[]{}#&*!|>'\"%@`<=\\ \t")
# What json.dumps leaves as it is and a YAML reader does not: C1 controls (NEL is a line break
# there), the line and paragraph separators, the byte order mark, noncharacters.
_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")  # half of a character: no UTF-8 file holds it


class ShareFormatError(MamaError):
    """Raised when a shared file's front matter or section does not follow the format."""


def plain_ok(text: str) -> bool:
    """True when ``text`` can be written unquoted and read back as the same string."""
    if not text or text != text.strip() or text[0] in _NO_START:
        return False
    if "\n" in text or "\r" in text or ": " in text or " #" in text or text.endswith(":"):
        return False
    if text.lower() in _RESERVED or _INT.match(text) or _FLOAT.match(text):
        return False
    return text.isprintable()


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ShareFormatError(f"cannot write the number {value!r}")
        return repr(value)
    if isinstance(value, str):
        return value if plain_ok(value) else _quoted_text(value)
    raise ShareFormatError(f"cannot write a value of type {type(value).__name__}")


def _quoted_text(value: str) -> str:
    """``value`` JSON-quoted, with the characters a YAML reader refuses or reads as a line
    break (C1 controls, NEL, the line and paragraph separators, noncharacters) escaped, and
    half a character (a lone surrogate, which no UTF-8 file can hold) written as U+FFFD."""
    text = json.dumps(_SURROGATE.sub("\ufffd", value), ensure_ascii=False)
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _key(key: Any) -> str:
    if not isinstance(key, str) or not key:
        raise ShareFormatError(f"mapping keys must be non-empty strings (got {key!r})")
    return key if _PLAIN_KEY.match(key) and key.lower() not in _RESERVED else _quoted_text(key)


def dump(mapping: dict[str, Any]) -> str:
    """The block text of ``mapping`` (every line ends with a newline; ``""`` when empty)."""
    lines: list[str] = []
    _mapping(mapping, 0, lines)
    return "".join(line + "\n" for line in lines)


def _mapping(mapping: dict[str, Any], indent: int, lines: list[str]) -> None:
    pad = " " * indent
    for key, value in mapping.items():
        head = f"{pad}{_key(key)}:"
        if isinstance(value, dict) and value:
            lines.append(head)
            _mapping(value, indent + INDENT, lines)
        elif isinstance(value, list | tuple) and value:
            lines.append(head)
            _sequence(list(value), indent + INDENT, lines)
        else:
            lines.append(f"{head} {_inline(value)}")


def _sequence(items: list[Any], indent: int, lines: list[str]) -> None:
    pad = " " * indent
    for item in items:
        if isinstance(item, dict) and item:
            nested: list[str] = []
            _mapping(item, indent + INDENT, nested)
            lines.append(f"{pad}- {nested[0][indent + INDENT :]}")
            lines.extend(nested[1:])
        elif isinstance(item, list | tuple) and item:
            lines.append(f"{pad}-")
            _sequence(list(item), indent + INDENT, lines)
        else:
            lines.append(f"{pad}- {_inline(item)}")


def _inline(value: Any) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list | tuple):
        return "[]"
    return _scalar(value)


# -- reading ---------------------------------------------------------------------------------

# The scalars read as other than strings: JSON's (the writer's), in YAML's plain style.
_SCALARS = (
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("tag:yaml.org,2002:int", f"^{_INT_TEXT}$", list("-0123456789")),
    ("tag:yaml.org,2002:float", f"^{_FLOAT_TEXT}$", list("-0123456789")),
)


def load(text: str, *, first_line: int = 1) -> dict[str, Any]:
    """Read a block of YAML (a file's front matter, a section), a mapping; ``{}`` when empty.

    ``first_line`` is the file line the block starts on, for the messages. Raises
    ShareFormatError naming the line for what is not YAML or not allowed here.
    """
    for number, raw in enumerate(text.split("\n"), start=first_line):
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise ShareFormatError(f"line {number}: indent with spaces, not tabs")
    import yaml

    loader = _loader(yaml)
    try:
        _walk(yaml, yaml.parse(text, Loader=loader))
        value = yaml.load(text, Loader=loader)  # a safe loader: see _loader
    except yaml.MarkedYAMLError as exc:
        raise ShareFormatError(_said(exc, first_line)) from None
    except yaml.YAMLError as exc:
        raise ShareFormatError(f"line {first_line}: {exc}") from None
    except ValueError as exc:  # a number Python will not read (over 4,300 digits)
        raise ShareFormatError(f"line {first_line}: {exc}") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ShareFormatError(f"line {first_line}: expected `key: value` lines")
    return value


def _said(exc: Any, first_line: int) -> str:
    """A YAML error as one line naming the file line, with the fix a person needs."""
    problem = str(exc.problem or exc)
    context = str(exc.context or "")
    mark = exc.problem_mark or exc.context_mark
    if "quoted scalar" in context and "end of stream" in problem:
        mark, problem = exc.context_mark or mark, "a quoted string is not closed"
    elif problem.startswith("mapping values are not allowed"):  # PyYAML: "here", libyaml: "in …"
        problem = 'a value holding ": " must be quoted as "…"'
    line = first_line + (mark.line if mark is not None else 0)
    return f"line {line}: {problem}"


def _walk(yaml: Any, events: Any) -> None:
    """Refuse a tag (``!!float abc``, ``!!binary``, ``!!set``: each builds what no memory
    holds, or fails), an alias and nesting past ``MAX_DEPTH`` lists and mappings, from the
    parser's events, before anything is built from them."""
    depth = 0
    for event in events:
        tag = getattr(event, "tag", None)
        if tag is not None and isinstance(event, yaml.ScalarEvent | yaml.CollectionStartEvent):
            raise yaml.composer.ComposerError(
                None, None, f"a tag ({tag}) is not read: write the value plainly", event.start_mark
            )
        if isinstance(event, yaml.AliasEvent):
            raise yaml.composer.ComposerError(
                None, None, "an alias (*name) is not read: write the value out", event.start_mark
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f"nested more than {MAX_DEPTH} levels", event.start_mark
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


@functools.cache
def _loader(yaml: Any) -> Any:
    """PyYAML's safe loader (libyaml's when there) reading scalars as :data:`_SCALARS` says
    and refusing a key given twice (made once); :func:`_walk` refuses the rest."""
    marked = yaml.constructor.ConstructorError

    class Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
        yaml_implicit_resolvers: dict[str, Any] = {}

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                if not isinstance(key, str) or not key:
                    wrong = f"a key must be a word (got {key!r})"
                    raise marked(None, None, wrong, key_node.start_mark)
                if key in seen:
                    raise marked(None, None, f"{key!r} is given twice", key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

        def construct_yaml_int(self, node: Any) -> int:
            return int(self.construct_scalar(node))

        def construct_yaml_float(self, node: Any) -> float:
            value = float(self.construct_scalar(node))
            if not math.isfinite(value):
                raise marked(None, None, "a number too large to read", node.start_mark)
            return value

        def construct_yaml_timestamp(self, node: Any) -> str:
            return str(self.construct_scalar(node))  # an explicit !!timestamp: its text

    Loader.add_constructor("tag:yaml.org,2002:int", Loader.construct_yaml_int)
    Loader.add_constructor("tag:yaml.org,2002:float", Loader.construct_yaml_float)
    Loader.add_constructor("tag:yaml.org,2002:timestamp", Loader.construct_yaml_timestamp)
    for tag, pattern, first in _SCALARS:
        Loader.add_implicit_resolver(tag, re.compile(pattern), first)
    return Loader
