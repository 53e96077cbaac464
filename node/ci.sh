#!/usr/bin/env bash
# The Node package's checks, run by .ci/run after the Python step (whose
# release wheel build compiled the library in release with the same
# features, in the same target dir: built here too, it is reused):
#   1. npm ci (the napi-rs CLI, TypeScript, the official MCP clients 2.x and
#      1.x, the AI SDK 7, Mastra 1; pinned in package-lock.json);
#   2. the native module in release (build.mjs: cargo, then native.d.ts
#      checked against the declarations napi-derive wrote from the Rust side);
#   3. node --test: parity with the CLI built by `cargo test --all-features`,
#      errors, live servers (tests/servers), the examples (the AI SDK's and
#      Mastra's on Node 22: tests/conformance's, which .ci/run installs);
#   4. tsc over the examples and the declarations.
# `node/ci.sh build` does 1 and 2, `node/ci.sh test` 3 and 4 (.ci/run builds
# while the Rust tests run); no argument: all four. Arguments after the phase go
# to build.mjs (scripts/dist: `--target x86_64-unknown-linux-gnu --strip`, with its linker).
set -euo pipefail
phase="${1:-all}"
shift || true
cd "$(dirname "$0")"
root="$(cd .. && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"

step() { echo "ci(node): $1 ($SECONDS s)"; }

if [ "$phase" != test ]; then
# `node/ci.sh deps` does this step alone (.ci/run: early, beside clippy); a
# later build skips it while package-lock.json is what was installed.
if ! cmp -s package-lock.json node_modules/.ci-package-lock.json; then
    step "npm ci"
    npm ci --no-audit --no-fund --loglevel=error >/dev/null
    cp package-lock.json node_modules/.ci-package-lock.json
fi
[ "$phase" = deps ] && exit 0

step "native module (node build.mjs${*:+ $*}; release unless --debug)"
# -v: the crates cargo compiles, to tell whether the library was reused.
MCP_PREAMBLE_BUILD_VERBOSE=1 node build.mjs "$@" 2>"$CARGO_TARGET_DIR/node-build.log" \
    || { cat "$CARGO_TARGET_DIR/node-build.log" >&2; exit 1; }
if grep -q "Compiling mcp-preamble v" "$CARGO_TARGET_DIR/node-build.log"; then
    # Expected when python/ci.sh did not run first; after it, a dependency's
    # features differ between python/ and node/ (see node/Cargo.toml).
    echo "ci(node): the library was compiled in release here, not reused from the Python wheel's build" >&2
fi

fi
[ "$phase" = build ] && exit 0

step "node --test"
# A missing CLI, npm package or test server fails instead of skipping.
MCP_PREAMBLE_REQUIRE_NODE=1 node --test test/*.test.mjs

step "tsc"
npx tsc -p tsconfig.json
npx tsc -p tsconfig.decl.json
step "done"
