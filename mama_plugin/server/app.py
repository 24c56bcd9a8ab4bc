"""The MCP server: tools over stdio on the ``mcp`` 2.x low-level ``Server``.

``mama serve`` imports this module; nothing else should (``import mcp`` alone costs ~0.5 s).
The store opens on the first tool call and the embedding model loads in the background, so
``initialize`` and ``tools/list`` answer as soon as Python and ``mcp`` are loaded. Until the
model is warm, search runs on keywords. The same background task drains the embedding queue.
"""

from __future__ import annotations

import json
import logging
import os
import threading
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
from ..config import KEYS, Config, mama_home
from ..errors import MamaError
from ..project import project_key
from ..schema import parse
from ..storage import Store
from ..storage import vectors as vec
from .base import Env, Session, Tool
from .context import detect
from .exposure import Exposure
from .hook_tools import SILENT
from .tools import BY_NAME

log = logging.getLogger("mama.server")
INSTRUCTIONS = (
    "MAMA is this project's memory of decisions. Before deciding, ask search_by_context; when "
    "you decide, save_decision with the WHY; when work pauses, save_checkpoint; when a "
    "decision turns out well or badly, evolve_outcome. Results say what is current."
)
DRAIN_BATCH = 16
DRAIN_IDLE_S = 2.0
STARTUP_GRACE_S = 1.0
HOOK_DEADLINE_S = 3.0  # the hooks' own timeouts are 5 s and 10 s (hooks/hooks.json)


class _Server(Server[Any]):
    """Advertises tools.listChanged on the legacy protocol, whoever builds the options."""

    def create_initialization_options(
        self, notification_options: NotificationOptions | None = None, *args: Any, **kwargs: Any
    ) -> InitializationOptions:
        options = notification_options or NotificationOptions(tools_changed=True)
        return super().create_initialization_options(options, *args, **kwargs)


class State:
    """Everything one server process holds: config, project, store, embedder, exposure."""

    def __init__(self, config: Config, project: str, db: Path | None = None) -> None:
        self.config = config
        self.project = project
        self.db = db
        self.exposure = Exposure(
            mode=_dynamic_tools(config), legacy_listed=config.get("legacy_tools_listed")
        )
        self._store: Store | None = None
        self.embedder: Any = None
        self._assistant: Any = None
        self.session = Session()
        # One connection serves the event loop and the hook tools' worker threads: every use
        # of the store holds this lock, so their transactions never interleave.
        self.lock = threading.RLock()

    @property
    def store(self) -> Store:
        """The store, opened (and migrated) on first use."""
        if self._store is None:
            self._store = Store.open(self.db, config=self.config)
        return self._store

    @property
    def assistant(self) -> Any:
        """The local generative model's runtime (its model loads on first use, not here)."""
        from ..assist.runtime import Assistant

        if self._assistant is None or self._assistant.config.get("assist_model_path") != (
            self.config.get("assist_model_path")
        ):
            if self._assistant is not None:
                self._assistant.close()
            self._assistant = Assistant(self.config)
        self._assistant.config = self.config  # threads, context and timeout apply next load
        return self._assistant

    def env(self, *, call_id: str = "") -> Env:
        """What the tool handlers need (with config.json re-read if it changed)."""
        fresh = self.config.refreshed()
        if fresh is not self.config:
            self.config = fresh
            for problem in fresh.problems:
                log.error("%s — fix it with `mama config set`", problem)
        return Env(self.store, self.project, self.embedder, self.observe, self.config,
                   self.session, lambda: self.assistant, lambda: self.lock, call_id)  # fmt: skip

    def observe(self, prompt: str) -> tuple[str | None, list[str]]:
        """Detect the prompt's context and grow the tool list for it; return both."""
        context = detect(prompt)
        return context, self.exposure.grow(context)

    def close(self) -> None:
        """Close the store if it was opened, and free the assist model if it was loaded."""
        if self._assistant is not None:
            self._assistant.close()
        if self._store is not None:
            self._store.close()
            self._store = None


