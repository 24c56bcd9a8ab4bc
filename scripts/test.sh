#!/usr/bin/env bash
# Set up (with the dev tools) and run every check: lint, types, the test suite.
# Extra arguments go to pytest. "No tests ran" (pytest exit 5) is a failure, never a pass.
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh --dev || exit $?
.venv/bin/ruff check . || exit $?
.venv/bin/ruff format --check . || exit $?
.venv/bin/mypy || exit $?
.venv/bin/python -m pytest "$@"
status=$?
if [ "$status" -eq 5 ]; then
  echo "test.sh: pytest collected no tests — treating that as a failure" >&2
  exit 1
fi
exit "$status"
