#!/usr/bin/env bash
# Installs what klondike-race needs on a fresh Debian machine: system packages when
# missing (redis-server and chromium for the tests), a venv in .venv, the project.
# Usage: scripts/setup.sh [--dev]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--dev" ]; then
  need=()
  command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
  [ -x /usr/bin/chromium ] || need+=(chromium)
  if [ ${#need[@]} -gt 0 ]; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
  fi
  extra='.[dev]'
else
  extra='.'
fi
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -e "$extra" --config-settings editable_mode=compat
