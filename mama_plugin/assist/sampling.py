"""Grammar-constrained sampling on llama.cpp that checks the drawn token, not the vocabulary.

``Llama.create_completion(grammar=...)`` puts the grammar in the sampler chain ahead of
top-k, so every token is matched against the whole vocabulary (262K entries for Gemma 3) and
generation runs at a third of its unconstrained speed. :class:`GrammarSampler` samples the
way llama.cpp's own ``common_sampler`` does: the plain chain (repeat penalty, top-k, top-p,
min-p, temperature, seeded draw) picks a token, the grammar checks that one token, and only
when it refuses is the draw repeated with the grammar applied to every candidate first.
Either way the token returned is one the grammar accepts.

Memory safety: the native samplers live in ``llama_cpp._internals.LlamaSampler`` chains that
free them when closed (the grammar is checked for NULL before a chain takes it); the candidate
buffer is a numpy array owned by the sampler for as long as llama.cpp may read it. A token is
passed to ``llama_sampler_accept`` only after the grammar accepted it in its current state:
llama.cpp aborts the process when its grammar is made to accept a token it refuses.

``llama_cpp`` and ``numpy`` are imported by the functions that need them; all of this runs
under :class:`~mama_plugin.assist.runtime.Assistant`'s lock (llama.cpp is not thread-safe).
"""

from __future__ import annotations

import ctypes
import math
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .gate import HookGate

# The chain create_completion builds from its defaults; only the knobs MAMA sets vary.
TOP_K = 40
MIN_P = 0.05
TYPICAL_P = 1.0


def prompt_ids(llm: Any, text: str) -> list[int]:
    """The prompt's tokens as ``create_completion`` forms them: BOS, then the text.

    Special tokens written in the text (a chat template's) are parsed; BOS is added when the
    model asks for one and the text does not already start with it (a chat template may).
    """
    tokens: list[int] = llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
    bos = int(llm.token_bos())
    if llm._model.add_bos_token() and bos >= 0 and tokens[:1] != [bos]:
        tokens.insert(0, bos)
    return tokens


def feed_prompt(llm: Any, tokens: list[int], deadline: float, gate: HookGate | None = None) -> bool:
    """Evaluate ``tokens`` as the prompt, reusing the cached prefix of the previous call.

    The last prompt token is always evaluated again, so the logits are this prompt's. The
    deadline is checked between batches, where a running hook call is also waited for
    (``gate``); returns False when the deadline passed first (the tokens evaluated so far stay
    cached, consistently with ``llm.input_ids``).
    """
    import numpy as np

    if not tokens:
        raise ValueError("an empty prompt leaves nothing to continue")
    limit = min(int(llm.n_tokens), len(tokens) - 1)
    keep = 0
    if limit > 0:
        differ = np.flatnonzero(llm.input_ids[:limit] != np.asarray(tokens[:limit]))
        keep = int(differ[0]) if differ.size else limit
    # A cache that cannot drop its tail (recurrent models) is cleared instead.
    if keep and not llm._ctx.kv_cache_seq_rm(-1, keep, -1):
        keep = 0
    llm.n_tokens = keep  # Llama.eval drops every cached position from n_tokens on
    for start in range(keep, len(tokens), llm.n_batch):
        if time.monotonic() >= deadline or (gate is not None and not gate.wait_clear(deadline)):
            return False
        llm.eval(tokens[start : start + llm.n_batch])
    return True


