# Shared by scripts/ensure-*.sh: installs Debian packages with apt-get, as root or through sudo.
#   apt_install NAME PACKAGE...   → 0 installed; 3 not possible here (no apt-get, not root and no
#                                   sudo); 1 apt-get failed (its last lines on stderr).
# A message naming NAME goes to stderr on failure. `sudo -n` without a terminal, so that test and
# benchmark runs fail fast instead of hanging on a password prompt.
apt_install() {
  local name=$1; shift
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "$name: apt-get is not available to install $*" >&2
    return 3
  fi
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "$name: not root and sudo is not available to install $*" >&2
      return 3
    fi
    if [ -t 0 ]; then sudo=(sudo); else sudo=(sudo -n); fi
  fi
  # apt's chatter goes to a log that is shown only when something fails.
  local log
  log=$(mktemp "${TMPDIR:-/tmp}/$name.XXXXXX")
  if ! { "${sudo[@]}" apt-get update \
         && "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
              apt-get install -y --no-install-recommends "$@"; } >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    rm -f "$log"
    echo "$name: apt-get could not install $* (output above)" >&2
    return 1
  fi
  rm -f "$log"
  return 0
}
