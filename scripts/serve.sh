#!/usr/bin/env bash
# Sets up (see setup.sh) and starts the server on the durable embedded store, its data
# in ./klondike-data at the repository root (--data-dir DIR elsewhere, --memory for none).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/klondike-race serve "$@"
