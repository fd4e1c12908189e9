#!/usr/bin/env bash
# Builds the static site into dist/ (release wasm, wasm-opt -Oz), offline: every tool is pinned
# and already installed by install-tools.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PWD/tests/e2e/node_modules/.bin:$PATH"
cargo fetch --quiet
trunk build --release --offline "$@"
# .br and .gz beside each file, for hosts that serve precompressed files (after the post-build
# hook, so the service worker's precache list holds only the files themselves)
node scripts/precompress.mjs dist
