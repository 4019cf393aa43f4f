#!/usr/bin/env bash
# Runs the whole suite on Node 22 LTS, beside the machine's own Node, without disturbing it.
#
# Node 22 comes from the npm registry (the `node-linux-<arch>` package carries the official binary
# and headers), installed into a cache directory. The suite runs in a copy of this tree: its
# node_modules are hard links to this one's, except better-sqlite3, which is copied and built from
# source for Node 22's ABI against the package's headers (its prebuilt download needs the
# internet). This tree's build and node_modules are left as they are.
#
# Usage: scripts/test-node22.sh              the whole suite (`npm test`)
#        scripts/test-node22.sh FILE...      those test files only (after `npm run build`)
# Environment: NODE22_VERSION (default 22: the newest 22.x), NODE22_CACHE (default
# ${XDG_CACHE_HOME:-~/.cache}/barge-node22), KEEP_NODE22_TREE=1 keeps the copy for a look.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="${NODE22_VERSION:-22}"
cache="${NODE22_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/barge-node22}"

case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "test-node22: no Node package for $(uname -m)" >&2; exit 1 ;;
esac
package="node-linux-$arch"

# 1. Node 22 into the cache (once; again when NODE22_VERSION asks for another).
nodedir="$cache/node_modules/$package"
if [ ! -x "$nodedir/bin/node" ] || [[ "$("$nodedir/bin/node" --version)" != v${version}* ]]; then
  echo "test-node22: installing $package@$version into $cache"
  mkdir -p "$cache"
  npm install --prefix "$cache" --no-save --no-audit --no-fund --no-package-lock "$package@$version" >/dev/null
fi
node22="$nodedir/bin/node"
echo "test-node22: $("$node22" --version) at $node22"

# 2. A copy of the tree (tracked and untracked files, not ignored ones), node_modules hard-linked.
work="$(mktemp -d "${TMPDIR:-/tmp}/barge-node22-XXXXXX")"
cleanup() { if [ "${KEEP_NODE22_TREE:-}" = 1 ]; then echo "test-node22: kept $work"; else rm -rf "$work"; fi; }
trap cleanup EXIT
(cd "$root" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$work" 2>/dev/null) || {
  # Not a git checkout: copy everything but the build, the data and node_modules.
  tar -C "$root" --exclude=./node_modules --exclude=./dist --exclude=./data -cf - . | tar -C "$work" -xf -
}
cp -al "$root/node_modules" "$work/node_modules"

# 3. better-sqlite3 copied for real (a build must not write through hard links into this tree's
# copy) and built from source for Node 22's ABI.
rm -rf "$work/node_modules/better-sqlite3"
cp -a "$root/node_modules/better-sqlite3" "$work/node_modules/better-sqlite3"
rm -rf "$work/node_modules/better-sqlite3/build"
# The build is kept in the cache, by better-sqlite3's version and Node's ABI, for the next run.
bsq_version="$("$node22" -p "require('$root/node_modules/better-sqlite3/package.json').version")"
built="$cache/better-sqlite3-$bsq_version-abi$("$node22" -p process.versions.modules).node"
release="$work/node_modules/better-sqlite3/build/Release"
if [ -f "$built" ]; then
  mkdir -p "$release" && cp "$built" "$release/better_sqlite3.node"
else
  echo "test-node22: building better-sqlite3 $bsq_version for Node 22 (a minute or two)"
  gyp="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
  (
    cd "$work/node_modules/better-sqlite3"
    PATH="$nodedir/bin:$PATH" "$node22" "$gyp" rebuild --release --nodedir="$nodedir" -j 2 >"$work/better-sqlite3-build.log" 2>&1
  ) || { tail -40 "$work/better-sqlite3-build.log" >&2; exit 1; }
  cp "$release/better_sqlite3.node" "$built.tmp" && mv "$built.tmp" "$built"
fi
PATH="$nodedir/bin:$PATH" "$node22" -e "new (require('$work/node_modules/better-sqlite3'))(':memory:').prepare('select 1').get()"

# 4. The suite, on Node 22 (npm's own script runs on the first node in PATH: this one).
cd "$work"
export PATH="$nodedir/bin:$PATH"
export npm_config_nodedir="$nodedir"
if [ $# -eq 0 ]; then
  echo "test-node22: npm test on $(node --version)"
  npm test
else
  echo "test-node22: $* on $(node --version)"
  npm run build
  node --import tsx --test "$@"
fi
