"""The MCP server: tools over stdio on the ``mcp`` 2.x low-level ``Server``.

``mama serve`` imports this module; nothing else should (``import mcp`` alone costs ~0.5 s).
The store opens on the first tool call and the embedding model loads in the background, so
``initialize`` and ``tools/list`` answer as soon as Python and ``mcp`` are loaded. Until the
model is warm, search runs on keywords. The background tasks (:mod:`.background`) drain the
embedding queue and the session's work queues.
"""

from __future__ import annotations

import json
import logging
import os
import traceback
from copy import deepcopy
from functools import cache
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged

from .. import __version__
from ..config import Config, mama_home
from ..errors import MamaError
from ..project import project_key
from ..schema import parse
from .background import (
    drain_before_exit,
    exit_on_signal,
    index_in_background,
    refresh_briefs_in_background,
    suggest_in_background,
)
from .base import Tool
from .catalogue import INSTRUCTIONS
from .hook_tools import SILENT
from .state import State
from .tools import BY_NAME

log = logging.getLogger("mama.server")
HOOK_DEADLINE_S = 3.0  # the hooks' own timeouts are 5 s and 10 s (hooks/hooks.json)


class _Server(Server[Any]):
    """Advertises tools.listChanged on the legacy protocol, whoever builds the options."""

    def create_initialization_options(
        self, notification_options: NotificationOptions | None = None, *args: Any, **kwargs: Any
    ) -> InitializationOptions:
        options = notification_options or NotificationOptions(tools_changed=True)
        return super().create_initialization_options(options, *args, **kwargs)


@cache
def _schema(model: type) -> dict[str, Any]:
    """The model's JSON schema with ``$ref``s inlined (some clients do not follow them)."""
    schema = model.model_json_schema()  # type: ignore[attr-defined]
    defs = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                target = deepcopy(defs[ref.removeprefix("#/$defs/")])
                extra = {k: v for k, v in node.items() if k != "$ref"}
                return inline({**target, **extra})
            return {k: inline(v) for k, v in node.items()}
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    schema = inline(schema)
    # Required fields first: the order a model reads them in is the order it fills them in.
    required = schema.get("required", [])
    props = schema.get("properties", {})
    schema["properties"] = {
        k: props[k] for k in [*required, *(k for k in props if k not in required)]
    }
    return schema


def tool_definition(tool: Tool) -> types.Tool:
    """The MCP description of a tool: schema from its pydantic model, read-only annotation."""
    return types.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=_schema(tool.model),
        annotations=types.ToolAnnotations(
            read_only_hint=tool.read_only, destructive_hint=False, open_world_hint=False
        ),
    )


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def _client(ctx: ServerRequestContext[Any, Any]) -> str | None:
    params = ctx.session.client_params
    return params.client_info.name if params is not None else None


def _call_id(params: types.CallToolRequestParams) -> str:
    """Claude Code's tool_use id for this call (``_meta``), or ""."""
    meta = params.meta if isinstance(params.meta, dict) else {}
    value = meta.get("claudecode/toolUseId")
    return value if isinstance(value, str) else ""


