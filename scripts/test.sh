#!/usr/bin/env bash
# Sets up (see setup.sh) and runs every test: lint, format, types, then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy --strict protocol server client bench
# Test files run side by side (pytest-xdist), one file to a worker so that a
# module's server and browser are started once: most tests wait on sockets,
# processes and timers, so four workers keep two cores busy.
exec .venv/bin/pytest -q -n 4 --dist loadfile "$@"
