#!/usr/bin/env bash
# Makes sure the ZooKeeper server used by the integration tests is installed:
# Debian's `zookeeper` package (jars in /usr/share/java) and a `java` to run it.
# Quiet when everything is present; prints one line when it installs something.
set -euo pipefail

ZK_JAR=/usr/share/java/zookeeper.jar

missing=()
[ -f "$ZK_JAR" ] || missing+=(zookeeper)
command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
[ ${#missing[@]} -eq 0 ] && exit 0

fail() { echo "ensure-zookeeper: $*" >&2; exit 1; }

command -v apt-get >/dev/null 2>&1 \
  || fail "missing ${missing[*]} and apt-get is not available; install ZooKeeper 3.8 (jar at $ZK_JAR) and a JRE by hand"

# Root installs directly; anyone else needs sudo. `sudo -n` without a terminal,
# so a test run fails fast instead of hanging on a password prompt.
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || fail "missing ${missing[*]}: not root and sudo is not available"
  if [ -t 0 ]; then SUDO=(sudo); else SUDO=(sudo -n); fi
fi

# apt's chatter goes to a log that is shown only when something fails.
log=$(mktemp "${TMPDIR:-/tmp}/ensure-zookeeper.XXXXXX")
trap 'rm -f "$log"' EXIT
if ! { "${SUDO[@]}" apt-get update \
       && "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  tail -n 20 "$log" >&2
  fail "could not install ${missing[*]} with apt-get (output above)"
fi

[ -f "$ZK_JAR" ] || fail "installed ${missing[*]} but $ZK_JAR is still missing"
command -v java >/dev/null 2>&1 || fail "installed ${missing[*]} but java is still not on PATH"
echo "ensure-zookeeper: installed ${missing[*]}"
