#!/usr/bin/env bash
# Makes sure the Chromium used by the dashboard's browser test is installed: Debian's `chromium`
# package (/usr/bin/chromium, or $CHROMIUM_PATH if set), driven by playwright-core.
# Quiet when it is present; prints one line when it installs it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt-install.sh"

CHROMIUM=${CHROMIUM_PATH:-/usr/bin/chromium}

[ -x "$CHROMIUM" ] && exit 0

fail() { echo "ensure-chromium: $*" >&2; exit 1; }

# A custom path is the caller's to provide: installing the package would not put it there.
[ "$CHROMIUM" = /usr/bin/chromium ] \
  || fail "CHROMIUM_PATH=$CHROMIUM is not an executable; point it at a Chromium binary or unset it"

apt_install ensure-chromium chromium \
  || fail "install Chromium by hand (binary at $CHROMIUM, or set CHROMIUM_PATH)"
[ -x "$CHROMIUM" ] || fail "installed chromium but $CHROMIUM is still missing"
echo "ensure-chromium: installed chromium"
