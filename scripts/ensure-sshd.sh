#!/usr/bin/env bash
# Makes sure Debian's OpenSSH server and client are installed: the ssh node provider's test runs an
# sshd inside test hosts (its own configuration and keys in a temporary directory; the package's
# service is never started). Quiet when present; prints one line when it installs something.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt-install.sh"

fail() { echo "ensure-sshd: $*" >&2; exit 1; }

missing=()
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
command -v ssh >/dev/null 2>&1 || missing+=(openssh-client)
command -v ssh-keygen >/dev/null 2>&1 || missing+=(openssh-client)
[ ${#missing[@]} -eq 0 ] && exit 0
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
apt_install ensure-sshd "${missing[@]}" || fail "install ${missing[*]} by hand (apt-get install ${missing[*]})"
[ -x /usr/sbin/sshd ] && command -v ssh >/dev/null 2>&1 || fail "installed ${missing[*]} but sshd or ssh is still missing"
echo "ensure-sshd: installed ${missing[*]}"
