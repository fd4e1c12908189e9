#!/usr/bin/env bash
# Builds tools/weight-floor — Leptos and every estimator and i18n entry point the page calls, with
# no interface around them — the way Trunk builds the page (release profile, the same rustflags
# from .cargo/config.toml, wasm-bindgen, wasm-opt -Oz), into target/weight-floor/out, and prints
# its gzipped weight: what no interface, however lean, can go below.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PWD/tests/e2e/node_modules/.bin:$PATH"
out=target/weight-floor/out
cargo build --quiet --release --offline --target wasm32-unknown-unknown -p weight-floor
rm -rf "$out" && mkdir -p "$out"
wasm-bindgen --target web --no-typescript --out-dir "$out" \
  target/wasm32-unknown-unknown/release/weight-floor.wasm
wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-mutable-globals "$out/weight-floor_bg.wasm" -o "$out/weight-floor_bg.wasm"
for f in "$out/weight-floor_bg.wasm" "$out/weight-floor.js"; do
  echo "$(basename "$f") $(stat -c%s "$f") raw, $(gzip -9c "$f" | wc -c) gzipped"
done
