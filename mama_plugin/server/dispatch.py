"""One tool call, from its name and arguments to its reply, with no transport attached.

Both servers answer ``tools/call`` through :func:`call`: the light stdio front
(:mod:`.front`) and the SDK wrapper (:mod:`.app`). It validates the arguments, runs the
handler (in a worker thread, so the event loop never waits on the store; a hook's under a
deadline that fails open to ``{}`` and bounds its lock waits), and turns what went wrong into
a tool error the model can act on. It never raises. Notifying a tool-list change is the
transport's job: it looks at ``state.exposure.pending``.
"""

from __future__ import annotations

import json
import logging
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio

from ..errors import MamaError
from ..logs import where
from ..schema import ObservePromptInput, TurnInput, parse
from ..storage.connection import waits_until
from .base import Answer, Env, Tool
from .hook_tools import SILENT, do_checkpoint_turn, do_observe_prompt
from .state import State

log = logging.getLogger("mama.server")
HOOK_DEADLINE_S = 3.0  # the hooks' own timeouts are 5 s and 10 s (hooks/hooks.json)
CLAUDE_CODE = "claude-code"
# The hook tools as the table in .tools has them (a test keeps the two equal): a hook's call
# must not wait for the whole table, whose import pulls in the local model's libraries.
HOOK_TOOLS = {
    tool.name: tool
    for tool in (
        Tool("observe_prompt", "", ObservePromptInput, do_observe_prompt, read_only=True,
             hidden=True, hook=True),
        Tool("checkpoint_turn", "", TurnInput, do_checkpoint_turn, read_only=False,
             hidden=True, hook=True),
    )
}  # fmt: skip


@dataclass(frozen=True)
class Reply:
    """A tool call's answer: the text a model reads, structured data (or None), error or not."""

    text: str
    structured: dict[str, Any] | None
    is_error: bool = False

    def result(self) -> dict[str, Any]:
        """The MCP ``CallToolResult`` as JSON."""
        result: dict[str, Any] = {
            "content": [{"type": "text", "text": self.text}],
            "isError": self.is_error,
        }
        if self.structured is not None:
            result["structuredContent"] = self.structured
        return result


def run_hook(state: State, tool: Tool, args: Any) -> Answer:
    """Run a hook tool's handler (in a worker thread)."""
    return tool.handler(state.env(), args)


def off_text(project: str) -> str:
    """What a write tool answers in a project where MAMA is switched off."""
    return (
        f"MAMA is off for this project ({project}): nothing was saved. To switch it back on, "
        "run /mama-configure (or `mama config enable` in the project's directory)."
    )


async def call(
    state: State,
    name: str,
    arguments: dict[str, Any] | None,
    *,
    client: str | None,
    call_id: str = "",
    hook_deadline_s: float = HOOK_DEADLINE_S,
    run: Callable[[State, Tool, Any], Answer] = run_hook,
) -> Reply:
    """Answer one ``tools/call``; ``client`` is the initialize clientInfo name.

    ``hook_deadline_s`` and ``run`` are parameters so the SDK server can pass its own (a test
    shrinks the deadline there).
    """
    if name in HOOK_TOOLS:
        return await _run_hook_tool(HOOK_TOOLS[name], arguments or {}, state, hook_deadline_s, run)
    from .tools import BY_NAME  # the whole table: imported on the first other call

    tool = BY_NAME.get(name)
    if tool is None:
        known = ", ".join(state.exposure.listed(None))
        return Reply(f"unknown tool {name!r}; the tools are: {known}", None, True)
    if tool.hook:
        return await _run_hook_tool(tool, arguments or {}, state, hook_deadline_s, run)
    arguments = arguments if arguments is not None else {}
    model, handler = tool.model, tool.handler
    if tool.drafted is not None and str(arguments.get("draft")).lower() == "true":
        model, handler = tool.drafted
    try:
        args = parse(model, arguments)
        # Every handler runs in a worker thread: store work may wait for another process's
        # write lock (the busy timeout), and the event loop must stay free meanwhile — it
        # runs the hooks' deadlines and the background tasks.
        answer = await anyio.to_thread.run_sync(_run_tool, state, tool, handler, args, call_id)
    except MamaError as exc:
        return Reply(f"{tool.name}: {exc}", None, True)
    except Exception:
        log.error("tool %s failed:\n%s", tool.name, traceback.format_exc())
        return Reply(
            f"{tool.name} failed inside MAMA (nothing was saved); details are in "
            f"{where('server')}",  # the log, or why it could not be written (a full disk)
            None,
            True,
        )
    if answer is None:
        return Reply(off_text(state.project), None, True)
    text, data = answer.text, dict(answer.data)
    if tool.replaced_by:
        notice = f"[deprecated: {tool.name} is MAMA v1.0; use {tool.replaced_by}]"
        text, data["deprecated"] = f"{notice}\n{text}", notice
    structured: dict[str, Any] | None = data
    if not text:
        text = json.dumps(data, ensure_ascii=False)
    elif client == CLAUDE_CODE:
        # Claude Code shows the model JSON.stringify(structuredContent) *instead of* the
        # text whenever a result carries it (seen in tests/test_claude_code.py): the text
        # is written for the model, so Claude Code gets the text alone.
        structured = None
    return Reply(text, structured)


def _run_tool(
    state: State, tool: Tool, handler: Callable[[Env, Any], Answer], args: Any, call_id: str
) -> Answer | None:
    """A listed tool's handler, in a worker thread; None when the project is switched off."""
    env = state.env(call_id=call_id)
    if not tool.read_only and not env.config.project_enabled(env.project):
        return None
    answer = handler(env, args)
    if not tool.read_only:
        state.wrote()  # the project's new state may need tools the session lacks
    return answer


def _bounded(
    run: Callable[[State, Tool, Any], Answer], state: State, tool: Tool, args: Any, until: float
) -> Answer:
    """``run`` with every lock wait of this worker thread ending at ``until`` (monotonic): a
    worker abandoned at the hook's deadline stops waiting then, and holds nothing."""
    with waits_until(until):
        return run(state, tool, args)


async def _run_hook_tool(
    tool: Tool,
    arguments: dict[str, Any],
    state: State,
    deadline_s: float,
    run: Callable[[State, Tool, Any], Answer],
) -> Reply:
    """Run a hook's tool off the event loop under a deadline; any failure answers ``{}``.

    A hook must never hold up the prompt: past the deadline the answer is ``{}`` while the
    worker thread finishes on its own (SQLite work cannot be interrupted safely); its waits
    for another process's write lock end at the same deadline, so it gives up then too.
    """
    text, data = SILENT, None
    until = time.monotonic() + deadline_s
    try:
        args = parse(tool.model, arguments)
        with anyio.fail_after(deadline_s):
            answer = await anyio.to_thread.run_sync(
                _bounded, run, state, tool, args, until, abandon_on_cancel=True
            )
        text, data = answer.text or SILENT, answer.data
    except TimeoutError:
        log.warning("%s ran past %.1f s: answered {} (fail open)", tool.name, deadline_s)
    except Exception:
        log.error("%s failed, answered {} (fail open):\n%s", tool.name, traceback.format_exc())
    # Hooks read only the text; the structured copy is for other clients and tests.
    return Reply(text, data)
