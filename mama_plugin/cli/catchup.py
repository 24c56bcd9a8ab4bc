"""``mama catchup``: checkpoint the turns sessions took while the environment was being built.

The bridge records the Stop and prompt hook calls it could not serve (see
:mod:`mama_plugin.bootstrap.pending`). This replays them through the Stop hook's own handler
(``server.hook_table``'s ``checkpoint_turn``, its arguments read as the server reads them, on
a ``server.state.State``), so the checkpoint is exactly the one the hook would have written,
read from the session's transcript as it is now.
A session's latest recorded turn is replayed once; one whose checkpoint the running server
already wrote after that turn is left alone. The bootstrap runs this right after the core is
ready; the bridge and the SessionStart hook run it when they find turns waiting.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..bootstrap import paths, pending
from ..config import Config
from ..project import project_key
from .options import command, json_option
from .shared import print_json

MAX_TRIES = 3  # a turn whose replay keeps failing (a broken database) is dropped after this


@contextlib.contextmanager
def _only_one() -> Iterator[bool]:
    """Hold ``DATA/catchup.lock``; yields False when another catch-up holds it."""
    folder = paths.data_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "catchup.lock", "ab") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True


def _latest(entries: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """session id -> kind -> its latest entry."""
    sessions: dict[str, dict[str, dict[str, Any]]] = {}
    for item in entries:
        kinds = sessions.setdefault(item["args"]["session_id"], {})
        if item["kind"] not in kinds or item["at"] >= kinds[item["kind"]]["at"]:
            kinds[item["kind"]] = item
    return sessions


class _Replay:
    """One State per project (opened on first use), the counts, and the turns to retry."""

    def __init__(self, config: Config, db: Path | None) -> None:
        self.config, self.db = config, db
        self.states: dict[str, Any] = {}
        self.done: dict[str, Any] = {"checkpoints": [], "skipped": 0, "failed": 0}
        self.retry: list[dict[str, Any]] = []

    def state(self, project: str) -> Any:
        from ..server.state import State

        if project not in self.states:
            self.states[project] = State(self.config, project, self.db)
        return self.states[project]

    def session(self, session_id: str, kinds: dict[str, dict[str, Any]]) -> None:
        """Replay ``session_id``'s latest turn (with its latest prompt as the request)."""
        from ..server.hook_table import HOOKS

        turn = kinds.get("turn")
        if turn is None:
            return  # a prompt whose turn never ended here: nothing the Stop hook would save
        try:
            state = self.state(project_key(turn["project_dir"] or None))
            newer = [
                m
                for m in state.store.memories.of_session(session_id, type="checkpoint")
                if m.rolling and m.updated_at >= turn["at"]
            ]
            if newer:  # the running server checkpointed this session after that turn
                self.done["skipped"] += 1
                return
            if "prompt" in kinds:
                state.session.prompts[session_id] = kinds["prompt"]["args"]["prompt"]
            stop = HOOKS["checkpoint_turn"]  # read and answered as the running server would
            answer = stop.handler()(state.env(), stop.read(turn["args"]))
        except Exception as exc:  # one bad turn (or a busy store) must not cost the others
            print(f"mama catchup: {session_id}: {type(exc).__name__}: {exc}", file=sys.stderr)
            self.done["failed"] += 1
            self.retry += [{**e, "tries": e.get("tries", 0) + 1} for e in kinds.values()]
            return
        if answer.data.get("checkpoint"):
            self.done["checkpoints"].append(answer.data["checkpoint"])

    def close(self) -> None:
        """Refresh the cliffhangers the checkpoints changed (the next session reads the cache),
        then close every store."""
        from ..services.story import briefing

        for project, state in self.states.items():
            if project in state.session.stale_briefs:
                with contextlib.suppress(Exception):  # the cache is an optimisation
                    briefing.brief(state.store, project, state.config, "startup")
            state.close()


def catch_up(config: Config, db: Path | None = None) -> dict[str, Any]:
    """Replay every waiting turn once; return what was done (see the command's output)."""
    started = time.monotonic()
    replay = _Replay(config, db)
    report: dict[str, Any] = {"sessions": 0, "skipped_lines": 0, "busy": False}
    with _only_one() as mine:
        if not mine:
            report["busy"] = True
            return {**report, **replay.done, "seconds": 0.0}
        try:
            # Claim, replay, delete, until nothing waits: turns recorded meanwhile go next.
            while (claimed := pending.claim()) is not None:
                entries, skipped = pending.read(claimed)
                report["skipped_lines"] += skipped
                for session_id, kinds in _latest(entries).items():
                    report["sessions"] += 1
                    replay.session(session_id, kinds)
                claimed.unlink()
                if replay.retry:
                    again = [e for e in replay.retry if e["tries"] < MAX_TRIES]
                    replay.retry = []
                    if again:
                        pending.append(again)
                    break  # retried by the next catch-up, not in a loop here
        finally:
            replay.close()
    return {**report, **replay.done, "seconds": round(time.monotonic() - started, 3)}


@command("catchup", "checkpoint the turns sessions took while MAMA's environment was built")
@json_option()
def cmd_catchup(args: argparse.Namespace) -> int:
    """Replay the recorded turns and say what was saved."""
    # Its own composition root: run unattended, a typo in config.json must not lose the turns.
    done = catch_up(Config(strict=False), Path(args.db) if args.db else None)
    status = 1 if done["failed"] else 0  # the failed turns are kept for the next catch-up
    if args.json:
        print_json(done)
        return status
    if done["busy"]:
        print("mama catchup: another catch-up is running")
        return 0
    saved = len(done["checkpoints"])
    print(
        f"mama catchup: {done['sessions']} session(s), {saved} checkpoint(s) saved, "
        f"{done['skipped']} already saved by the server, {done['failed']} failed, "
        f"{done['skipped_lines']} unreadable line(s) skipped, in {done['seconds']:.2f} s"
    )
    return status