class GrammarSampler:
    """One completion's sampling: the plain chain, the grammar and a candidate buffer.

    ``temperature`` must be positive (the chain ends in a seeded random draw). Use it as a
    context manager, or call :meth:`close`, to free the native samplers. Raises ``ValueError``
    when llama.cpp cannot parse the grammar.
    """

    def __init__(
        self,
        llm: Any,
        grammar: Any,
        *,
        temperature: float,
        top_p: float,
        repeat_penalty: float,
        seed: int,
    ) -> None:
        import numpy as np
        from llama_cpp import llama_cpp as native
        from llama_cpp._internals import LlamaSampler

        if temperature <= 0:
            raise ValueError("GrammarSampler needs a positive temperature")
        self._native = native
        self._llm = llm
        self._vocab = llm._model.vocab
        self._n_vocab = int(llm.n_vocab())
        self.resampled = 0  # tokens the grammar refused, drawn again with it applied first
        self._chain = LlamaSampler()
        self._grammar = LlamaSampler()  # a chain holding only the grammar, which it frees
        try:
            self._chain.add_penalties(
                n_vocab=self._n_vocab,
                penalty_last_n=llm.last_n_tokens_size,
                penalty_repeat=repeat_penalty,
                penalty_freq=0.0,
                penalty_present=0.0,
            )
            self._chain.add_top_k(TOP_K)
            self._chain.add_typical(TYPICAL_P, 1)
            self._chain.add_top_p(top_p, 1)
            self._chain.add_min_p(MIN_P, 1)
            self._chain.add_temp(temperature)
            self._chain.add_dist(seed)
            pointer = native.llama_sampler_init_grammar(
                self._vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
            )
            if not pointer:
                raise ValueError("llama.cpp could not parse the grammar")
            native.llama_sampler_chain_add(self._grammar.sampler, pointer)
        except BaseException:
            self.close()
            raise
        # Every candidate of the vocabulary, laid out as llama_token_data (id, logit, p).
        layout = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)
        if layout.itemsize != ctypes.sizeof(native.llama_token_data):
            self.close()
            raise ValueError("llama_token_data does not have the expected layout")
        self._np = np
        self._ids = np.arange(self._n_vocab, dtype=np.intc)
        self._zeros = np.zeros(self._n_vocab, dtype=np.single)
        self._data = np.zeros(self._n_vocab, dtype=layout)
        self._all: Any = native.llama_token_data_array()
        self._one_data: Any = (native.llama_token_data * 1)()
        self._one: Any = native.llama_token_data_array()

    def __enter__(self) -> GrammarSampler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Free the native samplers (idempotent)."""
        self._chain.close()
        self._grammar.close()

    def sample(self) -> int | None:
        """A token for the last evaluated position that the grammar accepts, not yet accepted.

        None when the grammar accepts no token at all (a dead end: nothing may follow).
        """
        token = self._draw(grammar_first=False)
        if self.allowed(token):
            return token
        self.resampled += 1
        token = self._draw(grammar_first=True)
        # Re-checked: with every candidate refused, the draw may return one of them anyway.
        return token if self.allowed(token) else None

    def allowed(self, token: int) -> bool:
        """Whether the grammar, in its current state, accepts ``token`` next."""
        one = self._one_data
        one[0].id, one[0].logit, one[0].p = token, 1.0, 0.0
        self._one.data = ctypes.cast(one, ctypes.POINTER(self._native.llama_token_data))
        self._one.size, self._one.selected, self._one.sorted = 1, -1, False
        self._native.llama_sampler_apply(self._grammar.sampler, ctypes.byref(self._one))
        return self._one.size == 1 and math.isfinite(self._one.data[0].logit)

    def accept(self, token: int) -> None:
        """Record ``token`` as generated: it advances the grammar and the repeat penalty.

        Only for a token :meth:`sample` returned (the grammar accepted it); never for an
        end-of-generation token.
        """
        self._native.llama_sampler_accept(self._grammar.sampler, token)
        self._native.llama_sampler_accept(self._chain.sampler, token)

    def is_end(self, token: int) -> bool:
        """Whether ``token`` ends generation (end of turn, end of text)."""
        return bool(self._native.llama_vocab_is_eog(self._vocab, token))

    def _draw(self, *, grammar_first: bool) -> int:
        native = self._native
        logits = native.llama_get_logits_ith(self._llm.ctx, -1)
        if not logits:
            raise RuntimeError("llama.cpp has no logits for the last token")
        data = self._data  # field by field: a third of the time of one structured copy
        data["id"] = self._ids
        data["logit"] = self._np.ctypeslib.as_array(logits, shape=(self._n_vocab,))
        data["p"] = self._zeros
        # Samplers may shrink the array or point it elsewhere: set every field each time.
        array = self._all
        array.data = data.ctypes.data_as(ctypes.POINTER(native.llama_token_data))
        array.size, array.selected, array.sorted = self._n_vocab, -1, False
        if grammar_first:
            native.llama_sampler_apply(self._grammar.sampler, ctypes.byref(array))
        native.llama_sampler_apply(self._chain.sampler, ctypes.byref(array))
        if not 0 <= array.selected < array.size:
            raise RuntimeError(f"the sampler chain selected no token ({array.selected})")
        return int(array.data[array.selected].id)


class Pieces:
    """Detokenizes generated tokens; special tokens render as nothing, like ``create_completion``.

    Unlike ``Llama.detokenize`` (a fixed 32-byte buffer per token) long pieces come out whole,
    as the grammar saw them.
    """

    def __init__(self, llm: Any) -> None:
        from llama_cpp import llama_cpp as native

        self._native = native
        self._vocab = llm._model.vocab
        self._cache: dict[int, bytes] = {}

    def text(self, tokens: list[int]) -> str:
        """The text of ``tokens``; incomplete UTF-8 at the end is dropped."""
        return b"".join(self._piece(t) for t in tokens).decode("utf-8", "ignore")

    def _piece(self, token: int) -> bytes:
        piece = self._cache.get(token)
        if piece is None:
            piece, size = b"", 64
            for _ in range(2):
                buffer = ctypes.create_string_buffer(size)
                n = int(
                    self._native.llama_token_to_piece(self._vocab, token, buffer, size, 0, False)
                )
                if n >= 0:
                    piece = buffer.raw[: min(n, size)]
                    break
                size = -n  # the piece is longer: llama.cpp says how many bytes it needs
            self._cache[token] = piece
        return piece
