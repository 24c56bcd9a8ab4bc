"""The hook tools: what each reads, what answers it, and how long it may take.

Claude Code's ``mcp_tool`` hooks call two hidden tools on the running server (hooks/hooks.json),
each declared once beside its handler in :mod:`.hook_tools` (``@hook(name, event)``,
:mod:`.declare`). This table is what the front (:mod:`.front`, which routes on it before
anything else is imported), the hook lane that runs them (:mod:`.hook_lane`) and the SDK
server's dispatch (:mod:`.dispatch`) read: :data:`HOOKS` knows the names from the shipped
catalogue (``bootstrap/tools.json``, generated from the declarations by :mod:`.listing`) and
reads a tool's declaration — its event, and from the event its arguments — the first time the
tool is asked for. Standard library only: no pydantic, no store, no handlers — the handlers'
module is imported when the lane is built.

A hook's arguments are read by :func:`arguments`: strings clipped to their limit, never
refused for length; fields a newer Claude Code adds are ignored; a value of the wrong type
raises ValueError, which the lane answers with ``{}`` (fail open).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, fields
from functools import cache
from typing import TYPE_CHECKING, Any

from .catalogue import load

if TYPE_CHECKING:
    from .base import Answer, Env

# A hook handler's own deadline: past it the call answers {} (fail open) while its worker
# finishes on its own, and every lock wait of the worker ends then (storage.connection).
HOOK_DEADLINE_S = 3.0
# A hook call's whole budget, from the moment it was asked, the wait for the server's
# warm-up included: under the shorter mcp_tool hook timeout in hooks/hooks.json (5 s), so a
# late answer is never dropped by Claude Code after the prompt waited for it.
HOOK_BUDGET_S = 4.5
# The least a handler is given however long the warm-up took: the warm-up wait is capped at
# HOOK_BUDGET_S - HOOK_LEAST_S.
HOOK_LEAST_S = 0.5
PROMPT_MAX, ID_MAX, PATH_MAX = 20_000, 200, 4096


@dataclass(frozen=True)
class PromptArgs:
    """The user's prompt, as the UserPromptSubmit hook forwards it."""

    prompt: str = ""
    session_id: str = ""
    transcript_path: str = ""


@dataclass(frozen=True)
class TurnArgs:
    """What the Stop hook forwards after each turn (``${...}`` placeholders, as strings)."""

    session_id: str = ""
    transcript_path: str = ""
    last_assistant_message: str = ""
    cwd: str = ""
    stop_hook_active: bool | str = False

    @property
    def continuing(self) -> bool:
        """True when Claude is already continuing because a Stop hook asked it to."""
        return str(self.stop_hook_active).strip().lower() in ("true", "1")


HookArgs = PromptArgs | TurnArgs
# Each text field's limit: a hook's text is clipped to it, never refused.
LIMITS: dict[str, int] = {
    "prompt": PROMPT_MAX,
    "session_id": ID_MAX,
    "transcript_path": PATH_MAX,
    "last_assistant_message": PROMPT_MAX,
    "cwd": PATH_MAX,
}


def arguments(kind: type[PromptArgs] | type[TurnArgs], given: Any) -> Any:
    """``given`` read as ``kind``: known fields only, text clipped; ValueError on a wrong type.

    ``stop_hook_active`` may be a boolean or a string (Claude Code substitutes placeholders
    as strings); every other field is a string.
    """
    if not isinstance(given, dict):
        raise ValueError(f"expected a JSON object of fields, got {type(given).__name__}")
    read: dict[str, Any] = {}
    for field in fields(kind):
        if field.name not in given:
            continue
        value = given[field.name]
        if field.name == "stop_hook_active" and isinstance(value, bool):
            read[field.name] = value
        elif isinstance(value, str):
            read[field.name] = value[: LIMITS.get(field.name, PROMPT_MAX)]
        else:
            raise ValueError(f"{field.name} must be a string, got {type(value).__name__}")
    return kind(**read)


# What each hook event forwards (hooks/hooks.json's "input"), read as this type.
EVENT_ARGS: dict[str, type[PromptArgs] | type[TurnArgs]] = {
    "UserPromptSubmit": PromptArgs,
    "Stop": TurnArgs,
}


@dataclass(frozen=True)
class HookTool:
    """One hidden tool a hook calls: the event calling it, its arguments, its handler."""

    name: str
    event: str  # the Claude Code hook event that calls it (hooks/hooks.json)
    args: type[PromptArgs] | type[TurnArgs]
    function: Callable[[Env, Any], Answer]  # declared by @hook in .hook_tools

    def read(self, given: Any) -> HookArgs:
        """The call's arguments (None as no arguments); ValueError on a wrong type."""
        read: HookArgs = arguments(self.args, given if given is not None else {})
        return read

    def handler(self) -> Callable[[Env, Any], Answer]:
        """The handler, looked up in its module (:mod:`.hook_tools`) at each call, as the
        module has it now."""
        found: Callable[[Env, Any], Answer] = getattr(
            sys.modules[self.function.__module__], self.function.__name__
        )
        return found


class Hooks(Mapping[str, HookTool]):
    """The hook tools by name. Whether a name is one reads the shipped catalogue alone (the
    standard library: what the front routes on); asking for a tool first imports the handlers'
    module (:mod:`.hook_tools`: the store and the services — the hook runner does it when it
    starts the lanes, in the front's warm-up, never the front's first list)."""

    def __contains__(self, name: object) -> bool:
        return name in load().hooks

    def __iter__(self) -> Iterator[str]:
        return iter(load().hooks)

    def __len__(self) -> int:
        return len(load().hooks)

    def __getitem__(self, name: str) -> HookTool:
        if name not in self:
            raise KeyError(name)
        return _declared()[name]


@cache
def _declared() -> dict[str, HookTool]:
    from . import hook_tools
    from .declare import declared_hooks

    return {
        h.name: HookTool(h.name, h.event, EVENT_ARGS[h.event], h.handler)
        for h in declared_hooks(hook_tools)
    }


HOOKS = Hooks()
