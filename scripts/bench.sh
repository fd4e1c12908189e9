#!/usr/bin/env bash
# Measures vramfit: builds the release site, times the estimator natively and in headless
# Chromium, weighs the page, and times the first bar, slider input → repaint and memory over
# 1,000 inputs, and weighs the floor under the page (tools/weight-floor). Prints a table and writes target/bench.json. Not a test: numbers, for the
# README's Performance section.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PWD/tests/e2e/node_modules/.bin:$PATH"
./scripts/install-tools.sh
./scripts/build-site.sh >/dev/null
./scripts/build-js.sh >/dev/null
mkdir -p target
cargo run --quiet --release -p estimator --example bench -- target/bench-native.json
./scripts/weight-floor.sh >/dev/null
node tests/e2e/bench.mjs target/bench-native.json target/weight-floor/out
