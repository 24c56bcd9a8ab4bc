"""A standard-library MCP stdio server for the minutes before MAMA's environment is ready.

``bin/mama-server`` runs ``python -m mama_plugin.bootstrap.bridge`` under the system Python
when no environment is ready. It starts the bootstrap and answers at once (Claude Code 2.1.197
waits only ~2 s for a plugin's server): ``initialize``, ``ping``, and ``tools/list`` from the
shipped ``tools.json`` (the real server's full static list). ``tools/call`` before the core is
ready answers a hook tool with ``{}`` (hooks stay silent), recording the Stop and prompt
hooks' calls for ``mama catchup`` (:mod:`.pending`), and any other tool with an error that
says nothing was saved. The first ``tools/call`` after the core is ready starts the real
server, replays the client's ``initialize`` to it (its answer is swallowed: the client has
one), and from then on the bridge is a transparent pipe, one thread per direction; the turns
recorded until then are caught up in the background, and again when the session ends.

Newline-delimited JSON-RPC (the MCP stdio transport). A line that is not JSON gets a -32700
error; the bridge never crashes on input. Unknown methods get -32601, which is also what an
MCP client's ``server/discover`` probe needs to fall back to the ``initialize`` handshake.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, BinaryIO

from ..jsonrpc import METHOD_NOT_FOUND, Problem, initialize_result, request, tool_result
from . import paths, pending
from .launcher import HERE, ROOT
from .run import spawn_catchup, spawn_detached

TOOLS_JSON = HERE / "tools.json"
MORE = "more_tools"  # server/catalogue.py's MORE_TOOLS (this module reads no server code)
HANDOVER_TIMEOUT_S = 30.0
BOOTSTRAP_RETRY_S = 60.0
INSTRUCTIONS = (
    "MAMA is preparing its Python environment (first run, about a minute): its memory tools "
    "are not ready yet and answer that they are installing. Nothing is lost: this session's "
    "work is checkpointed from its transcript once the environment is ready."
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def not_ready_text() -> str:
    """What a tool call answers while the core environment is still being built."""
    return (
        "MAMA is installing its Python environment (first run: about a minute for the core; "
        f"progress in {paths.log_path()}). Nothing was saved or looked up by this call. This "
        "session's work will be checkpointed automatically once the environment is ready: carry "
        "on with the task, and try MAMA's tools again later."
    )


class ChildGone(Exception):
    """Raised when the real server stopped reading: the session cannot go on."""


class Bridge:
    """One stdio session: bridge answers first, then (once handed over) a pipe."""

    def __init__(self, stdin: BinaryIO, stdout: BinaryIO, argv: list[str]) -> None:
        self.stdin, self.stdout, self.argv = stdin, stdout, argv
        listing = json.loads(TOOLS_JSON.read_text(encoding="utf-8"))
        # The full static list, as the real server gives it under force_static: every tool but
        # the one that asks for more (server/exposure.py lists it only to a growing list).
        self.tools: list[dict[str, Any]] = [t for t in listing["tools"] if t["name"] != MORE]
        self.hook_tools = frozenset(listing["hook_tools"])
        self.write_lock = threading.Lock()
        self.init_line: bytes | None = None
        self.init_id: Any = None
        self.child: subprocess.Popen[bytes] | None = None
        self.pump: threading.Thread | None = None
        self.closing = False
        self.bootstrap_started = -BOOTSTRAP_RETRY_S

    # -- output ---------------------------------------------------------------------------

    def write(self, line: bytes) -> None:
        """Write one protocol line to the client (both threads may write)."""
        with self.write_lock:
            self.stdout.write(line if line.endswith(b"\n") else line + b"\n")
            self.stdout.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.write(json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode())

    def reply(self, ident: Any, result: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": ident, "result": result})

    def fail(self, ident: Any, code: int, message: str) -> None:
        self.send({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}})

    # -- the session ----------------------------------------------------------------------

    def run(self) -> int:
        """Serve until the client closes stdin; return the exit status."""
        self.start_bootstrap()
        try:
            while line := self.stdin.readline():
                if self.child is not None:
                    self.forward(line)
                else:
                    self.handle(line)
        except ChildGone:
            print("mama: the MAMA server stopped; see its log", file=sys.stderr)
            return 1
        finally:
            self.finish()
        return 0

    def start_bootstrap(self) -> None:
        """Start the bootstrap unless the core is ready (at most once a minute; the lock
        makes a second one exit at once anyway)."""
        now = time.monotonic()
        if now - self.bootstrap_started < BOOTSTRAP_RETRY_S or paths.select_venv() is not None:
            return
        self.bootstrap_started = now
        try:
            process = spawn_detached(sys.executable)
        except OSError as exc:
            print(f"mama: cannot start the bootstrap: {exc}", file=sys.stderr)
            return
        threading.Thread(target=process.wait, daemon=True).start()  # reap it, no zombie

    def handle(self, line: bytes) -> None:
        """Answer one client line while no real server runs."""
        found = request(line)
        if found is None:
            return  # a notification, or a response to nothing the bridge asked
        if isinstance(found, Problem):
            self.fail(found.ident, found.code, found.message)
            return
        ident, method, params = found.ident, found.method, found.params
        if method == "initialize":
            self.init_line, self.init_id = line, ident
            self.reply(ident, initialize_result(params.get("protocolVersion"), INSTRUCTIONS))
        elif method == "ping":
            self.reply(ident, {})
        elif method == "tools/list":
            self.reply(ident, {"tools": self.tools})
        elif method == "tools/call":
            self.call(ident, params, line)
        else:
            self.fail(ident, METHOD_NOT_FOUND, f"Method not found: {method}")

    def call(self, ident: Any, params: dict[str, Any], line: bytes) -> None:
        """A tool call: hand over to the real server when ready, else answer for it."""
        chosen = paths.select_venv()
        if chosen is not None and self.init_line is not None:
            problem = self.hand_over(chosen[0])
            if problem is None:
                self.forward(line)
                self.catch_up()  # the turns this session took before the hand-over
                return
            self.reply(ident, tool_result(problem, error=True))
            return
        self.start_bootstrap()
        if params.get("name") in self.hook_tools:
            self.record(params)
            self.reply(ident, tool_result("{}", error=False))
        else:
            self.reply(ident, tool_result(not_ready_text(), error=True))

    def record(self, params: dict[str, Any]) -> None:
        """Keep a Stop or prompt hook's call for ``mama catchup`` (the hook gets ``{}``)."""
        arguments = params.get("arguments")
        arguments = arguments if isinstance(arguments, dict) else {}
        project_dir = os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()  # as `mama serve`
        problem = pending.record(str(params.get("name")), arguments, project_dir)
        if problem is not None:
            print(f"mama: this turn will not be checkpointed: {problem}", file=sys.stderr)

    def catch_up(self) -> None:
        """Start ``mama catchup`` when the core is ready and recorded turns wait."""
        try:
            process = spawn_catchup()
        except OSError as exc:
            print(f"mama: cannot start the catch-up: {exc}", file=sys.stderr)
            return
        if process is not None:
            threading.Thread(target=process.wait, daemon=True).start()  # reap it, no zombie

    # -- the hand-over --------------------------------------------------------------------

    def hand_over(self, venv: Path) -> str | None:
        """Start the real server and replay ``initialize``; None on success, else why not."""
        command = [str(paths.venv_python(venv)), "-P", "-m", "mama_plugin.cli", "serve", *self.argv]
        # force_static: the client already holds the full static list from tools.json.
        env = {**os.environ, "PYTHONPATH": str(ROOT), "MAMA_DYNAMIC_TOOLS": "force_static"}
        try:
            pipe = subprocess.PIPE
            child = subprocess.Popen(command, stdin=pipe, stdout=pipe, env=env)
        except OSError as exc:
            return f"MAMA's server could not start ({exc}); nothing was saved."
        replied = threading.Event()
        accepted: list[bool] = []
        pump = threading.Thread(target=self.pipe_out, args=(child, replied, accepted), daemon=True)
        pump.start()
        assert child.stdin is not None and self.init_line is not None
        try:
            child.stdin.write(
                self.init_line if self.init_line.endswith(b"\n") else self.init_line + b"\n"
            )
            child.stdin.flush()
            if replied.wait(HANDOVER_TIMEOUT_S) and accepted == [True]:
                child.stdin.write(INITIALIZED)
                child.stdin.flush()
                self.child, self.pump = child, pump
                return None
        except OSError:
            pass
        child.kill()
        child.wait()
        return (
            "MAMA's server did not start (details in "
            f"{paths.log_path().parent / 'server.log'}); nothing was saved."
        )

    def pipe_out(
        self, child: subprocess.Popen[bytes], replied: threading.Event, accepted: list[bool]
    ) -> None:
        """Copy the real server's lines to the client, minus its answer to the replay."""
        assert child.stdout is not None
        try:
            for line in iter(child.stdout.readline, b""):
                answer = None if replied.is_set() else _response(line, self.init_id)
                if answer is not None:
                    accepted.append("result" in answer)
                    replied.set()
                    continue
                self.write(line)
        except OSError:  # the client is gone; stdin's end finishes the session
            return
        finally:
            replied.set()
        if self.child is child and not self.closing:
            # The real server died under a live session: end it so the client sees that.
            print("mama: the MAMA server exited", file=sys.stderr, flush=True)
            os._exit(child.wait() or 1)

    def forward(self, line: bytes) -> None:
        """Pass one client line to the real server unchanged."""
        assert self.child is not None and self.child.stdin is not None
        try:
            self.child.stdin.write(line)
            self.child.stdin.flush()
        except OSError as exc:
            raise ChildGone from exc

    def finish(self) -> None:
        """The client closed stdin: close the real server's, let it finish, then return."""
        self.closing = True
        # A turn recorded just as the core became ready, after the bootstrap's catch-up ran.
        self.catch_up()
        if self.child is None:
            return
        try:
            assert self.child.stdin is not None
            self.child.stdin.close()
        except OSError:
            pass
        try:
            self.child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.child.kill()
            self.child.wait()
        if self.pump is not None:
            self.pump.join(timeout=10)


def _response(line: bytes, ident: Any) -> dict[str, Any] | None:
    """The line as a JSON-RPC response to request ``ident``, else None."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if isinstance(message, dict) and "method" not in message and message.get("id") == ident:
        return message
    return None


def main() -> int:
    """Entry point of ``python -m mama_plugin.bootstrap.bridge``."""
    try:
        return Bridge(sys.stdin.buffer, sys.stdout.buffer, sys.argv[1:]).run()
    except BrokenPipeError:  # the client went away mid-write
        return 0


if __name__ == "__main__":
    sys.exit(main())
