#!/usr/bin/env bash
# Usage: build-worker.sh NAME — builds crates/NAME-web, a module the page runs in a Web Worker
# when it is first needed (snapshot: a dropped snapshot read or vramfit's run exported; plan: the
# plan view), into NAME/ of Trunk's staging dir, with its worker.js, by wasm-pack with the pinned
# wasm-bindgen and binaryen's wasm-opt already on PATH (scripts/build-site.sh puts them there).
# Called by scripts/post-build.py (Trunk's post_build hook) before it lists the files for the
# service worker, so they include what this writes.
set -euo pipefail
cd "$(dirname "$0")/.."
name="${1:?usage: build-worker.sh NAME (crates/NAME-web)}"
staging="${TRUNK_STAGING_DIR:?build-worker: TRUNK_STAGING_DIR is not set}"
out="$staging/$name"
module="vramfit_${name}_web"
# no-modules: a classic worker's importScripts, which every engine runs
wasm-pack --log-level error build "crates/$name-web" --release --target no-modules \
  --out-dir "$(realpath -m "$out")" --out-name "$module" --no-pack
rm -f "$out"/*.d.ts "$out/.gitignore"
cp "crates/$name-web/worker.js" "$out/worker.js"
printf '[build-worker %s] %s bytes of wasm (%s gzipped)\n' "$name" \
  "$(wc -c < "$out/${module}_bg.wasm")" "$(gzip -9 -c "$out/${module}_bg.wasm" | wc -c)"
