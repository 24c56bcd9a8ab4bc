"""A strict writer and reader for the small YAML subset the shared files use.

The subset: block mappings (keys are plain words or JSON-quoted), block sequences, ``[]`` and
``{}``, and scalars — plain strings that cannot be misread, JSON double-quoted strings (valid
YAML), integers, floats, ``true``, ``false`` and ``null``. Indentation is two spaces. The
writer always emits the same text for the same value (keys in the order given), and the reader
reads back exactly what the writer wrote; anything outside the subset is a
:class:`ShareFormatError` naming the line, never a guess. Standard library only.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import MamaError
from ..intake import MAX_DEPTH

INDENT = 2
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?\Z")
_RESERVED = frozenset({"true", "false", "null", "~", "yes", "no", "on", "off", "y", "n"})
# What may not start a plain scalar: YAML indicators, quotes, and anything that reads as
# markup in the body (a heading) or as a merge conflict marker.
_NO_START = frozenset("-?:,[]{}#&*!|>'\"%@`<=\\ \t")


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
        return value if plain_ok(value) else json.dumps(value, ensure_ascii=False)
    raise ShareFormatError(f"cannot write a value of type {type(value).__name__}")


def _key(key: Any) -> str:
    if not isinstance(key, str) or not key:
        raise ShareFormatError(f"mapping keys must be non-empty strings (got {key!r})")
    return key if _PLAIN_KEY.match(key) and key.lower() not in _RESERVED else json.dumps(key)


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


def load(text: str, *, first_line: int = 1) -> dict[str, Any]:
    """Read a block written by :func:`dump` (or by hand in the same subset).

    ``first_line`` is the file line the block starts on, for the messages. Raises
    ShareFormatError naming the line for anything outside the subset.
    """
    lines: list[tuple[int, int, str]] = []
    for number, raw in enumerate(text.split("\n"), start=first_line):
        if not raw.strip():
            continue
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise ShareFormatError(f"line {number}: indent with spaces, not tabs")
        lines.append((number, len(raw) - len(raw.lstrip(" ")), raw.strip()))
    if not lines:
        return {}
    value, end = _block(lines, 0, lines[0][1], 1)
    if end != len(lines):
        raise ShareFormatError(f"line {lines[end][0]}: unexpected indentation")
    if not isinstance(value, dict):
        raise ShareFormatError(f"line {lines[0][0]}: expected `key: value` lines")
    return value


def _block(lines: list[tuple[int, int, str]], at: int, indent: int, depth: int) -> tuple[Any, int]:
    """Parse the block starting at ``lines[at]`` whose lines sit at ``indent``, ``depth``
    blocks deep (past :data:`~mama_plugin.intake.MAX_DEPTH`: ShareFormatError, before the
    reader's recursion could run out of stack)."""
    if depth > MAX_DEPTH:
        raise ShareFormatError(
            f"line {lines[at][0]}: nested more than {MAX_DEPTH} levels deep; MAMA reads no deeper"
        )
    if lines[at][2] == "-" or lines[at][2].startswith("- "):
        return _read_sequence(lines, at, indent, depth)
    return _read_mapping(lines, at, indent, depth)


def _read_mapping(
    lines: list[tuple[int, int, str]], at: int, indent: int, depth: int
) -> tuple[Any, int]:
    result: dict[str, Any] = {}
    while at < len(lines) and lines[at][1] == indent:
        number, _, text = lines[at]
        if text.startswith("- ") or text == "-":
            raise ShareFormatError(f"line {number}: a list item where a `key:` was expected")
        key, rest = _split_key(text, number)
        if key in result:
            raise ShareFormatError(f"line {number}: {key!r} is given twice")
        at += 1
        if rest:
            result[key] = _read_scalar(rest, number)
            continue
        if at >= len(lines) or lines[at][1] <= indent:
            raise ShareFormatError(f'line {number}: {key!r} has no value (write [] or "")')
        result[key], at = _block(lines, at, lines[at][1], depth + 1)
    if at < len(lines) and lines[at][1] > indent:
        raise ShareFormatError(f"line {lines[at][0]}: unexpected indentation")
    return result, at


def _read_sequence(
    lines: list[tuple[int, int, str]], at: int, indent: int, depth: int
) -> tuple[Any, int]:
    result: list[Any] = []
    while at < len(lines) and lines[at][1] == indent:
        number, _, text = lines[at]
        if text == "-":
            at += 1
            if at >= len(lines) or lines[at][1] <= indent:
                raise ShareFormatError(f"line {number}: an empty list item")
            item, at = _block(lines, at, lines[at][1], depth + 1)
            result.append(item)
            continue
        if not text.startswith("- "):
            raise ShareFormatError(f"line {number}: expected a list item (`- …`)")
        rest = text[2:].lstrip(" ")
        inner = indent + (len(text) - len(rest))
        if _is_pair(rest):
            # ``- key: value`` opens a mapping whose later keys line up with this first one.
            lines = [*lines[:at], (number, inner, rest), *lines[at + 1 :]]
            item, at = _block(lines, at, inner, depth + 1)
            result.append(item)
            continue
        result.append(_read_scalar(rest, number))
        at += 1
    return result, at


def _is_pair(text: str) -> bool:
    if text.startswith('"'):
        try:
            _, end = json.JSONDecoder().raw_decode(text)
        except json.JSONDecodeError:
            return False
        return text[end:].startswith(":")
    head = text.split(":", 1)[0]
    return ":" in text and bool(_PLAIN_KEY.match(head)) and text[len(head) :][:2] in (": ", ":")


def _split_key(text: str, number: int) -> tuple[str, str]:
    if text.startswith('"'):
        key, end = _quoted(text, number, "key")
        rest = text[end:]
    else:
        key, colon, after = text.partition(":")
        if not colon or not _PLAIN_KEY.match(key):
            raise ShareFormatError(f"line {number}: expected `key: value` (got {text[:60]!r})")
        rest = ":" + after
    if not rest.startswith(":") or (len(rest) > 1 and rest[1] != " "):
        raise ShareFormatError(f"line {number}: expected `: ` after the key {key!r}")
    return str(key), rest[1:].strip()


def _quoted(text: str, number: int, what: str) -> tuple[Any, int]:
    """The JSON-quoted ``what`` (a key, a string) that opens ``text`` and where it ends.

    Raises ShareFormatError, naming line ``number``, when the quotes are not closed."""
    try:
        return json.JSONDecoder().raw_decode(text)
    except json.JSONDecodeError as exc:
        raise ShareFormatError(
            f"line {number}: a quoted {what} is not closed ({exc.msg})"
        ) from None


def _read_scalar(text: str, number: int) -> Any:
    if text == "[]":
        return []
    if text == "{}":
        return {}
    if text.startswith('"'):
        value, end = _quoted(text, number, "string")
        if text[end:].strip() or not isinstance(value, str):
            raise ShareFormatError(f"line {number}: text after a quoted string")
        return value
    if text in ("true", "false"):
        return text == "true"
    if text == "null":
        return None
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    if not plain_ok(text):
        raise ShareFormatError(
            f'line {number}: {text[:60]!r} must be quoted as "…" (it holds `: `, ` #`, '
            "starts with a YAML sign, or reads as another type)"
        )
    return text
