"""Replay labelled session sequences through one MAMA checkout's code; print every start it tells.

Run as a script by :mod:`.story`, once per checkout compared (``python -P story_replay.py``
with that checkout alone on ``PYTHONPATH``): it imports the standard library and
``mama_plugin`` only, so an older checkout (``--baseline-plugin``) replays with its own code.
The plan comes on stdin as JSON; the starts go to stdout as JSON.

Each sequence gets a fresh MAMA home and store; each session in it is replayed as
``python -m benchmarks answers`` replays one: turn by turn through the Stop hook's rolling
checkpoint (``services.story.autosave.checkpoint_turn`` on ``transcript.turns.turn_digests``,
the transcript as it stood when each turn ended, the transcript's own cwd), the turn's saves
made first through the product's save paths — the MAMA tool calls the recording holds
(``save_decision``, ``save_checkpoint``: the saves the real server made during that turn) and
the scripted saves of the plan (``decide``, ``supersede``, ``outcome``, ``checkpoint``, as
``answers_story.json`` writes them). A ``forget`` step deletes the decisions saved in the named
sessions through ``mama forget``'s path (``services.hygiene.forgetting.forget``).

After every step the SessionStart hook's handler (``hooks.session_start.session_start``)
is called as Claude Code's hook calls it, for a new session (``source`` "startup") and for
this one compacted (``source`` "compact"), on a store closed and reopened as between two
processes. The project is a folder that does not exist, so no file the memories cite is
found on disk (the recorded projects are gone): what the start says comes from the store.
"""

from __future__ import annotations

import importlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TURN_GAP_S = 0.002  # every write a later millisecond than the last: orders the rows as lived


def _module(*names: str) -> Any:
    """The first of ``names`` the checkout has: a baseline may predate a module's move."""
    for name in names:
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if not exc.name or not name.startswith(exc.name):
                raise  # the module is there, something it imports is not
    raise ModuleNotFoundError(f"none of {', '.join(names)}")


def tool_saves(path: Path, turn_tools: list[list[str]]) -> dict[int, list[tuple[str, Any]]]:
    """MAMA's successful save calls in a transcript, by turn (1-based): (short name, input).

    ``turn_tools``: the names of the tools each turn called (from the digests), to place each
    call in its turn; a transcript whose calls do not line up with them raises ValueError.
    """
    uses: list[dict[str, Any]] = []
    failed: set[str] = set()
    seen: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        content = (entry.get("message") or {}).get("content") if isinstance(entry, dict) else None
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and block.get("id") not in seen:
                seen.add(str(block.get("id")))
                uses.append(block)
            elif block.get("type") == "tool_result" and block.get("is_error"):
                failed.add(str(block.get("tool_use_id")))
    names = [n for turn in turn_tools for n in turn]
    if [u.get("name") for u in uses][: len(names)] != names:
        raise ValueError(f"{path}: its tool calls do not line up with its turns")
    out: dict[int, list[tuple[str, Any]]] = {}
    i = 0
    for turn, called in enumerate(turn_tools, 1):
        for use in uses[i : i + len(called)]:
            name = str(use.get("name", ""))
            short = name.rsplit("__", 1)[-1]
            mama_save = name.startswith("mcp__plugin_mama_") and short.startswith("save_")
            if mama_save and str(use.get("id")) not in failed:
                out.setdefault(turn, []).append((short, use.get("input") or {}))
        i += len(called)
    return out


