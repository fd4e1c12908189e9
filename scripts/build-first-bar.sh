#!/usr/bin/env bash
# Called by scripts/post-build.py (Trunk's post_build hook) before it lists the files for the
# service worker, so they include what this writes: builds crates/first-bar — the small module that paints the first bar before the page's module
# arrives — into first-bar/ of Trunk's staging dir, by wasm-pack with the pinned wasm-bindgen and
# binaryen's wasm-opt already on PATH (scripts/build-site.sh puts them there).
set -euo pipefail
cd "$(dirname "$0")/.."
staging="${TRUNK_STAGING_DIR:?build-first-bar: TRUNK_STAGING_DIR is not set}"
out="$staging/first-bar"
# its "failed to get wasm-pack version" warning is harmless (it asks GitHub for news)
wasm-pack --log-level error build crates/first-bar --release --target web \
  --out-dir "$(realpath -m "$out")" --out-name vramfit_first_bar --no-pack -- --features exports
# the site needs the module and its glue, not the type declarations nor wasm-pack's .gitignore
rm -f "$out"/*.d.ts "$out/.gitignore"
printf '[build-first-bar] %s bytes of wasm (%s gzipped)\n' \
  "$(wc -c < "$out/vramfit_first_bar_bg.wasm")" "$(gzip -9 -c "$out/vramfit_first_bar_bg.wasm" | wc -c)"
