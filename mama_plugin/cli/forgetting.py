"""``mama forget``, ``mama edit`` and ``mama redact``: removing or correcting what was saved."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..errors import MamaError
from .options import argument, command, json_option
from .shared import open_store, told


@command("forget", "delete a memory for good: its links, index rows, vectors and backup copies")
@argument("id", help="memory id")
@json_option()
def cmd_forget(args: argparse.Namespace) -> int:
    """Forget one memory and say what went with it."""
    from ..services.hygiene.forgetting import forget
    from ..team.erasure import reach

    with open_store(args) as store:
        done = forget(store, args.config, args.id)
        team = reach(store, [done.memory.project])
    return told(args, {**done.as_dict(), "team": team}, "\n".join([done.summary(), *team]))


@command("edit", "correct a memory's narrative fields (a conflict if it changed meanwhile)")
@argument("id", help="memory id")
@argument("--expected-version", type=int, help="the version you read (default: the current one)")
@argument("--topic", help="new topic")
@argument("--content", help="new main text (a decision's WHAT, a checkpoint's summary)")
@argument("--reason", help="new primary reason (reasoning.primary; the rest is kept)")
@argument("--tag", action="append", help="new tags (repeat; replaces the tags)")
@argument("--confidence", type=float, help="new confidence, 0 to 1")
@argument("--file", help="a JSON object of fields to change ('-': standard input)")
@json_option()
def cmd_edit(args: argparse.Namespace) -> int:
    """Change the fields given; with none, edit them as JSON in $VISUAL or $EDITOR."""
    from ..schema import UpdateInput, parse
    from ..services.hygiene.forgetting import edit

    with open_store(args) as store:
        current = store.memories.require(args.id)
        version = args.expected_version or current.version
        fields = _given(args, current.reasoning)
        if not fields:
            fields = _edited(_editable(current))
        request = {**fields, "memory_id": args.id, "expected_version": version}
        done = edit(store, args.config, parse(UpdateInput, request))
    return told(args, {"memory": done.memory.as_dict(), "before": done.before}, done.summary())


@command("redact", "mask a string everywhere MAMA stored it, backups included")
@argument("pattern", help="the string to mask (literal, any case, 3 characters or more)")
@json_option()
def cmd_redact(args: argparse.Namespace) -> int:
    """Mask the string in every memory, link, suggestion and cached text, then the backups."""
    from ..services.hygiene.forgetting import redact
    from ..team.erasure import reach

    with open_store(args) as store:
        done = redact(store, args.config, args.pattern)
        team = reach(store, None, pattern=args.pattern)
    rows = {"rows": done.rows, "memories": done.memories, **done.cleared.as_dict()}
    return told(args, {**rows, "team": team}, "\n".join([done.summary(), *team]))


_FIELDS = ("topic", "content", "reasoning", "specifics", "evidence", "tension", "tags")


def _given(args: argparse.Namespace, reasoning: dict[str, Any]) -> dict[str, Any]:
    """The fields the options give (``--reason`` keeps the rest of the reasoning)."""
    fields: dict[str, Any] = {}
    if args.file:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text("utf-8")
        fields = _json_object(text, args.file)
    for name in ("topic", "content", "confidence"):
        if getattr(args, name) is not None:
            fields[name] = getattr(args, name)
    if args.reason is not None:
        fields["reasoning"] = {**reasoning, "primary": args.reason}
    if args.tag:
        fields["tags"] = list(args.tag)
    return fields


def _editable(memory: Any) -> dict[str, Any]:
    return {name: getattr(memory, name) for name in _FIELDS} | {"confidence": memory.confidence}


def _edited(fields: dict[str, Any]) -> dict[str, Any]:
    """The fields as the person left them in their editor; only those changed are returned."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.TemporaryDirectory() as folder:  # the home's umask: private
        path = Path(folder) / "memory.json"
        path.write_text(json.dumps(fields, indent=2, ensure_ascii=False) + "\n", "utf-8")
        if subprocess.run([*shlex.split(editor), str(path)], check=False).returncode:
            raise MamaError(f"the editor ({editor}) failed: nothing was changed")
        edited = _json_object(path.read_text("utf-8"), "the edited file")
    changed = {k: v for k, v in edited.items() if fields.get(k) != v}
    if not changed:
        raise MamaError("nothing was changed in the editor: the memory is as it was")
    return changed


def _json_object(text: str, where: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise MamaError(f"{where} is not JSON ({exc}): nothing was changed") from None
    if not isinstance(value, dict):
        raise MamaError(f"{where} must hold a JSON object of fields: nothing was changed")
    return value
