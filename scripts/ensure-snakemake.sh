#!/usr/bin/env bash
# Makes sure Snakemake, the workflow peer measured by bench/workflow-peers.ts, is installed: Debian's
# `snakemake` package (it runs on Debian's interpreter /usr/bin/python3).
# Quiet when it is present; prints one line when it installs it.
# Exit codes: 0 present or installed, 3 could not install (no apt-get, not root and no usable sudo,
# apt-get failed), 1 anything else.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt-install.sh"

PKG=snakemake
HOW="install it with: sudo apt-get install -y $PKG (Debian/Ubuntu)"

have() { command -v snakemake >/dev/null 2>&1 && snakemake --version >/dev/null 2>&1; }
have && exit 0

if ! apt_install ensure-snakemake "$PKG"; then
  echo "ensure-snakemake: could not install $PKG — $HOW" >&2
  exit 3
fi
have || { echo "ensure-snakemake: installed $PKG but 'snakemake --version' still fails" >&2; exit 1; }
echo "ensure-snakemake: installed $PKG"
