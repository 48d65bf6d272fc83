#!/usr/bin/env bash
# Makes sure Dask.distributed, the peer measured by bench/peers/dask.ts, is installed: Debian's
# `python3-distributed` package, which installs for Debian's interpreter /usr/bin/python3 (not
# whatever `python3` is first on PATH, e.g. a pyenv build).
# Quiet when it is present; prints one line when it installs it.
# Exit codes: 0 present or installed, 3 could not install (no apt-get, not root and no usable sudo,
# apt-get failed), 1 anything else.
set -euo pipefail

PY=/usr/bin/python3
PKG=python3-distributed
HOW="install it with: sudo apt-get install -y $PKG (Debian/Ubuntu; it is used through $PY)"

have() { [ -x "$PY" ] && "$PY" -c 'import distributed' >/dev/null 2>&1; }
have && exit 0

cannot() { echo "ensure-dask: could not install $PKG: $* — $HOW" >&2; exit 3; }

command -v apt-get >/dev/null 2>&1 || cannot "apt-get is not available"

# Root installs directly; anyone else needs sudo. `sudo -n` without a terminal,
# so a benchmark run fails fast instead of hanging on a password prompt.
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || cannot "not root and sudo is not available"
  if [ -t 0 ]; then SUDO=(sudo); else SUDO=(sudo -n); fi
fi

# apt's chatter goes to a log that is shown only when something fails.
log=$(mktemp "${TMPDIR:-/tmp}/ensure-dask.XXXXXX")
trap 'rm -f "$log"' EXIT
if ! { "${SUDO[@]}" apt-get update \
       && "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y --no-install-recommends "$PKG"; } >"$log" 2>&1; then
  tail -n 20 "$log" >&2
  cannot "apt-get failed (output above)"
fi

have || { echo "ensure-dask: installed $PKG but '$PY -c \"import distributed\"' still fails" >&2; exit 1; }
echo "ensure-dask: installed $PKG"
