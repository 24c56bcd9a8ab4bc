"""A tool declared once, beside its handler: ``@tool(name, description, ...)`` on the function.

As the MCP SDK builds a tool from its function (``Tool.from_function``), the decorator reads
the input model from the handler's annotation (``def do_x(env: Env, args: XInput)``) and
records the rest — the description, the hints, which conversational contexts list the tool
(:mod:`.exposure`), whether it is in the always-listed core, whether it is a MAMA v1.0 alias
and what replaced it. A hook tool is declared the same way with ``@hook(name, event)``.

Everything else is derived from these declarations: the tool table (:mod:`.tool_table`), the
hook table's tools (:mod:`.hook_table`), and the generated files the light front reads before
pydantic loads — ``bootstrap/tools.json`` and the exposure sets (:mod:`.listing` writes both;
tests fail while either is stale) — and the README's "MCP tools" table.

The decorators return the handler unchanged (tests and the CLI call handlers directly) and
record the declaration under the handler's module; :func:`declared` and
:func:`declared_hooks` give a module's declarations in the order they are written.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, TypeVar

from .base import Answer, Env, Tool

# The conversational contexts a tool may be listed for, in the order the exposure sets keep
# them (context.py detects each in prompts; the store's state seeds the first three).
CONTEXTS = ("resuming", "searching", "deciding", "tracking", "linking", "editing")

H = TypeVar("H", bound=Callable[..., Answer])
_TOOLS: dict[str, dict[str, Tool]] = {}  # module -> name -> declaration, in declaration order
_HOOKS: dict[str, dict[str, Hook]] = {}


@dataclass(frozen=True)
class Hook:
    """One hidden tool a Claude Code hook calls: its name, the event, its handler."""

    name: str
    event: str  # the hook event that calls it (hooks/hooks.json)
    handler: Callable[[Env, Any], Answer]


def _model_of(handler: Callable[..., Answer]) -> Any:
    """The input model a handler's second parameter is annotated with."""
    hints = typing.get_type_hints(handler)
    params = [p for p in handler.__code__.co_varnames[: handler.__code__.co_argcount]]
    if len(params) != 2 or params[1] not in hints:
        raise TypeError(f"{handler.__qualname__} must be (env: Env, args: <input model>)")
    return hints[params[1]]


def _record(module: str, name: str, tool: Tool) -> None:
    for tools in _TOOLS.values():
        if name in tools and tools[name].handler.__qualname__ != tool.handler.__qualname__:
            raise ValueError(f"tool {name!r} is declared twice")
    _TOOLS.setdefault(module, {})[name] = tool


@dataclass(frozen=True)
class Hints:
    """How a tool treats the store and when a session lists it.

    ``slow``: may run a model or rewrite files for seconds (a worker thread);
    ``destructive``: deletes or overwrites what was saved; ``core``: listed in every session;
    ``contexts``: listed once the session's project makes one of them possible or a prompt
    signals it (:data:`CONTEXTS`).
    """

    read_only: bool
    core: bool = False
    contexts: tuple[str, ...] = ()
    slow: bool = False
    destructive: bool = False


# The hints several tools share; a tool's own are written in its declaration.
READS = Hints(read_only=True)
WRITES = Hints(read_only=False)
CORE_READS = Hints(read_only=True, core=True)
CORE_WRITES = Hints(read_only=False, core=True)


def tool(
    name: str,
    description: str,
    hints: Hints,
    *,
    drafted: Callable[[Env, Any], Answer] | None = None,
    word_parameters: bool = False,
) -> Callable[[H], H]:
    """Declare the decorated handler as the MCP tool ``name``, with its :class:`Hints`.

    ``drafted``: the handler answering the call when ``draft=true`` (its input model read the
    same way). ``word_parameters``: the link tool, whose listed schema grows the project's
    frequent relationship words as parameters (:mod:`.word_params`; one tool at most).
    """
    unknown = set(hints.contexts) - set(CONTEXTS)
    if unknown:
        raise ValueError(f"{name}: unknown contexts {sorted(unknown)}")

    def declare(handler: H) -> H:
        declared_tool = Tool(
            name,
            description,
            _model_of(handler),
            handler,
            read_only=hints.read_only,
            slow=hints.slow,
            destructive=hints.destructive,
            drafted=(_model_of(drafted), drafted) if drafted is not None else None,
            core=hints.core,
            contexts=tuple(hints.contexts),
            word_parameters=word_parameters,
        )
        _record(handler.__module__, name, declared_tool)
        return handler

    return declare


def alias(name: str, *, replaced_by: str) -> Callable[[H], H]:
    """Declare the decorated handler as ``name``, the MAMA v1.0 tool that ``replaced_by``
    (declared earlier) replaced: served with a deprecation notice, hidden from the list, with
    its replacement's hints."""
    then = by_name(replaced_by)

    def declare(handler: H) -> H:
        declared_tool = Tool(
            name,
            f"MAMA v1.0: use {replaced_by}.",
            _model_of(handler),
            handler,
            read_only=then.read_only,
            hidden=True,
            replaced_by=replaced_by,
            slow=then.slow,
            destructive=then.destructive,
        )
        _record(handler.__module__, name, declared_tool)
        return handler

    return declare


def hook(name: str, event: str) -> Callable[[H], H]:
    """Declare the decorated handler as the hidden tool the ``event`` hook calls."""

    def declare(handler: H) -> H:
        _HOOKS.setdefault(handler.__module__, {})[name] = Hook(name, event, handler)
        return handler

    return declare


def declared(module: ModuleType) -> tuple[Tool, ...]:
    """The tools ``module`` declares, in the order it declares them."""
    return tuple(_TOOLS.get(module.__name__, {}).values())


def declared_hooks(module: ModuleType) -> tuple[Hook, ...]:
    """The hook tools ``module`` declares, in the order it declares them."""
    return tuple(_HOOKS.get(module.__name__, {}).values())


def by_name(name: str) -> Tool:
    """A tool already declared (by any module imported so far)."""
    for tools in _TOOLS.values():
        if name in tools:
            return tools[name]
    raise KeyError(f"no tool {name!r} is declared (yet)")
