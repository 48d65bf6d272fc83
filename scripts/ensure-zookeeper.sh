#!/usr/bin/env bash
# Makes sure the ZooKeeper server used by the integration tests is installed:
# Debian's `zookeeper` package (jars in /usr/share/java) and a `java` to run it.
# Quiet when everything is present; prints one line when it installs something.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt-install.sh"

ZK_JAR=/usr/share/java/zookeeper.jar

missing=()
[ -f "$ZK_JAR" ] || missing+=(zookeeper)
command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
[ ${#missing[@]} -eq 0 ] && exit 0

fail() { echo "ensure-zookeeper: $*" >&2; exit 1; }

apt_install ensure-zookeeper "${missing[@]}" \
  || fail "install ZooKeeper 3.8 (jar at $ZK_JAR) and a JRE by hand"
[ -f "$ZK_JAR" ] || fail "installed ${missing[*]} but $ZK_JAR is still missing"
command -v java >/dev/null 2>&1 || fail "installed ${missing[*]} but java is still not on PATH"
echo "ensure-zookeeper: installed ${missing[*]}"
