#!/usr/bin/env bash
# Makes sure the Chromium used by the dashboard's browser test is installed: Debian's `chromium`
# package (/usr/bin/chromium, or $CHROMIUM_PATH if set), driven by playwright-core.
# Quiet when it is present; prints one line when it installs it.
set -euo pipefail

CHROMIUM=${CHROMIUM_PATH:-/usr/bin/chromium}

[ -x "$CHROMIUM" ] && exit 0

fail() { echo "ensure-chromium: $*" >&2; exit 1; }

# A custom path is the caller's to provide: installing the package would not put it there.
[ "$CHROMIUM" = /usr/bin/chromium ] \
  || fail "CHROMIUM_PATH=$CHROMIUM is not an executable; point it at a Chromium binary or unset it"

command -v apt-get >/dev/null 2>&1 \
  || fail "chromium is missing and apt-get is not available; install Chromium by hand (binary at $CHROMIUM, or set CHROMIUM_PATH)"

# Root installs directly; anyone else needs sudo. `sudo -n` without a terminal,
# so a test run fails fast instead of hanging on a password prompt.
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || fail "chromium is missing: not root and sudo is not available"
  if [ -t 0 ]; then SUDO=(sudo); else SUDO=(sudo -n); fi
fi

# apt's chatter goes to a log that is shown only when something fails.
log=$(mktemp "${TMPDIR:-/tmp}/ensure-chromium.XXXXXX")
trap 'rm -f "$log"' EXIT
if ! { "${SUDO[@]}" apt-get update \
       && "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y --no-install-recommends chromium; } >"$log" 2>&1; then
  tail -n 20 "$log" >&2
  fail "could not install chromium with apt-get (output above)"
fi

[ -x "$CHROMIUM" ] || fail "installed chromium but $CHROMIUM is still missing"
echo "ensure-chromium: installed chromium"
