#!/usr/bin/env bash
# Installs what klondike-race needs on a fresh Debian machine: system packages when
# missing (python3-venv; redis-server and chromium for the tests), a venv in .venv,
# the project. The command is then .venv/bin/klondike-race. With --dev, also the
# capacity benchmark's Colyseus baseline, where node and npm are (see below).
# Usage: scripts/setup.sh [--dev]
#
# apt is waited for, not raced: another apt (unattended-upgrades on a fresh
# machine, most often) holds its lock for minutes, and giving up at once made the
# README's first command fail on exactly the machines it is written for.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
LOCK_WAIT=600 # seconds to wait for another apt or dpkg to finish

wait_for_apt() {
  local waited=0
  command -v fuser >/dev/null 2>&1 || return 0 # no psmisc: apt's own Lock::Timeout waits
  while fuser /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock >/dev/null 2>&1; do
    [ "$waited" -eq 0 ] && echo "setup: waiting for another apt to finish (up to ${LOCK_WAIT}s)…" >&2
    if [ "$waited" -ge "$LOCK_WAIT" ]; then
      echo "setup: apt is still busy after ${LOCK_WAIT}s; run this again when it is done" >&2
      exit 1
    fi
    sleep 5
    waited=$((waited + 5))
  done
}

apt_install() {
  wait_for_apt
  $sudo apt-get -o DPkg::Lock::Timeout="$LOCK_WAIT" update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout="$LOCK_WAIT" \
    install -y -qq "$@" >/dev/null
}

need=()
if [ "${1:-}" = "--dev" ]; then
  command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
  [ -x /usr/bin/chromium ] || need+=(chromium)
  extra='.[dev,bench]'
else
  extra='.'
fi
# Debian ships python3 without venv (and ensurepip): try it, install it if it fails.
if [ ! -x .venv/bin/python ]; then
  probe=$(mktemp -d)
  if ! python3 -m venv "$probe/v" >/dev/null 2>&1; then
    version=$(python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    need+=(python3-venv "python${version}-venv")
  fi
  rm -rf "$probe"
fi
if [ ${#need[@]} -gt 0 ]; then
  apt_install "${need[@]}"
fi
if [ ! -x .venv/bin/python ]; then
  rm -rf .venv # a venv left half made by a python3 without venv
  python3 -m venv .venv
fi
.venv/bin/pip install -q --disable-pip-version-check -e "$extra" --config-settings editable_mode=compat
# The capacity benchmark's Colyseus baseline (bench/colyseus, pinned in its
# package-lock.json): only where node and npm already are, and never fatal: without
# them, or offline (bounded by timeout), bench/capacity.py skips it with a note. An
# install cut short is removed whole: half a node_modules looks installed to node
# (its package.json resolves) and then fails to start.
if [ "${1:-}" = "--dev" ] && command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  if ! timeout 120 npm install --prefix bench/colyseus --no-audit --no-fund --loglevel=error \
    --fetch-retries=1 --fetch-timeout=20000 >/dev/null 2>&1; then
    rm -rf bench/colyseus/node_modules
    echo "setup: Colyseus not installed (bench/colyseus); bench/capacity.py will skip it" >&2
  fi
fi
echo "setup: done; the command is .venv/bin/klondike-race (or . .venv/bin/activate, then klondike-race)"
