#!/usr/bin/env bash
# Sets up (see setup.sh) and starts the server on the in-memory store.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/klondike-race serve "$@"
