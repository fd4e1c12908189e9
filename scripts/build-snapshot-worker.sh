#!/usr/bin/env bash
# Called by scripts/post-build.py (Trunk's post_build hook) before it lists the files for the
# service worker, so they include what this writes: builds crates/snapshot-web — the snapshot
# reader the page loads in a Web Worker when a snapshot is dropped or asked for — into snapshot/
# of Trunk's staging dir, with its worker.js, by wasm-pack with the pinned wasm-bindgen and
# binaryen's wasm-opt already on PATH (scripts/build-site.sh puts them there).
set -euo pipefail
cd "$(dirname "$0")/.."
staging="${TRUNK_STAGING_DIR:?build-snapshot-worker: TRUNK_STAGING_DIR is not set}"
out="$staging/snapshot"
# no-modules: a classic worker's importScripts, which every engine runs
wasm-pack --log-level error build crates/snapshot-web --release --target no-modules \
  --out-dir "$(realpath -m "$out")" --out-name vramfit_snapshot_web --no-pack
rm -f "$out"/*.d.ts "$out/.gitignore"
cp crates/snapshot-web/worker.js "$out/worker.js"
printf '[build-snapshot-worker] %s bytes of wasm (%s gzipped)\n' \
  "$(wc -c < "$out/vramfit_snapshot_web_bg.wasm")" "$(gzip -9 -c "$out/vramfit_snapshot_web_bg.wasm" | wc -c)"