def build_server(state: State) -> Server[Any]:
    """A low-level MCP server over ``state``, notifying tool-list changes in both eras."""
    bus = InMemorySubscriptionBus()

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        names = state.exposure_ready().listed(_client(ctx))
        return types.ListToolsResult(tools=[tool_definition(BY_NAME[n]) for n in names])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = BY_NAME.get(params.name)
        if tool is None:
            known = ", ".join(state.exposure.listed(None))
            return _error(f"unknown tool {params.name!r}; the tools are: {known}")
        if tool.hook:
            result = await _run_hook_tool(tool, params.arguments or {}, state)
            if state.exposure.pending:
                await _notify(ctx, bus, state)
            return result
        arguments = params.arguments if params.arguments is not None else {}
        model, handler, slow = tool.model, tool.handler, tool.slow
        if tool.drafted is not None and str(arguments.get("draft")).lower() == "true":
            (model, handler), slow = tool.drafted, True
        try:
            args = parse(model, arguments)
            env = state.env(call_id=_call_id(params))
            if slow:  # a model may run for seconds: off the event loop
                answer = await anyio.to_thread.run_sync(handler, env, args)
            else:
                answer = handler(env, args)
        except MamaError as exc:
            return _error(f"{tool.name}: {exc}")
        except Exception:
            log.error("tool %s failed:\n%s", tool.name, traceback.format_exc())
            return _error(
                f"{tool.name} failed inside MAMA (nothing was saved); details are in "
                f"{mama_home() / 'logs' / 'server.log'}"
            )
        if not tool.read_only:
            state.wrote()  # the project's new state may need tools the session lacks
        if state.exposure.pending:
            await _notify(ctx, bus, state)
        text, data = answer.text, dict(answer.data)
        if tool.replaced_by:
            notice = f"[deprecated: {tool.name} is MAMA v1.0; use {tool.replaced_by}]"
            text, data["deprecated"] = f"{notice}\n{text}", notice
        structured: dict[str, Any] | None = data
        if not text:
            text = json.dumps(data, ensure_ascii=False)
        elif _client(ctx) == "claude-code":
            # Claude Code shows the model JSON.stringify(structuredContent) *instead of* the
            # text whenever a result carries it (seen in tests/test_claude_code.py): the text
            # is written for the model, so Claude Code gets the text alone.
            structured = None
        return types.CallToolResult(
            content=[types.TextContent(text=text)], structured_content=structured
        )

    return _Server(
        "mama",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(bus),
    )


def _handle(state: State, tool: Tool, args: Any) -> Any:
    return tool.handler(state.env(), args)


async def _run_hook_tool(
    tool: Tool, arguments: dict[str, Any], state: State
) -> types.CallToolResult:
    """Run a hook's tool off the event loop under a deadline; any failure answers ``{}``.

    A hook must never hold up the prompt: past the deadline the answer is ``{}`` while the
    worker thread finishes on its own (SQLite work cannot be interrupted safely).
    """
    text, data = SILENT, None
    try:
        args = parse(tool.model, arguments)
        with anyio.fail_after(HOOK_DEADLINE_S):
            answer = await anyio.to_thread.run_sync(
                _handle, state, tool, args, abandon_on_cancel=True
            )
        text, data = answer.text or SILENT, answer.data
    except TimeoutError:
        log.warning("%s ran past %.1f s: answered {} (fail open)", tool.name, HOOK_DEADLINE_S)
    except Exception:
        log.error("%s failed, answered {} (fail open):\n%s", tool.name, traceback.format_exc())
    # Hooks read only the text; the structured copy is for other clients and tests.
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=data)


async def _notify(
    ctx: ServerRequestContext[Any, Any], bus: InMemorySubscriptionBus, state: State
) -> None:
    """Tell the client its tool list changed, the way each protocol era hears it."""
    state.exposure.pending = False
    try:
        await ctx.session.send_tool_list_changed()  # up to 2025-11-25
        await bus.publish(ToolsListChanged())  # 2026-07-28: subscriptions/listen streams
    except Exception as exc:  # the client will not see the new tools: list everything
        state.exposure.fall_back(f"{type(exc).__name__}: {exc}")


def _configure_logging() -> None:
    folder = mama_home() / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(folder / "server.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("mama")
    root.addHandler(handler)
    root.setLevel(logging.INFO)


def serve(*, db: Path | None = None, cwd: str | None = None) -> None:
    """Run the server on stdin/stdout until the client closes the stream."""
    from mcp.server.stdio import stdio_server

    _configure_logging()
    # Claude Code exports the project's directory to plugin servers.
    config = Config(strict=False)
    state = State(config, project_key(cwd or os.environ.get("CLAUDE_PROJECT_DIR") or None), db)
    for problem in config.problems:
        log.error("%s — fix it with `mama config set`", problem)
    server = build_server(state)

    async def main() -> None:
        async with stdio_server() as (read, write), anyio.create_task_group() as tasks:
            tasks.start_soon(index_in_background, state)
            tasks.start_soon(refresh_briefs_in_background, state)
            tasks.start_soon(suggest_in_background, state)
            tasks.start_soon(exit_on_signal, state)  # drains, then ends the process
            await server.run(read, write, server.create_initialization_options())
            await drain_before_exit(state)  # a short session leaves no memory unembedded
            tasks.cancel_scope.cancel()

    try:
        anyio.run(main)
    finally:
        state.close()
