#!/usr/bin/env bash
# Makes sure native addons can be built from source: isolated-vm 5 (the service's sandbox on Node 20,
# a devDependency here) has no prebuilt binary that npm can fetch, so `npm ci` compiles it with
# node-gyp, which needs python3, make and a C++ compiler. Installs Debian's packages when one is missing;
# quiet when everything is present, one line when it installs something. (Node's headers come with the
# Node that builds: npm's nodedir, or the unpacked release in scripts/node-versions.sh.)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt-install.sh"

missing=()
command -v python3 >/dev/null 2>&1 || missing+=(python3)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
[ ${#missing[@]} -eq 0 ] && exit 0

apt_install ensure-toolchain "${missing[@]}" \
  || { echo "ensure-toolchain: install python3, make and g++ by hand (node-gyp builds isolated-vm 5 with them)" >&2; exit 1; }
echo "ensure-toolchain: installed ${missing[*]}"
