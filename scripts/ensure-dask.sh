#!/usr/bin/env bash
# Makes sure Dask.distributed, the peer measured by bench/peers/dask.ts, is installed: Debian's
# `python3-distributed` package, which installs for Debian's interpreter /usr/bin/python3 (not
# whatever `python3` is first on PATH, e.g. a pyenv build).
# Quiet when it is present; prints one line when it installs it.
# Exit codes: 0 present or installed, 3 could not install (no apt-get, not root and no usable sudo,
# apt-get failed), 1 anything else.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt-install.sh"

PY=/usr/bin/python3
PKG=python3-distributed
HOW="install it with: sudo apt-get install -y $PKG (Debian/Ubuntu; it is used through $PY)"

have() { [ -x "$PY" ] && "$PY" -c 'import distributed' >/dev/null 2>&1; }
have && exit 0

if ! apt_install ensure-dask "$PKG"; then
  echo "ensure-dask: could not install $PKG — $HOW" >&2
  exit 3
fi
have || { echo "ensure-dask: installed $PKG but '$PY -c \"import distributed\"' still fails" >&2; exit 1; }
echo "ensure-dask: installed $PKG"
