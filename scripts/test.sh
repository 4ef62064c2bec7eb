#!/usr/bin/env bash
# Sets up (see setup.sh) and runs every test: lint, format, types, then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy --strict protocol server client bench
exec .venv/bin/pytest -q "$@"
