"""EmbeddingGemma-300M in MAMA's models folder: fetched, extracted, converted once.

``embedding_model = embeddinggemma`` loads ``$MAMA_HOME/models/embeddinggemma-300m.gguf``
(:func:`model_path`). ``mama models`` builds it (:func:`ensure`): the 25 wheels downloaded
into ``models/embeddinggemma-wheels`` (:mod:`.gemma_parts`, ~1.1 GB from PyPI), the model's
files extracted and checked, the GGUF written (:mod:`.gemma_convert`), then the wheels and
files deleted: the GGUF (334 MB) is what stays. Loading never downloads: without the GGUF,
:func:`model_path` raises EmbeddingError naming ``mama models``.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config import Config
from . import gemma_parts
from .errors import EmbeddingError, PackageMissing
from .files import exclusive_lock, models_dir, remove_stale_temporaries
from .ggufmeta import is_model_file
from .kinds import Provided

FILENAME = "embeddinggemma-300m.gguf"
TEMPORARY = ".embeddinggemma-build-"  # the extracted files' folder while a build runs


def model_path(config: Config) -> Path:
    """The built GGUF; EmbeddingError naming the command that builds it when it is not."""
    path = models_dir(config) / FILENAME
    if not is_model_file(path):
        raise EmbeddingError(
            f"embedding_model is embeddinggemma, which is not built yet: run "
            f"`{gemma_parts.FETCH_HINT}` (downloads ~1.1 GB from PyPI once, keeps 334 MB) or "
            "`mama config set embedding_model minilm`"
        )
    return path


def ensure(config: Config, *, say: Callable[[str], None] = lambda _: None) -> tuple[Path, bool]:
    """Build the GGUF unless it is there (of several processes one builds); return its path
    and whether this call built it. EmbeddingError says what failed and what to do."""
    folder = models_dir(config)
    dest = folder / FILENAME
    if is_model_file(dest):
        return dest, False
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with exclusive_lock(folder / (FILENAME + ".lock")):
            if is_model_file(dest):
                return dest, False
            for stale in folder.glob(f"{TEMPORARY}*"):  # a build killed here left it (~2 GB)
                shutil.rmtree(stale, ignore_errors=True)
            remove_stale_temporaries(dest)  # and the GGUF it was writing
            wheels = folder / "embeddinggemma-wheels"
            gemma_parts.fetch(wheels, say=say)
            with tempfile.TemporaryDirectory(prefix=TEMPORARY, dir=folder) as tmp:
                say("extracting and checking the model's files")
                gemma_parts.extract(wheels, Path(tmp))
                say(f"converting to {dest}")
                from .gemma_convert import convert

                convert(Path(tmp), _gemma3_vocabulary(config), dest)
            shutil.rmtree(wheels, ignore_errors=True)
    except OSError as exc:
        raise EmbeddingError(
            f"cannot build {gemma_parts.MODEL_NAME} in {folder}: {exc}; it needs ~3 GB free "
            "while it builds"
        ) from exc
    return dest, True


def _gemma3_vocabulary(config: Config) -> Path:
    from .packaged import gemma3_270m

    try:
        return gemma3_270m(config)
    except PackageMissing as exc:
        raise EmbeddingError(
            f"{gemma_parts.MODEL_NAME} reads Gemma 3's vocabulary from the bundled Gemma 3 270M: "
            f"{exc}"
        ) from exc


def ready(config: Config) -> bool:
    """Whether ``mama models`` has built its GGUF."""
    return is_model_file(models_dir(config) / FILENAME)


def provide(config: Config, say: Callable[[str], None] = lambda _: None) -> Provided:
    """The GGUF, fetched and built now if it is not (:func:`ensure`)."""
    from .resolve import describe

    path, built = ensure(config, say=say)
    described = describe(path, "built" if built else "cache")
    how = "just built from its PyPI wheels" if built else "from the model cache"
    return Provided(described.name, path, described.source, described.dim, how)


def open_model(config: Config, *, threads: int, hold: bool = False) -> Any:
    """The built GGUF loaded by llama.cpp (EmbeddingError naming ``mama models`` until then)."""
    from .embedder import Embedder

    return Embedder(gguf(config), threads=threads, hold=hold)


def gguf(config: Config) -> Path:
    """The GGUF llama.cpp loads (:func:`model_path`)."""
    return model_path(config)
