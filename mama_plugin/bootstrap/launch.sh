# Shared by bin/mama-hook, bin/mama-server and bin/mama (sourced, POSIX sh; ROOT is set).
# The same rules as mama_plugin/bootstrap/paths.py: keep the two in step.

# Creates folders (and their missing parents) private, 0700 from their first moment: memory is
# the user's alone. Plain `mkdir -p` under umask 022 made $MAMA_HOME 0755 until a Python process
# narrowed it, and `mkdir -p -m 700` sets the last folder's mode only, not its parents'.
mama_mkdir() {
  (umask 077 && mkdir -p "$@")
}

MAMA_LOGS=${MAMA_HOME:-$HOME/.mama}/logs
# Claude Code exports CLAUDE_PLUGIN_DATA to hooks and servers, but not to its Bash tool or to a
# terminal: the launchers record it here, so that `bin/mama` run from either uses the
# environment already built there instead of building a second one.
MAMA_DATA_RECORD=${MAMA_HOME:-$HOME/.mama}/plugin-data
if [ -n "${CLAUDE_PLUGIN_DATA:-}" ]; then
  MAMA_DATA=$CLAUDE_PLUGIN_DATA
  recorded=
  [ -r "$MAMA_DATA_RECORD" ] && read -r recorded <"$MAMA_DATA_RECORD"
  if [ "$recorded" != "$MAMA_DATA" ] && mama_mkdir "${MAMA_DATA_RECORD%/*}" 2>/dev/null; then
    (umask 077 && printf '%s\n' "$MAMA_DATA" >"$MAMA_DATA_RECORD.$$") 2>/dev/null &&
      mv -f "$MAMA_DATA_RECORD.$$" "$MAMA_DATA_RECORD" 2>/dev/null
  fi
else
  recorded=
  [ -r "$MAMA_DATA_RECORD" ] && read -r recorded <"$MAMA_DATA_RECORD"
  if [ -n "$recorded" ] && [ -d "$recorded" ]; then
    MAMA_DATA=$recorded
  else
    MAMA_DATA=${MAMA_HOME:-$HOME/.mama}/plugin-env
  fi
fi
MAMA_REQS=$ROOT/mama_plugin/bootstrap

# Sets VENV and VENV_KIND (env, dev, data), or leaves VENV empty while nothing is ready.
mama_select_venv() {
  VENV=
  VENV_KIND=
  if [ -n "${MAMA_VENV:-}" ]; then
    VENV=$MAMA_VENV VENV_KIND=env
  elif [ -x "$ROOT/.venv/bin/python" ]; then
    VENV=$ROOT/.venv VENV_KIND=dev
  elif [ -x "$MAMA_DATA/venv/bin/python" ] &&
    cmp -s "$MAMA_DATA/venv/mama-core.txt" "$MAMA_REQS/requirements-core.txt"; then
    VENV=$MAMA_DATA/venv VENV_KIND=data
  fi
}

# Sets PY to the first Python >= 3.11 of MAMA_PYTHON, python3.13, python3.12, python3.11, python3.
mama_find_python() {
  for PY in "${MAMA_PYTHON:-}" python3.13 python3.12 python3.11 python3; do
    if [ -n "$PY" ] && "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
      </dev/null >/dev/null 2>&1; then
      return 0
    fi
  done
  PY=
  return 1
}

# Starts `python -m mama_plugin.bootstrap` with $1, detached: own session, no pipes held
# open (a hook's caller waits for its pipes to close), so the caller returns at once.
mama_start_bootstrap() {
  mama_mkdir "$MAMA_DATA" 2>/dev/null
  if command -v setsid >/dev/null 2>&1; then
    PYTHONPATH=$ROOT setsid "$1" -P -m mama_plugin.bootstrap </dev/null >/dev/null 2>&1 &
  else
    PYTHONPATH=$ROOT nohup "$1" -P -m mama_plugin.bootstrap </dev/null >/dev/null 2>&1 &
  fi
}

# With the data venv ready, starts a bootstrap for the local-model runtime when it is
# missing (the bootstrap itself honours the lock and the 24 h pause after a failure).
mama_kick_local() {
  if [ "$VENV_KIND" = data ] && [ "${MAMA_BOOTSTRAP_LOCAL:-1}" != 0 ] &&
    ! cmp -s "$VENV/mama-local.txt" "$MAMA_REQS/requirements-local.txt"; then
    mama_start_bootstrap "$VENV/bin/python"
  fi
}

# With an environment ready, starts `mama catchup` detached when a bridge recorded turns while
# it was being built (see mama_plugin/bootstrap/pending.py; the catch-up runs one at a time).
mama_kick_catchup() {
  if [ -s "$MAMA_DATA/pending-turns.jsonl" ] || [ -e "$MAMA_DATA/pending-turns.claimed.jsonl" ]; then
    mama_mkdir "$MAMA_LOGS" 2>/dev/null
    (
      umask 077 # the log, when this creates it, private
      if command -v setsid >/dev/null 2>&1; then
        PYTHONPATH=$ROOT setsid "$VENV/bin/python" -P -m mama_plugin.cli catchup </dev/null >>"$MAMA_LOGS/bootstrap.log" 2>&1 &
      else
        PYTHONPATH=$ROOT nohup "$VENV/bin/python" -P -m mama_plugin.cli catchup </dev/null >>"$MAMA_LOGS/bootstrap.log" 2>&1 &
      fi
    )
  fi
}

mama_no_python_message() {
  printf '%s\n' "MAMA needs Python 3.11 or newer and found none (tried \$MAMA_PYTHON, python3.13, python3.12, python3.11, python3). Install one, or set MAMA_PYTHON to its path (e.g. export MAMA_PYTHON=/usr/local/bin/python3.12) where Claude Code starts."
}
