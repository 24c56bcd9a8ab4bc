"""The hook tools, declared once: what each reads, what answers it, and how long it may take.

Claude Code's ``mcp_tool`` hooks call two hidden tools on the running server:
UserPromptSubmit → ``observe_prompt``, Stop → ``checkpoint_turn`` (hooks/hooks.json). This
table is the one place they are named; the front (:mod:`.front`, which routes on it before
anything else is imported), the hook lane that runs them (:mod:`.hook_lane`), the SDK server's
dispatch (:mod:`.dispatch`) and the shipped catalogue (``bootstrap/tools.json``, written by
:mod:`.listing`) all read it. Standard library only: no pydantic, no store, no handlers — a
hook's handler (:mod:`.hook_tools`) is imported when the lane is built.

A hook's arguments are read by :func:`arguments`: strings clipped to their limit, never
refused for length; fields a newer Claude Code adds are ignored; a value of the wrong type
raises ValueError, which the lane answers with ``{}`` (fail open).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

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


@dataclass(frozen=True)
class HookTool:
    """One hidden tool a hook calls: the event calling it, its arguments, its handler."""

    name: str
    event: str  # the Claude Code hook event that calls it (hooks/hooks.json)
    args: type[PromptArgs] | type[TurnArgs]
    handler_name: str  # a function of .hook_tools taking (Env, args) and returning an Answer

    def read(self, given: Any) -> HookArgs:
        """The call's arguments (None as no arguments); ValueError on a wrong type."""
        read: HookArgs = arguments(self.args, given if given is not None else {})
        return read

    def handler(self) -> Callable[[Env, Any], Answer]:
        """The handler, looked up in :mod:`.hook_tools` at each call.

        The first lookup imports the store and the services: the hook runner makes it when it
        starts the lanes (the front's warm-up), never the front's first list.
        """
        from . import hook_tools

        found: Callable[[Env, Any], Answer] = getattr(hook_tools, self.handler_name)
        return found


HOOKS: dict[str, HookTool] = {
    hook.name: hook
    for hook in (
        # The memories this prompt touches, and the conversation's context for tool exposure.
        HookTool("observe_prompt", "UserPromptSubmit", PromptArgs, "do_observe_prompt"),
        # This session's rolling checkpoint, upserted after every turn.
        HookTool("checkpoint_turn", "Stop", TurnArgs, "do_checkpoint_turn"),
    )
}
