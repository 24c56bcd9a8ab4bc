"""One tool call, from its name and arguments to its reply, with no transport attached.

Both servers answer ``tools/call`` through :func:`call`: the light stdio front
(:mod:`.front`) and the SDK wrapper (:mod:`.app`). A hook tool (:mod:`.hook_table`) goes to
its lane (:mod:`.hook_lane`: its own worker, its deadline, ``{}`` on any failure); any other
tool's arguments are validated and its handler runs in a worker thread, so the event loop
never waits on the store, and what went wrong becomes a tool error the model can act on. It
never raises. Notifying a tool-list change is the transport's job: it looks at
``state.exposure.pending``.
"""

from __future__ import annotations

import json
import logging
import time
import traceback
from collections.abc import Callable
from typing import Any

import anyio

from ..errors import MamaError
from ..logs import where
from ..schema import parse
from .base import Answer, Env, Reply, Tool
from .hook_table import HOOKS
from .state import State

log = logging.getLogger("mama.server")
CLAUDE_CODE = "claude-code"


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
) -> Reply:
    """Answer one ``tools/call``; ``client`` is the initialize clientInfo name."""
    if name in HOOKS:
        # The hook's lane runs it; this worker thread only waits for it (its deadline at most).
        asked = time.monotonic()
        return await anyio.to_thread.run_sync(
            _hook_call, state, name, arguments, asked, abandon_on_cancel=True
        )
    from .tool_table import BY_NAME  # the whole table: imported on the first other call

    tool = BY_NAME.get(name)
    if tool is None:
        known = ", ".join(state.exposure.listed(None))
        return Reply(f"unknown tool {name!r}; the tools are: {known}", None, True)
    arguments = arguments if arguments is not None else {}
    model, handler = tool.model, tool.handler
    if tool.drafted is not None and str(arguments.get("draft")).lower() == "true":
        model, handler = tool.drafted
    try:
        args = parse(model, arguments)
        # Every handler runs in a worker thread: store work may wait for another process's
        # write lock (the busy timeout), and the event loop must stay free meanwhile — it
        # answers the other calls and runs the background tasks.
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
    if (damage := state.damage) is not None and damage.readable:
        notice = f"[{damage.notice}]"  # read as usual, searched without the damaged part
        text, data["damaged"] = f"{notice}\n{text}" if text else "", damage.notice
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


def _hook_call(state: State, name: str, arguments: Any, asked: float) -> Reply:
    """A hook tool's call on its lane (the runner starts with the first one)."""
    return state.hooks.call(name, arguments, asked)
