#!/usr/bin/env bash
# Installs what is missing, then runs every test of vramfit: formatting, lints, the estimator's
# and the CLI's tests (including the accuracy targets against the measured runs).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

./scripts/install-tools.sh

step() { printf '\n== %s\n' "$*"; }

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings

step "cargo test (estimator, CLI)"
cargo test --workspace

step "accuracy against the measured runs"
cargo build --release -p vramfit --quiet
python3 ../shared/tools/score-accuracy --bin target/release/vramfit | tail -n 1

printf '\nall tests passed\n'
