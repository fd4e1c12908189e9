#!/usr/bin/env bash
# Installs what is missing, then runs every test of vramfit: formatting, lints, the estimator's
# and the CLI's tests (including the accuracy targets against the measured runs), the npm package
# under Node, the release site build, and the browser tests of the built site (and of the npm
# package's web build) in Chromium, Firefox ESR and WebKitGTK.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PWD/tests/e2e/node_modules/.bin:$PATH"

./scripts/install-tools.sh

step() { printf '\n== %s\n' "$*"; }

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (native and wasm)"
cargo clippy --workspace --all-targets -- -D warnings
cargo clippy -p vramfit-web --target wasm32-unknown-unknown -- -D warnings
cargo clippy -p vramfit-js --target wasm32-unknown-unknown -- -D warnings
cargo clippy -p vramfit-first-bar --target wasm32-unknown-unknown --features exports -- -D warnings
cargo clippy -p vramfit-snapshot-web --target wasm32-unknown-unknown -- -D warnings
cargo clippy -p vramfit-plan-web --target wasm32-unknown-unknown -- -D warnings

step "cargo test (estimator, CLI, web logic)"
cargo test --workspace

step "accuracy against the measured runs"
cargo build --release -p vramfit --quiet
# the shared yardstick, where ../shared sits beside the clone (CI); the targets themselves are
# asserted by the cargo tests above, against the repository's copy of the runs (data/README.md)
if [ -f ../shared/tools/score-accuracy ]; then
  python3 ../shared/tools/score-accuracy --bin target/release/vramfit | tail -n 1
else
  echo "skipped ../shared/tools/score-accuracy: no ../shared beside this clone (the cargo tests assert the targets)"
fi

step "npm package (wasm-pack) under Node: equal to the CLI"
./scripts/build-js.sh
node --test crates/js/tests/

step "release build of the site"
./scripts/build-site.sh

step "browser tests: Chromium, Firefox ESR, WebKitGTK (node --test, one engine after another)"
node --test --test-concurrency=1 tests/e2e/engines/

printf '\nall tests passed\n'
