"""A BERT WordPiece tokenizer as llama.cpp's GGUF holds it: tokens, types, special ids, flags.

Reads the Hugging Face ``tokenizer.json`` / ``tokenizer_config.json`` / ``config.json`` dicts
and returns plain lists and dicts for the GGUF writer (:mod:`.convert`). Standard library only.
"""

from __future__ import annotations

from typing import Any

from .errors import EmbeddingError

# gguf TokenType values (gguf-py constants.TokenType).
_NORMAL, _USER_DEFINED, _CONTROL, _UNUSED = 1, 4, 3, 5


def phantom_vocab(tokens: list[str], toktypes: list[int]) -> list[str]:
    """Rewrite WordPiece tokens the way llama.cpp's WPM tokenizer looks them up.

    A word-initial piece gets a leading U+2581, a ``##`` continuation loses its prefix and
    control tokens (``[CLS]``, ``[SEP]``, …) stay as they are.
    """
    out = []
    for token, toktype in zip(tokens, toktypes, strict=True):
        if toktype == _CONTROL:
            out.append(token)
        elif token.startswith("##"):
            out.append(token[2:])
        else:
            out.append("\u2581" + token)
    return out


def wordpiece_vocab(tokenizer: dict[str, Any], vocab_size: int) -> tuple[list[str], list[int]]:
    """Return the token strings and gguf token types for ids ``0 .. vocab_size - 1``.

    Added tokens marked special are CONTROL, other added tokens USER_DEFINED, vocabulary
    entries NORMAL; ids without a token become ``[PAD{id}]`` UNUSED placeholders.
    """
    model = tokenizer.get("model", {})
    if model.get("type") != "WordPiece":
        raise EmbeddingError(
            f"the embedding model's tokenizer is {model.get('type')!r}, not WordPiece; "
            "only BERT WordPiece models can be converted"
        )
    by_id: dict[int, str] = {int(i): tok for tok, i in model["vocab"].items()}
    added: dict[str, bool] = {}
    for entry in tokenizer.get("added_tokens", []):
        by_id[int(entry["id"])] = entry["content"]
        added[entry["content"]] = bool(entry.get("special"))
    if by_id and max(by_id) >= vocab_size:
        raise EmbeddingError(f"token id {max(by_id)} exceeds the model's vocab_size {vocab_size}")
    tokens: list[str] = []
    toktypes: list[int] = []
    for i in range(vocab_size):
        token = by_id.get(i)
        if token is None:
            tokens.append(f"[PAD{i}]")
            toktypes.append(_UNUSED)
            continue
        tokens.append(token)
        if token in added:
            toktypes.append(_CONTROL if added[token] else _USER_DEFINED)
        else:
            toktypes.append(_NORMAL)
    return tokens, toktypes


def special_tokens(
    tokenizer: dict[str, Any],
    tokenizer_config: dict[str, Any],
    config: dict[str, Any],
    n_vocab: int,
) -> tuple[dict[str, int], dict[str, bool]]:
    """Return special token ids (bos, eos, unk, sep, pad, mask) and the add_bos/eos/sep flags.

    Follows gguf-py's ``SpecialVocab`` for a BERT tokenizer: names come from
    ``tokenizer_config.json`` (``[CLS]`` stands in for a missing BOS, ``[SEP]`` for EOS) and are
    looked up among the added tokens, ``config.json``'s ``*_token_id`` fill the gaps, and the
    flags are read off the ``TemplateProcessing`` post-processor.
    """
    names: dict[str, str] = {}
    for typ in ("bos", "eos", "unk", "sep", "pad", "cls", "mask"):
        entry = tokenizer_config.get(f"{typ}_token")
        if isinstance(entry, dict):
            entry = entry.get("content")
        if isinstance(entry, str):
            names[typ] = entry
    if "bos" not in names and "cls" in names:
        names["bos"] = names["cls"]
    if "eos" not in names and "sep" in names:
        names["eos"] = names["sep"]
    added_ids = {t["content"]: int(t["id"]) for t in tokenizer.get("added_tokens", [])}
    ids: dict[str, int] = {}
    # gguf has no CLS key: llama.cpp's BERT tokenizer uses the BOS id as [CLS].
    for typ in ("bos", "eos", "unk", "sep", "pad", "mask"):
        token_id = added_ids.get(names.get(typ, ""))
        if token_id is None:
            fallback = config.get(f"{typ}_token_id")
            token_id = fallback if isinstance(fallback, int) else None
        if token_id is not None and 0 <= token_id < n_vocab:
            ids[typ] = token_id
    return ids, _add_flags(tokenizer, names)


def _add_flags(tokenizer: dict[str, Any], names: dict[str, str]) -> dict[str, bool]:
    flags: dict[str, bool] = {}
    processor = tokenizer.get("post_processor") or {}
    if processor.get("type") != "TemplateProcessing":
        return flags

    def special(step: dict[str, Any]) -> str | None:
        token = step.get("SpecialToken", {}).get("id")
        return token if isinstance(token, str) else None

    single = processor.get("single", [])
    first = special(single[0]) if len(single) > 1 else None
    last = special(single[-1]) if len(single) > 1 else None
    if first is not None:
        flags["bos"] = first in (names.get("bos"), names.get("cls"))
    if last is not None:
        flags["eos"] = last == names.get("eos")
    pair = list(processor.get("pair", []))
    if pair and first is not None and special(pair[0]) == first:
        pair = pair[1:]
    if pair and last is not None and special(pair[-1]) == last:
        pair = pair[:-1]
    if len(pair) >= 3 and pair[0].get("Sequence", {}).get("id") == "A":
        middle = pair[1:-1]
        separators = (names.get("sep"), names.get("eos"))
        add_sep = special(middle[0]) in separators and last is None
        if len(middle) == 2:
            add_sep = add_sep or special(middle[1]) in separators
        flags["sep"] = add_sep
    return flags
