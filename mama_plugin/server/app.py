"""The SDK server: MAMA's tools over the ``mcp`` 2.x low-level ``Server`` (``mama serve --sdk``).

Claude Code runs the light front (:mod:`.front`), which answers ``initialize`` before anything
heavy loads; this server speaks the same tools through the SDK, for clients of the 2026-07-28
protocol era (``subscriptions/listen``) and for in-process tests (``mcp.Client``). Importing
it costs ~1 s (``import mcp``). Tool calls go through :mod:`.dispatch`, like the front's.
"""

from __future__ import annotations

import logging
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
from . import background, dispatch
from .background import drain_before_exit, end_process, exit_on_signal
from .base import Tool
from .catalogue import INSTRUCTIONS, OFF
from .hook_table import HOOKS
from .process import composition_root
from .state import State
from .tool_table import BY_NAME
from .word_params import LINK_TOOL, with_word_parameters

log = logging.getLogger("mama.server")


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

    schema = {**lean(inline(schema)), "additionalProperties": False}
    # The model's docstring restates the tool's description, which the client lists beside it.
    schema.pop("description", None)
    # Required fields first: the order a model reads them in is the order it fills them in.
    required = schema.get("required", [])
    props = schema.get("properties", {})
    schema["properties"] = {
        k: props[k] for k in [*required, *(k for k in props if k not in required)]
    }
    return schema


# What a listed schema leaves to the server's own validation: a model never needs a title
# pydantic derives from the field's name, a length or count bound far above what it writes, or
# an empty default, to fill a field in (a value out of bounds gets the server's error, saying
# the field and the bound). The client pays each of them in every request's tool list.
_UNLISTED = frozenset({"title", "minLength", "maxLength", "maxItems"})


def lean(node: Any) -> Any:
    """``node`` (a JSON schema) as it is listed: without ``_UNLISTED`` keys, empty defaults,
    nested ``additionalProperties: false`` and a list's item description when the list has
    its own; an optional ``X | None`` told as ``X``."""
    if isinstance(node, list):
        return [lean(v) for v in node]
    if not isinstance(node, dict):
        return node
    options = node.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options and node.get("default") is None:
        kept = [o for o in options if o != {"type": "null"}]
        if len(kept) == 1:  # optional: omitted is None
            rest = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
            return lean({**kept[0], **rest})
    out = {}
    items = node.get("items")
    if "description" in node and isinstance(items, dict) and "description" in items:
        # A list's items told twice: once as the list ("Checked and true, each with its
        # evidence"), once as each item ("Checked and true, with the evidence…").
        node = {**node, "items": {k: v for k, v in items.items() if k != "description"}}
    for key, value in node.items():
        if key in _UNLISTED or (key == "default" and _empty(value)):
            continue
        if key == "additionalProperties" and value is False:
            continue
        out[key] = value if key in ("enum", "required", "default") else lean(value)
    return out


def _empty(value: Any) -> bool:
    """An empty default: nothing, or an object of nothing ({"concerns": [], "risks": []})."""
    if isinstance(value, dict):
        return all(_empty(v) for v in value.values())
    return value in ([], "", None)


def tool_definition(tool: Tool) -> types.Tool:
    """The MCP description of a tool: schema from its pydantic model, read-only annotation."""
    return types.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=_schema(tool.model),
        annotations=types.ToolAnnotations(
            read_only_hint=tool.read_only,
            destructive_hint=tool.destructive,
            open_world_hint=False,
        ),
    )


def _with_words(tool: types.Tool, words: list[Any]) -> types.Tool:
    """``tool`` with the promoted words' parameters when it is the link tool."""
    listed = {"name": tool.name, "inputSchema": tool.input_schema}
    patched = with_word_parameters(listed, words)
    if patched is listed:
        return tool
    return tool.model_copy(update={"input_schema": patched["inputSchema"]})


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
        state.exposure.listings += 1
        tools = [tool_definition(BY_NAME[n]) for n in names]
        if LINK_TOOL in names:  # the project's frequent words as the link tool's parameters
            words = state.parameter_words()
            state.exposure.words = tuple(w.word for w in words)
            tools = [_with_words(t, words) for t in tools]
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        changes = state.exposure.changes
        reply = await dispatch.call(
            state, params.name, params.arguments, client=_client(ctx), call_id=_call_id(params)
        )
        if state.exposure.pending:
            await _notify(ctx, bus, state)
        grew = state.exposure.changes != changes and not state.exposure.failed
        if grew and params.name not in HOOKS:
            # Answered once the client has listed the tools again: its next request has them
            # (a hook's turn was built before the hook ran: no wait there).
            await anyio.to_thread.run_sync(state.exposure.relisted)
        return types.CallToolResult(
            content=[types.TextContent(text=reply.text)],
            structured_content=reply.structured,
            is_error=reply.is_error,
        )

    return _Server(
        "mama",
        version=__version__,
        instructions=INSTRUCTIONS if state.config.project_enabled(state.project) else OFF,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(bus),
    )


async def _notify(
    ctx: ServerRequestContext[Any, Any], bus: InMemorySubscriptionBus, state: State
) -> None:
    """Tell the client its tool list changed, the way each protocol era hears it."""
    state.exposure.pending = False
    state.exposure.told_at = state.exposure.listings
    try:
        await ctx.session.send_tool_list_changed()  # up to 2025-11-25
        await bus.publish(ToolsListChanged())  # 2026-07-28: subscriptions/listen streams
    except Exception as exc:  # the client will not see the new tools: list everything
        state.exposure.fall_back(f"{type(exc).__name__}: {exc}")


def serve(*, db: Path | None = None, cwd: str | None = None) -> None:
    """Run the SDK server on stdin/stdout until the client closes the stream."""
    from mcp.server.stdio import stdio_server

    config, project = composition_root(cwd)
    state = State(config, project, db)
    server = build_server(state)

    async def main() -> None:
        async with stdio_server() as (read, write), anyio.create_task_group() as tasks:
            for task in background.tasks():  # the same ones the front's loop runs
                tasks.start_soon(task, state)
            tasks.start_soon(exit_on_signal, state)  # drains, then ends the process
            await server.run(read, write, server.create_initialization_options())
            await drain_before_exit(state)  # a short session leaves no memory unembedded
            # At once, as the front does: a background job in a worker thread (a model's
            # lines, gc) can be neither cancelled nor waited for within a client's patience.
            end_process(state)

    try:
        anyio.run(main)
    finally:
        state.close()