class Replay:
    """One sequence's store and what its sessions saved (decision ids by plan key and session)."""

    def __init__(self, home: Path, project: str) -> None:
        from mama_plugin.config import Config
        from mama_plugin.project import project_key

        home.mkdir(parents=True, exist_ok=True)
        self.config = Config(home, strict=False)
        self.project = project_key(project)  # as the hook finds it from the event's cwd
        self.keys: dict[str, str] = {}
        self.decided: dict[str, list[str]] = {}

    def session(self, step: dict[str, Any]) -> None:
        """Replay one session (a transcript, or its first ``turns`` turns) into the store."""
        from mama_plugin.services.story.autosave import checkpoint_turn
        from mama_plugin.storage import Store
        from mama_plugin.transcript.turns import turn_digests

        path = Path(step["transcript"])
        digests = turn_digests(path)
        if not digests:
            raise ValueError(f"no turns in {path}")
        before = [0, *(len(d.tool_names) for d in digests)]
        saves = tool_saves(path, [d.tool_names[n:] for d, n in zip(digests, before, strict=False)])
        digests = digests[: step.get("turns") or len(digests)]
        actions = {int(t): a for t, a in (step.get("actions") or {}).items()}
        session = str(step["session_id"])
        with Store.open(config=self.config) as store:
            for turn, digest in enumerate(digests, 1):
                for tool, given in saves.get(turn, []):
                    self._tool(store, tool, given, session)
                for action in actions.get(turn, []):
                    self._act(store, action, session)
                checkpoint_turn(
                    store, self.project, session_id=session, digest=digest, cwd=digest.cwd
                )
                time.sleep(TURN_GAP_S)

    def _tool(self, store: Any, tool: str, given: dict[str, Any], session: str) -> None:
        from mama_plugin import save_checkpoint, save_decision

        fields = {**given, "session_id": session}
        if tool == "save_decision":
            saved = save_decision(store, self.project, fields).memory.id
            self.decided.setdefault(session, []).append(saved)
        elif tool == "save_checkpoint":
            save_checkpoint(store, self.project, fields)
        else:
            raise ValueError(f"the replay has no save path for MAMA's {tool}")

    def _act(self, store: Any, action: list[Any], session: str) -> None:
        """A scripted save (``answers_story.json``'s actions), through the save paths."""
        from mama_plugin import save_checkpoint, save_decision
        from mama_plugin.schema import OutcomeInput, parse

        outcomes = _module("mama_plugin.services.saving.outcomes", "mama_plugin.services.outcomes")

        kind = action[0]
        if kind in ("decide", "supersede"):
            fields = {**action[-1], "session_id": session}
            if kind == "supersede":
                fields["supersedes"] = self.keys[action[2]]
            saved = save_decision(store, self.project, fields).memory.id
            self.keys[action[1]] = saved
            self.decided.setdefault(session, []).append(saved)
        elif kind == "outcome":
            given = {**action[2], "memory_id": self.keys[action[1]]}
            outcomes.record_outcome_event(store, parse(OutcomeInput, given))
        elif kind == "checkpoint":
            implements = [self.keys[k] for k in action[2]]
            fields = {**action[1], "implements": implements, "session_id": session}
            save_checkpoint(store, self.project, fields)
        else:
            raise ValueError(f"unknown scripted save {kind!r}")

    def forget(self, sessions: list[str]) -> None:
        """Forget every decision the named sessions saved, as ``mama forget`` does."""
        from mama_plugin.storage import Store

        forgetting = _module(
            "mama_plugin.services.hygiene.forgetting", "mama_plugin.services.forgetting"
        )

        with Store.open(config=self.config) as store:
            for session in sessions:
                for memory_id in self.decided.pop(session, []):
                    forgetting.forget(store, self.config, memory_id)

    def starts(self) -> dict[str, str]:
        """What the SessionStart hook injects now: a new session's start and a compacted one's."""
        from mama_plugin.hooks.session_start import session_start

        out = {}
        for source in ("startup", "compact"):
            event = {"cwd": self.project, "source": source, "hook_event_name": "SessionStart"}
            out[source] = session_start(event, self.config)
        return out


def replay(plan: dict[str, Any]) -> dict[str, Any]:
    """Every sequence of ``plan`` replayed; per step, the two starts told after it."""
    out = []
    for sequence in plan["sequences"]:
        with tempfile.TemporaryDirectory(prefix="mama-story-") as tmp:
            run = Replay(Path(tmp) / "mama", sequence["project"])
            starts = []
            for step in sequence["steps"]:
                if step["kind"] == "forget":
                    run.forget(list(step["sessions"]))
                else:
                    run.session(step)
                starts.append(run.starts())
            out.append({"name": sequence["name"], "starts": starts})
    return {"sequences": out}


if __name__ == "__main__":
    json.dump(replay(json.load(sys.stdin)), sys.stdout)