def _dynamic_tools(config: Config) -> str:
    """The ``dynamic_tools`` mode: ``$MAMA_DYNAMIC_TOOLS`` when valid, else the config's.

    The bootstrap bridge sets ``force_static`` when it hands a session over, so the list
    stays the full static one the client already read from the bridge.
    """
    override = os.environ.get("MAMA_DYNAMIC_TOOLS", "").strip()
    if override:
        try:
            return str(KEYS["dynamic_tools"].parse(override))
        except ValueError as exc:
            log.error("MAMA_DYNAMIC_TOOLS=%r ignored: %s", override, exc)
    return str(config.get("dynamic_tools"))


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
        names = state.exposure.listed(_client(ctx))
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
            if slow:  # a model may run for seconds: off the event loop, store lock as needed
                with state.lock:
                    env = state.env(call_id=_call_id(params))
                answer = await anyio.to_thread.run_sync(handler, env, args)
            else:
                with state.lock:
                    answer = handler(state.env(call_id=_call_id(params)), args)
        except MamaError as exc:
            return _error(f"{tool.name}: {exc}")
        except Exception:
            log.error("tool %s failed:\n%s", tool.name, traceback.format_exc())
            return _error(
                f"{tool.name} failed inside MAMA (nothing was saved); details are in "
                f"{mama_home() / 'logs' / 'server.log'}"
            )
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


def _locked(state: State, tool: Tool, args: Any) -> Any:
    with state.lock:
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
                _locked, state, tool, args, abandon_on_cancel=True
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


async def index_in_background(state: State) -> None:
    """Load the embedding model off the event loop, then keep the embedding queue drained."""
    from ..embeddings import open_embedder

    await anyio.sleep(STARTUP_GRACE_S)  # let initialize and tools/list go first
    try:
        state.embedder = await anyio.to_thread.run_sync(open_embedder, state.config)
    except Exception as exc:  # no model: search stays keyword-only
        log.warning("embedding model unavailable, keyword search only: %s", exc)
        return
    while True:
        try:
            with state.lock:
                store = state.store
                vec.check_model(store, state.embedder.name, state.embedder.dim)
                batch = vec.pending(store, DRAIN_BATCH)
            if batch:
                vectors = await anyio.to_thread.run_sync(
                    state.embedder.embed, [text for _, text in batch]
                )
                with state.lock:
                    vec.put_vectors(store, list(zip((s for s, _ in batch), vectors, strict=True)))
                continue
        except MamaError as exc:  # e.g. a model mismatch: needs `mama reindex`
            log.warning("embedding paused: %s", exc)
            await anyio.sleep(60)
        except Exception:
            log.error("embedding failed:\n%s", traceback.format_exc())
            await anyio.sleep(30)
        await anyio.sleep(DRAIN_IDLE_S)


BRIEF_IDLE_S = 0.5
SUGGEST_IDLE_S = 1.0


async def suggest_in_background(state: State) -> None:
    """Judge link candidates for each saved memory, off the request path (pending only)."""
    from ..assist import suggest

    def run(memory_id: str) -> None:
        with state.lock:
            env = state.env()
        if not env.config.get("link_suggestions"):
            return
        made = suggest.suggest_for(
            env.store, memory_id, assistant=env.assistant, embedder=env.embedder, lock=env.lock
        )
        log.info("link suggestions for %s: %d new", memory_id, len(made))

    while True:
        await anyio.sleep(SUGGEST_IDLE_S)
        while state.session.suggest_queue:
            memory_id = state.session.suggest_queue.pop(0)
            try:
                await anyio.to_thread.run_sync(run, memory_id)
            except Exception:
                log.error("link suggestions for %s failed:\n%s", memory_id, traceback.format_exc())


async def refresh_briefs_in_background(state: State) -> None:
    """Re-render the session-start cliffhanger after a turn's checkpoint, off the hook's path.

    The Stop hook only marks the project; the next session then finds the text cached. If
    the session ends first, the next SessionStart renders it itself (slower, still correct).
    """
    from ..services import briefing

    def refresh(project: str) -> None:
        with state.lock:
            briefing.refresh(state.store, project, state.config)

    while True:
        await anyio.sleep(BRIEF_IDLE_S)
        while state.session.stale_briefs:
            project = state.session.stale_briefs.pop()
            try:
                await anyio.to_thread.run_sync(refresh, project)
            except Exception:
                log.error("cliffhanger refresh failed:\n%s", traceback.format_exc())


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
            await server.run(read, write, server.create_initialization_options())
            tasks.cancel_scope.cancel()

    try:
        anyio.run(main)
    finally:
        state.close()
