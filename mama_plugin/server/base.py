"""The contract between the server and its tool handlers: what a handler gets and returns."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..config import Config
from ..embeddings.protocol import EmbeddingModel
from ..services.story.shown import Sessions
from ..storage import Store
from ..transcript import Reader
from .queues import Handoff

if TYPE_CHECKING:  # annotations only: the hook lane imports this module without pydantic
    from pydantic import BaseModel


@dataclass
class Session:
    """What the server learns about the Claude Code session it serves, from the hook calls."""

    id: str = ""
    readers: dict[str, Reader] = field(default_factory=dict)  # transcript path -> reader
    # session id -> the user's latest prompt: on a session's first turn the Stop hook fires
    # before Claude Code has written the transcript file, so the request comes from here.
    prompts: dict[str, str] = field(default_factory=dict)
    # Projects whose cliffhanger cache a write made stale, while no background task takes them.
    stale_briefs: set[str] = field(default_factory=set)
    # session id -> its transcript, as the hooks report it (the drafter reads it for evidence).
    transcripts: dict[str, str] = field(default_factory=dict)
    # Memories saved while no background link suggester takes them, oldest first.
    suggest_queue: list[str] = field(default_factory=list)
    # Projects with a memory saved here while no background indexer takes the wake-up.
    embed_wanted: set[str] = field(default_factory=set)
    # What each Claude Code session served here was shown: nothing is injected twice.
    shown: Sessions = field(default_factory=Sessions)
    # Sessions whose rolling checkpoint's lines wait for the model, while no task takes them.
    lines_wanted: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.briefs = Handoff(self.stale_briefs)  # consumed by server.background
        self.suggestions = Handoff(self.suggest_queue)
        self.embeds = Handoff(self.embed_wanted)  # wakes server.background's indexer
        self.lines = Handoff(self.lines_wanted)  # server.background's checkpoint lines
        self._readers_guard = threading.Lock()

    def brief_stale(self, project: str) -> None:
        """Have ``project``'s cliffhanger re-rendered off the request path (after a write).

        The write may have queued a memory for its vector (the Stop hook's checkpoint): the
        indexer is woken too, as by :meth:`embed_soon`.
        """
        self.briefs.put(project)
        self.embeds.put(project)

    def suggest_later(self, memory_id: str) -> None:
        """Have link candidates judged for a saved memory off the request path."""
        self.suggestions.put(memory_id)

    def lines_later(self, session_id: str) -> None:
        """Have the model retell a session's checkpoint lines off the hook's path (when the
        profile in force earned it: :mod:`mama_plugin.assist.stopped`)."""
        self.lines.put(session_id)

    def embed_soon(self, project: str) -> None:
        """Wake the background indexer: a memory of ``project`` waits for its vector."""
        self.embeds.put(project)

    def reader(self, path: str) -> Reader:
        """The incremental reader of ``path`` (one per transcript, kept for the session)."""
        with self._readers_guard:
            if path not in self.readers:
                if len(self.readers) > 8:  # a long-lived server outlives many sessions
                    self.readers.clear()
                self.readers[path] = Reader(path)
            return self.readers[path]


@dataclass
class Env:
    """What a handler works with: the store, the project, the embedder once it is loaded."""

    store: Store
    project: str
    embedder: EmbeddingModel | None = None
    observe: Callable[[str], tuple[str | None, list[str]]] = field(
        default=lambda prompt: (None, [])
    )
    config: Config = field(default_factory=lambda: Config(strict=False))
    session: Session = field(default_factory=Session)
    # Gives the local generative model when a handler asks for it (the server's
    # assist.jobs.ModelJobs): the hook tools never draft, so they never pay for making one.
    assistant_of: Callable[[], Any] = field(default=lambda: None)
    # The client's id for the call being answered (Claude Code's tool_use id, from the request's
    # _meta), so a handler can find the call in the session's transcript; "" when not given.
    call_id: str = ""
    # Gives the embedder, waiting up to the given seconds while it still loads (None when
    # there is none); a handler without it uses ``embedder`` as it is.
    embedder_within: Callable[[float], EmbeddingModel | None] | None = None
    # Gives a model that reads Korean (multilingual-e5) for a prompt the embedder cannot read,
    # made on first use; None when there is none.
    reader_of: Callable[[], EmbeddingModel | None] = field(default=lambda: None)
    # Lists every tool for the rest of the session (more_tools); returns the names added.
    list_every_tool: Callable[[], list[str]] = field(default=lambda: [])

    @property
    def assistant(self) -> Any:
        """The local generative model's runtime, or None."""
        return self.assistant_of()


@dataclass
class Answer:
    """A tool's result: text to read once, and the same facts as structured data."""

    text: str
    data: dict[str, Any]


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


@dataclass(frozen=True)
class Tool:
    """One tool: its contract, its handler and when it is listed (declared by :mod:`.declare`)."""

    name: str
    description: str
    model: type[BaseModel]
    handler: Callable[[Env, Any], Answer]
    read_only: bool
    hidden: bool = False
    replaced_by: str | None = None  # v1.0 names: served, unlisted, with a deprecation notice
    slow: bool = False  # may run a model for seconds: runs in a worker thread
    destructive: bool = False  # deletes or overwrites what was saved (MCP's destructiveHint)
    # Called with draft=true: validated by this model and answered by this handler (slow).
    drafted: tuple[type[BaseModel], Callable[[Env, Any], Answer]] | None = None
    core: bool = False  # listed in every session (catalogue.CORE)
    # The conversational contexts that list it (catalogue.CONTEXT_TOOLS; declare.CONTEXTS).
    contexts: tuple[str, ...] = ()
    # Its listed schema grows a parameter per frequent relationship word (.word_params).
    word_parameters: bool = False
