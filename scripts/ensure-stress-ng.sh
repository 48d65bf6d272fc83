#!/usr/bin/env bash
# Makes sure Debian's `stress-ng` (the CPU hog bench/iterative.ts runs beside one node process) is
# installed. Quiet when it is present; prints one line when it installs it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt-install.sh"

command -v stress-ng >/dev/null 2>&1 && exit 0
apt_install ensure-stress-ng stress-ng || { echo "ensure-stress-ng: install stress-ng by hand (apt-get install stress-ng)" >&2; exit 1; }
command -v stress-ng >/dev/null 2>&1 || { echo "ensure-stress-ng: installed stress-ng but it is still not on PATH" >&2; exit 1; }
echo "ensure-stress-ng: installed stress-ng"
