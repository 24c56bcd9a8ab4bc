"""The front's hook calls, answered without pydantic or the tool table: the prompt's lane.

Claude Code calls ``observe_prompt`` ~0.3–0.5 s after it spawns the server, and the prompt
waits for the answer. The handlers (:mod:`.hook_tools`) need the store, the services and the
embedder, never pydantic, the schema or the handler table, whose import (~0.3 s, more under
load) once made every first prompt wait. So the front answers the two hook tools here: the
arguments are read by :func:`arguments` (strings clipped, never refused, extra fields
ignored: what ``schema.ObservePromptInput`` and ``schema.TurnInput`` accept), the handler
runs in a worker thread under the hook's deadline with every lock wait bounded by it
(``storage.connection.waits_until``), and anything that goes wrong answers ``{}`` (fail open).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Config
from ..envelope import SILENT
from ..services.render import render
from ..storage.connection import waits_until
from .base import Answer
from .hook_tools import do_checkpoint_turn, do_observe_prompt
from .state import State

log = logging.getLogger("mama.server")
PROMPT_TEMPLATE = "prompt_context.md.j2"  # what services.recall renders a recall with
PROMPT_MAX, ID_MAX, PATH_MAX = 20_000, 200, 4096  # as schema/queries.py clips them
HOOK_DEADLINE_S = 3.0  # a handler's own deadline (as server.dispatch's)
# A hook call's whole budget (the shorter hook timeout in hooks/hooks.json is 5 s), waiting
# for the warm-up included.
HOOK_BUDGET_S = 4.5


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


LIMITS: dict[str, int] = {
    "prompt": PROMPT_MAX,
    "session_id": ID_MAX,
    "transcript_path": PATH_MAX,
    "last_assistant_message": PROMPT_MAX,
    "cwd": PATH_MAX,
}


def arguments(kind: type[PromptArgs] | type[TurnArgs], given: Any) -> Any:
    """``given`` read as ``kind``: known fields only, text clipped; ValueError on a wrong type."""
    if not isinstance(given, dict):
        raise ValueError(f"expected a JSON object of fields, got {type(given).__name__}")
    fields: dict[str, Any] = {}
    for name in kind.__dataclass_fields__:
        if name not in given:
            continue
        value = given[name]
        if name == "stop_hook_active" and isinstance(value, bool):
            fields[name] = value
        elif isinstance(value, str):
            fields[name] = value[: LIMITS.get(name, PROMPT_MAX)]
        else:
            raise ValueError(f"{name} must be a string, got {type(value).__name__}")
    return kind(**fields)


HOOKS: dict[str, tuple[type[PromptArgs] | type[TurnArgs], Callable[..., Answer]]] = {
    "observe_prompt": (PromptArgs, do_observe_prompt),
    "checkpoint_turn": (TurnArgs, do_checkpoint_turn),
}


def build(config: Config, project: str, db: Path | None, preload: Any, exposure: Any) -> State:
    """The front's State: the model taken from ``preload`` (leftovers embedded) in a thread
    of its own, and the store opened (and migrated) here rather than by the first call."""
    from .preload import adopt

    state = State(config, project, db)
    state.exposure = exposure  # the session keeps the list it was shown
    state.preload, state.embedder_loading = preload, True
    threading.Thread(target=adopt, args=(state,), name="mama-embedder", daemon=True).start()
    try:
        _ = state.store
    except Exception as exc:  # each call will say what is wrong, as it tries again
        log.error("the store did not open: %s", exc)
    with contextlib.suppress(Exception):  # compiled now, not by the first recall with hits
        render(PROMPT_TEMPLATE)
    return state


def answer(state: State, name: str, given: Any, asked: float) -> dict[str, Any]:
    """Run hook tool ``name`` (called at monotonic ``asked``): its MCP result, ``{}`` on failure.

    The handler gets ``HOOK_DEADLINE_S``, within ``HOOK_BUDGET_S`` from ``asked``. Past its
    deadline the answer is ``{}`` while the worker finishes on its own (SQLite work cannot be
    interrupted safely); its waits for another process's write lock end at the same
    deadline, so it gives up then too. Never raises; logs what the call cost the prompt.
    """
    waited = time.monotonic() - asked
    text, data = _run(state, name, given, max(0.5, min(HOOK_DEADLINE_S, HOOK_BUDGET_S - waited)))
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": False}
    if data is not None:  # hooks read only the text: the structured copy is for tests
        result["structuredContent"] = data
    log.info("%s answered in %.0f ms (%.0f ms waiting for the warm-up)", name,
             (time.monotonic() - asked) * 1000, waited * 1000)  # fmt: skip
    return result


def _run(state: State, name: str, given: Any, deadline_s: float) -> tuple[str, Any]:
    until = time.monotonic() + deadline_s
    try:
        kind, handler = HOOKS[name]
        args = arguments(kind, given if given is not None else {})
    except Exception as exc:
        log.error("%s: %s, answered {} (fail open)", name, exc)
        return SILENT, None
    result: list[Answer] = []

    def work() -> None:
        try:
            with waits_until(until):
                result.append(handler(state.env(), args))
        except Exception:
            log.error("%s failed, answered {} (fail open):\n%s", name, traceback.format_exc())

    worker = threading.Thread(target=work, name=f"mama-hook-{name}", daemon=True)
    worker.start()
    worker.join(max(0.0, until - time.monotonic()))
    if worker.is_alive():
        log.warning("%s ran past %.1f s: answered {} (fail open)", name, deadline_s)
        return SILENT, None
    if not result:
        return SILENT, None
    return result[0].text or SILENT, result[0].data
