#!/usr/bin/env bash
# Runs a command as on a machine that has only this repository: in a private mount namespace where the
# folders that hold the curated data set on the machines tidepool is developed on are empty (a read-only
# tmpfs mounted over each; nothing outside this command's own namespace sees it): every folder named
# `shared` beside the checkout or beside a folder above it (where CI and the developers' machines keep
# it). The tests must pass so; benches take that data as --data DIR.
#
#   bash scripts/without-shared.sh npm test
#
# Needs root (or CAP_SYS_ADMIN) for unshare; without it, or where neither folder exists, the command
# runs as it is, after a line saying so.
set -euo pipefail
cd "$(dirname "$0")/.."

hidden=()
above="$(dirname "$PWD")"
while [ "$above" != / ]; do
  [ -d "$above/shared" ] && hidden+=("$above/shared")
  above="$(dirname "$above")"
done

if [ ${#hidden[@]} -eq 0 ]; then
  echo "without-shared: no shared data folder on this machine; running: $*"
  exec "$@"
fi

if [ "$(id -u)" -ne 0 ] || ! unshare -m --propagation private true 2>/dev/null; then
  echo "without-shared: cannot make a mount namespace here (needs root); running with ${hidden[*]} visible: $*" >&2
  exec "$@"
fi

echo "without-shared: hiding ${hidden[*]}; running: $*"
# The inner shell mounts an empty read-only tmpfs over each folder, checks that it is empty, then
# becomes the command.
exec unshare -m --propagation private bash -c '
  set -euo pipefail
  n=$1; shift
  for ((i = 0; i < n; i++)); do
    mount -t tmpfs -o ro,size=4k tidepool-without-shared "$1"
    [ -z "$(ls -A "$1")" ] || { echo "without-shared: $1 is still visible" >&2; exit 2; }
    shift
  done
  exec "$@"
' without-shared "${#hidden[@]}" "${hidden[@]}" "$@"
