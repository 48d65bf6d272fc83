#!/usr/bin/env bash
# Makes sure the test hosts (test/support/hosts.ts: network namespaces joined by a bridge, nftables
# rules for partitions and packet loss) can be created: Debian's iproute2 (`ip netns`, `ip link`)
# and nftables (`nft`), util-linux's `unshare`, and root. Quiet when everything is present; prints
# one line when it installs something; exits 1 with the reason when test hosts cannot exist here.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt-install.sh"

fail() { echo "ensure-netns: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "test hosts need root (network and mount namespaces); run the tests as root"

missing=()
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
command -v nft >/dev/null 2>&1 || missing+=(nftables)
command -v unshare >/dev/null 2>&1 || missing+=(util-linux)
if [ ${#missing[@]} -gt 0 ]; then
  apt_install ensure-netns "${missing[@]}" || fail "install ${missing[*]} by hand (apt-get install ${missing[*]})"
  for tool in ip nft unshare; do command -v "$tool" >/dev/null 2>&1 || fail "installed ${missing[*]} but $tool is still not on PATH"; done
  echo "ensure-netns: installed ${missing[*]}"
fi
