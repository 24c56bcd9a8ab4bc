"""The model each card names, behind one interface: is it in place, provide it, open it.

A card's ``module`` (:mod:`.cards`) is a module of this package with three functions:
``ready(config)`` (its files are in place: nothing to build or extract), ``provide(config,
say)`` (build or extract them if needed; what ``mama models`` prints, a :class:`Provided`)
and ``open_model(config, threads=, hold=)`` (an embedder, :mod:`.protocol`); a model llama.cpp
runs also names its file, ``gguf(config)``. The server's
preload, ``mama models`` and :func:`~.resolve.open_embedder` ask here instead of each naming
every model. Its module is imported on first use: a card's facts cost no import.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

from ..config import Config
from .cards import BY_CHOICE, Card


@dataclass(frozen=True)
class Provided:
    """A model in place: its name, where its files are, where they came from, its dimension."""

    name: str
    path: Path
    source: str  # config, cache, built or package
    dim: int | None
    how: str  # where it came from, in words ("from the model cache")


class Kind(Protocol):
    """What a card's module offers (module-level functions)."""

    def ready(self, config: Config) -> bool: ...

    def provide(self, config: Config, say: Callable[[str], None]) -> Provided: ...

    def open_model(self, config: Config, *, threads: int, hold: bool) -> Any: ...


def chosen(config: Config) -> Card | None:
    """The card of the configured built-in model; None when ``embedding_model_path`` names a
    GGUF of the user's own (opened as the default's kind opens a file)."""
    if config.settings.embedding_model_path:
        return None
    return BY_CHOICE[config.settings.embedding_model]


def kind_of(card: Card | None) -> Kind:
    """The module that provides ``card``'s model (the default's for a user's own file)."""
    module = card.module if card is not None else "minilm"
    return cast(Kind, importlib.import_module(f"{__package__}.{module}"))
